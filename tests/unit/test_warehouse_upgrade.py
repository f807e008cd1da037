"""A warehouse built before bill amounts kept their rounding, or before the FOCUS export carried its origin
lines' names and issuers, gains the new columns in place."""

from decimal import Decimal

import duckdb

from pipelines.lib.warehouse import bootstrap

# the two tables as an older version created them (no rounding columns)
OLD_STAGING = """CREATE TABLE staging.stg_focus__bill_lines (
    _file VARCHAR NOT NULL, _row BIGINT NOT NULL, source VARCHAR NOT NULL, line_id VARCHAR,
    billing_account_id VARCHAR, billing_currency VARCHAR, billing_period_start TIMESTAMP,
    billing_period_end TIMESTAMP, charge_period_start TIMESTAMP NOT NULL, charge_period_end TIMESTAMP NOT NULL,
    charge_category VARCHAR NOT NULL, charge_class VARCHAR, charge_frequency VARCHAR, charge_description VARCHAR,
    pricing_category VARCHAR, pricing_quantity DOUBLE, pricing_unit VARCHAR, consumed_quantity DOUBLE,
    consumed_unit VARCHAR, list_cost DECIMAL(38, 18), contracted_cost DECIMAL(38, 18),
    billed_cost DECIMAL(38, 18) NOT NULL, effective_cost DECIMAL(38, 18) NOT NULL,
    commitment_discount_id VARCHAR, commitment_discount_type VARCHAR, commitment_discount_category VARCHAR,
    commitment_discount_status VARCHAR, provider_name VARCHAR, invoice_id VARCHAR, region_id VARCHAR,
    resource_id VARCHAR, resource_name VARCHAR, resource_type VARCHAR, service_category VARCHAR,
    service_name VARCHAR, sku_id VARCHAR, sub_account_id VARCHAR, tags VARCHAR)"""
OLD_QUARANTINE = """CREATE TABLE ops.quarantine (
    source VARCHAR NOT NULL, file VARCHAR NOT NULL, row_ref VARCHAR NOT NULL, reason VARCHAR NOT NULL,
    payload VARCHAR, effective_cost DECIMAL(38, 18), billed_cost DECIMAL(38, 18),
    charge_period_start TIMESTAMP, charge_period_end TIMESTAMP, day DATE)"""


def test_bootstrap_adds_the_rounding_columns_to_an_old_warehouse(tmp_path):
    with duckdb.connect(str(tmp_path / "old.duckdb")) as con:
        con.execute("CREATE SCHEMA staging; CREATE SCHEMA ops")
        con.execute(OLD_STAGING)
        con.execute(OLD_QUARANTINE)
        con.execute("""INSERT INTO staging.stg_focus__bill_lines (_file, _row, source, charge_period_start,
                       charge_period_end, charge_category, billed_cost, effective_cost)
                       VALUES ('b.csv', 1, 'focus', '2026-11-02', '2026-11-02 01:00', 'Usage', 1.5, 1.25)""")
        con.execute("INSERT INTO ops.quarantine (source, file, row_ref, reason, effective_cost) "
                    "VALUES ('focus', 'b.csv', 'row 2', 'x', 2)")
        bootstrap(con)
        bootstrap(con)  # and again: nothing left to add
        staged = con.execute("SELECT effective_cost, effective_cost_rounding, billed_cost_rounding "
                             "FROM staging.stg_focus__bill_lines").fetchall()
        quarantined = con.execute("SELECT effective_cost_rounding, billed_cost_rounding FROM ops.quarantine").fetchall()
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                                 "WHERE table_name = 'stg_focus__bill_lines'").fetchall())
    # rows staged before were exact (finer amounts were refused then): their rounding is 0
    assert staged == [(Decimal("1.25"), Decimal(0), Decimal(0))]
    assert quarantined == [(None, None)]
    assert types["effective_cost_rounding"] == types["billed_cost_rounding"] == "DECIMAL(38,38)"
    # and the columns the FOCUS export carries from each origin line, NULL on the lines staged before
    for column in ("billing_account_name", "sub_account_name", "publisher_name", "invoice_issuer_name",
                   "host_provider_name", "service_subcategory", "pricing_currency"):
        assert types[column] == "VARCHAR", column


def test_a_warehouse_with_the_old_scheduler_table_keeps_its_rows_under_the_new_name(tmp_path):
    import duckdb

    from pipelines.lib.warehouse import bootstrap

    with duckdb.connect(str(tmp_path / "old.duckdb")) as con:
        con.execute("CREATE SCHEMA staging")
        con.execute("CREATE TABLE staging.stg_slurm__job_records AS SELECT 'f' AS _file, 1::BIGINT AS _row")
        bootstrap(con)
        bootstrap(con)   # twice: nothing left to rename
        assert con.execute("SELECT _file, _row FROM staging.stg_scheduler__job_allocations").fetchall() == [("f", 1)]
        tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'staging'").fetchall()}
        assert "stg_slurm__job_records" not in tables
