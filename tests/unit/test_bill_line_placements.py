"""Where a bill line that is not a GPU node-hour goes (sql/intermediate/int_bill_line_placements.sql), on
given rows: tagged lines by ServiceCategory, untagged ones shared, tax, credits, unused commitment to the
team of the pool it covered, an instance of no known node unattributed, and node lines left out."""

from datetime import date, datetime
from decimal import Decimal

from pipelines.lib.config import OrgConfig
from tests.support.sql_steps import given, rows_of, warehouse

DAY = date(2026, 11, 2)
H0 = datetime(2026, 11, 2, 0)


def _line(key, *, category="Usage", service=None, tags=None, resource_type=None, status=None, commitment=None):
    return {"day": DAY, "line_key": key, "quarantined": key.startswith("q"), "hour_ts": H0,
            "effective_cost": Decimal("1.5"), "billed_cost": Decimal("1.5"), "billing_currency": "USD",
            "charge_category": category, "service_category": service, "resource_id": None,
            "resource_type": resource_type, "commitment_discount_id": commitment,
            "commitment_discount_status": status, "tags": tags}


def test_each_kind_of_line_is_placed():
    con = warehouse()
    given(con, "intermediate.int_bill_line_hours", [
        _line("node", service="Compute", tags='{"node": "n1"}', resource_type="instance"),
        _line("storage", service="Storage", tags='{"project": "p1"}'),
        _line("network", service="Networking", tags='{"user:project": "p2"}'),
        _line("cpu", service="Compute", tags='{"Project": "p1"}', resource_type="instance"),
        _line("support", service="Management and Governance", tags="{}"),
        _line("tax", category="Tax"),
        _line("credit", category="Credit"),
        _line("credit_p2", category="Credit", tags='{"project": "p2"}'),
        _line("unused", service="Compute", status="Unused", commitment="sp-1"),
        _line("unknown_instance", service="Compute", tags='{"node": "ghost"}', resource_type="instance"),
        _line("q1"),
    ])
    given(con, "intermediate.int_node_hours", [
        {"day": DAY, "hostname": "n1", "hour_ts": H0, "pool_team": "infra", "line_keys": ["node", "sp-covered"]}])
    # the commitment covered node n1's hours, whose pool team is infra
    con.execute("INSERT INTO intermediate.int_bill_line_hours SELECT * REPLACE ('sp-covered' AS line_key, "
                "'sp-1' AS commitment_discount_id, 'Used' AS commitment_discount_status) "
                "FROM intermediate.int_bill_line_hours WHERE line_key = 'node'")
    cfg = OrgConfig.model_validate({"teams": {"ml": {"projects": ["p1"]}}})
    rows = rows_of(con, "intermediate/int_bill_line_placements", {"day": DAY, **cfg.sql_params()}, "line_key")
    placed = {r["line_key"]: (r["placement"], r["direct_team"], r["direct_project"], r["is_direct"]) for r in rows}
    assert placed == {
        "storage": ("storage", "ml", "p1", True),
        "network": ("network", "p2", "p2", True),           # no team for p2: the project is its own team
        "cpu": ("compute_other", "ml", "p1", True),
        "support": ("shared", None, None, False),
        "tax": ("tax", None, None, False),
        "credit": ("credit", None, None, False),
        "credit_p2": ("credit", "p2", "p2", True),
        "unused": ("unused_commitment", "infra", "_unallocated", True),
        "unknown_instance": ("unattributed", "_unallocated", "_unallocated", True),
        "q1": ("unattributed", "_unallocated", "_unallocated", True),
    }   # the node lines ("node", "sp-covered") are node-hours: not placed here


def test_a_new_line_category_is_its_declaration_and_its_rule(monkeypatch):
    # declared here alone: tagged database lines get a category of their own, allocated by their tag,
    # before the catch-all `other`; no SQL names it
    import models.ledger_categories as ledger_categories
    import pipelines.lib.warehouse.reference as reference

    databases = ledger_categories.Category("databases", "Databases", "#2b6cb0", False, False,
                                           "Database bill lines tagged with the project.", allocation="tag")
    rules = list(ledger_categories.LINE_RULES)
    at = next(i for i, r in enumerate(rules) if r.category == "other")
    rules.insert(at, ledger_categories.LineRule("databases", project_tagged=True, service_category="Databases"))
    categories = (*ledger_categories.CATEGORIES, databases)
    for module in (ledger_categories, reference):
        monkeypatch.setattr(module, "CATEGORIES", categories)
        monkeypatch.setattr(module, "LINE_RULES", tuple(rules))
    con = warehouse()
    given(con, "intermediate.int_bill_line_hours", [
        _line("db", service="Databases", tags='{"project": "p1"}'),
        _line("db_untagged", service="Databases", tags="{}"),
        _line("mq", service="Integration", tags='{"project": "p1"}')])
    given(con, "intermediate.int_node_hours", [
        {"day": DAY, "hostname": "n1", "hour_ts": H0, "pool_team": "infra", "line_keys": ["none"]}])
    cfg = OrgConfig.model_validate({"teams": {"ml": {"projects": ["p1"]}}})
    rows = rows_of(con, "intermediate/int_bill_line_placements", {"day": DAY, **cfg.sql_params()}, "line_key")
    assert {r["line_key"]: (r["placement"], r["allocation"], r["direct_project"], r["is_direct"]) for r in rows} == {
        "db": ("databases", "tag", "p1", True),
        "db_untagged": ("shared", "gpu_weight", None, False),
        "mq": ("other", "tag", "p1", True)}
