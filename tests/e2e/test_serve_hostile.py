"""Hostile values for every parameter the API's own schema (/api/v1/openapi.json) names: whatever comes
in, the answer is a JSON sentence with 400, 401 or 404 (or a 200 whose money is decimal strings),
never a 500, never a traceback. The schema drives it, so a new parameter is checked the day it is added."""

from __future__ import annotations

import json
import urllib.parse

import duckdb
import pytest

from tests.e2e.test_serve import FINANCE, TEAM_A, server  # noqa: F401 — the served world, shared
from tests.support.serve_server import fetch

pytestmark = pytest.mark.world

HOSTILE = ["'", "';drop table marts.fct_cost_daily;--", ";drop", "../../etc", "..%2F..%2Fetc", "1000000d",
           "2026-01-01,4764-01-01",  # a million days
           "x" * 5000, "ü€😀\u202e", "", " ", "\x00", "\r\nX-Injected: 1", "-1", "9" * 40, "null", "true",
           "team,team,team", "a" * 41 + ",b"]


def _money_fields(schema: dict) -> set[str]:
    """Every field the schema declares as money (format decimal), at any depth."""
    found = set()
    for name, spec in (schema.get("properties") or {}).items():
        if spec.get("format") == "decimal":
            found.add(name)
        found |= _money_fields(spec) | _money_fields(spec.get("items") or {})
    return found


def _check_money(value, money: set[str], where: str) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in money:
                assert v is None or isinstance(v, str), f"{where}: {k} is {v!r}, not a decimal string"
            _check_money(v, money, where)
    elif isinstance(value, list):
        for v in value:
            _check_money(v, money, where)


def _answer_is_whole(status: int, body: bytes, money: set[str], where: str) -> None:
    assert status != 500 and b"Traceback" not in body and b'File "' not in body, (where, body[:500])
    answer = json.loads(body)  # always JSON, also for an error
    if status == 200:
        _check_money(answer, money, where)
    else:
        assert status in (400, 401, 404), (where, status)
        assert isinstance(answer.get("error"), str) and len(answer["error"]) > 3, (where, answer)
        assert len(answer["error"]) < 600, "an error sentence echoes what it was sent whole"


def test_every_parameter_of_the_schema_takes_hostile_values_without_an_error(server):  # noqa: F811
    status, body = fetch(server["url"] + "/api/v1/openapi.json")
    schema = json.loads(body)
    assert status == 200 and schema["paths"]
    checked = 0
    for path, methods in schema["paths"].items():
        operation = methods["get"]
        money = _money_fields(operation["responses"]["200"]["content"]["application/json"]["schema"])
        assert money, f"{path}: the schema names no money field"
        sample = path.replace("{run_id}", "no-such-run")
        for token in (None, "wrong", TEAM_A):  # no token, a wrong one: 401 JSON; another team's: its own answer
            status, body = fetch(server["url"] + sample, {"Authorization": f"Bearer {token}"} if token else {})
            _answer_is_whole(status, body, money, f"{path} token {token}")
        for param in operation["parameters"]:
            for value in HOSTILE:
                quoted = urllib.parse.quote(value, safe="")
                if param["in"] == "path":
                    url = path.replace("{" + param["name"] + "}", quoted)
                else:
                    url = f"{path}?{param['name']}={quoted}"
                status, body = fetch(server["url"] + url, {"Authorization": f"Bearer {FINANCE}"})
                _answer_is_whole(status, body, money, f"{path} {param['name']}={value[:30]!r}")
                checked += 1
            if param["in"] == "query":  # the same parameter twice: which one was meant is a guess, refused
                status, body = fetch(server["url"] + f"{path}?{param['name']}=7d&{param['name']}=7d",
                                     {"Authorization": f"Bearer {FINANCE}"})
                assert status == 400 and b"more than once" in body, (path, param["name"], body[:300])
        status, body = fetch(server["url"] + f"{sample}?{'p' * 5000}=1", {"Authorization": f"Bearer {FINANCE}"})
        assert status == 400, (path, body[:300])  # an unknown parameter is named, never ignored
        _answer_is_whole(status, body, money, f"{path} unknown parameter")
    assert checked >= 100


def _a_run(server) -> str:
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        return urllib.parse.quote(con.execute("SELECT min(run_id) FROM marts.fct_run_budget_daily").fetchone()[0])


def test_the_answers_that_succeed_spell_money_as_the_schema_says(server):  # noqa: F811
    schema = json.loads(fetch(server["url"] + "/api/v1/openapi.json")[1])
    for path in ("/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team,project,category&reporting=true",
                 "/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=user", "/api/v1/savings",
                 "/api/v1/alerts", "/api/v1/reconciliation?window=2026-11-01,2026-11-30", f"/api/v1/runs/{_a_run(server)}"):
        route = "/api/v1/runs/{run_id}" if path.startswith("/api/v1/runs/") else path.split("?")[0]
        spec = schema["paths"][route]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        status, body = fetch(server["url"] + path, {"Authorization": f"Bearer {FINANCE}"})
        assert status == 200, (path, body[:300])
        answer = json.loads(body)
        assert set(answer) == set(spec["properties"]), path  # the schema names every top-level field
        _answer_is_whole(status, body, _money_fields(spec), path)


def test_the_pages_take_hostile_values_as_a_400_or_a_404(server):  # noqa: F811
    """The pages are not in the API's schema; their parameters (team, day, month, a path's name) get the
    same values: a page, a 404 page or a 400 sentence, never a 500."""
    for path in ("/", "/savings", "/alerts", f"/teams/{server['a']}"):
        for param in ("team", "day", "month"):
            for value in HOSTILE:
                status, body = fetch(server["url"] + f"{path}?{param}={urllib.parse.quote(value, safe='')}",
                                     {"Authorization": f"Bearer {FINANCE}"})
                assert status in (200, 400, 404) and b"Traceback" not in body, (path, param, value[:30], body[:300])
    for route in ("teams", "users", "runs"):
        for value in HOSTILE:
            status, body = fetch(server["url"] + f"/{route}/{urllib.parse.quote(value, safe='')}",
                                 {"Authorization": f"Bearer {FINANCE}"})
            assert status in (400, 404) and b"Traceback" not in body, (route, value[:30], body[:300])
