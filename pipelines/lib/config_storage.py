"""The `storage:` section of the organisation config: how inventoried objects are classified (`rules`),
which bill resource a store is when its ResourceId is not its name (`resource_ids`), what prices a store
no bill line covers (`rate_card`), and how long a snapshot stands for the days after it
(docs/ingest/storage.md, docs/config.md).

A rule's pattern is compiled here, once, into the regular expressions the ledger's SQL matches with
(`rule_macros`): classifying tens of millions of objects a day needs patterns DuckDB compiles once, as
constants, not one per row."""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from pipelines.lib.config_section import Money
from pipelines.lib.config_section import Section as _Section
from pipelines.lib.config_section import currency as _currency

KINDS = ("checkpoint", "dataset", "log", "other")
CAPTURES = {"run_id": "[^/]+", "step": "[0-9]+"}
_TOKEN = re.compile(r"\{(\w+)\}|\*\*|\*|\?")


class StorageRule(_Section):
    """Objects whose URL (`s3://bucket/key`, or a POSIX listing's path) starts with `pattern` are of
    `kind`, of `project` (else the run's project, else the store's bill tag), in the store named by
    `store` when one is given. The first rule that matches wins."""

    pattern: str = Field(min_length=1)
    kind: Literal["checkpoint", "dataset", "log", "other"]
    project: str | None = Field(None, min_length=1)
    store: str | None = Field(None, min_length=1)

    @field_validator("pattern")
    @classmethod
    def _captures_known(cls, value: str) -> str:
        names = [m.group(1) for m in _TOKEN.finditer(value) if m.group(1)]
        unknown = sorted(set(names) - CAPTURES.keys())
        if unknown:
            raise ValueError(f"pattern {value!r} captures {', '.join('{' + n + '}' for n in unknown)}: "
                             f"only {{run_id}} and {{step}} are known")
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"pattern {value!r} captures {', '.join('{' + n + '}' for n in twice)} twice")
        return value


class StorageRate(_Section):
    """A price per GB-month (GiB, 2^30 bytes, as AWS bills TimedStorage-ByteHrs) of a tier, in one store
    or every store; for what no bill line of the store prices."""

    tier: str = Field(min_length=1)
    price_per_gb_month: Money = Field(ge=0)
    currency: str = "USD"
    store: str | None = Field(None, min_length=1)

    _check_currency = field_validator("currency")(lambda cls, v: _currency(v))


class StorageConfig(_Section):
    rules: list[StorageRule] = Field(default_factory=list)
    rate_card: list[StorageRate] = Field(default_factory=list)
    # store name -> the ResourceId its bill lines carry, when that is not the store's name or ARN
    resource_ids: dict[str, str] = Field(default_factory=dict)
    # a day without a snapshot of its own is priced by the store's latest one at most this many days before
    snapshot_lookback_days: int = Field(7, ge=0, le=62)

    @model_validator(mode="after")
    def _one_price_per_tier(self) -> StorageConfig:
        seen = set()
        for r in self.rate_card:
            if (r.store, r.tier) in seen:
                raise ValueError(f"rate_card: two prices for tier {r.tier}" + (f" of store {r.store}" if r.store else ""))
            seen.add((r.store, r.tier))
        return self

    def sql_params(self) -> dict[str, object]:
        return {
            "storage_rules": json.dumps([{"rule_no": i + 1, "kind": r.kind, "project": r.project}
                                         for i, r in enumerate(self.rules)]),
            "storage_rate_card": json.dumps([{"tier": r.tier, "store": r.store, "currency": r.currency,
                                              "price_per_gb_month": str(r.price_per_gb_month)}
                                             for r in self.rate_card]),
            "storage_resource_ids": json.dumps(self.resource_ids),
            "storage_lookback_days": self.snapshot_lookback_days,
        }


def pattern_regex(pattern: str, capture: str | None = None) -> str:
    """The rule's pattern as an anchored RE2 prefix match; `capture` ("run_id", "step") is its only group,
    and without one the pattern has an empty group, so every expression has exactly one group."""
    out, at = ["^"], 0
    for m in _TOKEN.finditer(pattern):
        out.append(re.escape(pattern[at:m.start()]))
        token = m.group(0)
        if m.group(1):
            out.append(f"({CAPTURES[m.group(1)]})" if m.group(1) == capture else f"(?:{CAPTURES[m.group(1)]})")
        else:
            out.append({"**": ".*", "*": "[^/]*", "?": "[^/]"}[token])
        at = m.end()
    out.append(re.escape(pattern[at:]))
    return "".join(out) + ("" if capture and f"{{{capture}}}" in pattern else "()")


def _literal(text: str) -> str:
    # a SQL string literal: DuckDB's standard strings have no backslash escapes, only '' for '
    return "'" + text.replace("'", "''") + "'"


def rule_macros(storage: StorageConfig) -> list[str]:
    """TEMP macros over an object's store and URL: `storage_rule_no` (the first matching rule's number,
    NULL for none), `storage_rule_run` and `storage_rule_step` (its captures, NULL where it has none).
    The patterns are the config's own text, quoted as SQL literals, so DuckDB compiles each once."""
    matches, runs, steps = [], [], []
    for i, rule in enumerate(storage.rules, start=1):
        where = f"regexp_matches(url, {_literal(pattern_regex(rule.pattern))})"
        if rule.store:
            where = f"store = {_literal(rule.store)} AND {where}"
        matches.append(f"WHEN {where} THEN {i}")
        if "{run_id}" in rule.pattern:
            runs.append(f"WHEN {i} THEN regexp_extract(url, {_literal(pattern_regex(rule.pattern, 'run_id'))}, 1)")
        if "{step}" in rule.pattern:
            steps.append(f"WHEN {i} THEN regexp_extract(url, {_literal(pattern_regex(rule.pattern, 'step'))}, 1)")

    def case(arms: list[str], subject: str = "") -> str:
        return f"CASE {subject}{' '.join(arms)} END" if arms else "NULL"

    return [
        f"CREATE OR REPLACE TEMP MACRO storage_rule_no(store, url) AS ({case(matches)})::INTEGER",
        f"CREATE OR REPLACE TEMP MACRO storage_rule_run(url, rule_no) AS "
        f"nullif({case(runs, 'rule_no ') if runs else 'NULL'}, '')::VARCHAR",
        f"CREATE OR REPLACE TEMP MACRO storage_rule_step(url, rule_no) AS "
        f"TRY_CAST(nullif({case(steps, 'rule_no ') if steps else 'NULL'}, '') AS BIGINT)",
    ]
