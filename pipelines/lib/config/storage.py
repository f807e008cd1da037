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

from pipelines.lib.config.section import Money
from pipelines.lib.config.section import Section as _Section
from pipelines.lib.config.section import currency as _currency

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


class KindPolicy(_Section):
    """The lifecycle one kind of object should follow: on a hot tier (`hot_tiers`) for at most
    `max_hot_age_hours` after it was written, then on `cold_tier`, priced by the rate card's price of that
    tier in the object's currency (else the bill's own price of it that day). Without `hot_tiers` and
    `cold_tier` nothing of the kind is tiered down."""

    hot_tiers: list[str] = Field(default_factory=list)
    max_hot_age_hours: float = Field(24, gt=0)
    cold_tier: str | None = Field(None, min_length=1)


class CheckpointPolicy(KindPolicy):
    # the latest checkpoints (by step) a finished run keeps; the older ones are prune_checkpoints
    keep_last: int = Field(3, ge=1)


class DatasetPolicy(KindPolicy):
    # a dataset object neither read nor written for this long is stale (only where access times are known)
    stale_after_days: int = Field(90, ge=1)


class StoragePolicy(_Section):
    """storage.policy: what marts.fct_savings_opportunities prices as tier_down, prune_checkpoints and
    stale_datasets (docs/ledger.md#savings-opportunities)."""

    checkpoint: CheckpointPolicy = Field(default_factory=CheckpointPolicy)
    dataset: DatasetPolicy = Field(default_factory=DatasetPolicy)
    log: KindPolicy = Field(default_factory=KindPolicy)
    # a run none of whose jobs ran for this long before a day's end is finished (or abandoned) that day
    run_finished_after_hours: float = Field(24, gt=0)

    def as_json(self) -> str:
        kinds = {k: getattr(self, k).model_dump(mode="json") for k in ("checkpoint", "dataset", "log")}
        return json.dumps([{"kind": k, "hot_tiers": v["hot_tiers"], "max_hot_age_hours": v["max_hot_age_hours"],
                            "cold_tier": v["cold_tier"], "keep_last": v.get("keep_last"),
                            "stale_after_days": v.get("stale_after_days")} for k, v in kinds.items()])


class StorageConfig(_Section):
    rules: list[StorageRule] = Field(default_factory=list)
    policy: StoragePolicy = Field(default_factory=StoragePolicy)
    rate_card: list[StorageRate] = Field(default_factory=list)
    # store name -> the ResourceId its bill lines carry, when that is not the store's name or ARN
    resource_ids: dict[str, str] = Field(default_factory=dict)
    # a day without a snapshot of its own is priced by the store's latest one at most this many days before
    snapshot_lookback_days: int = Field(7, ge=0, le=62)

    @model_validator(mode="after")
    def _one_price_per_tier(self) -> StorageConfig:
        # a tier may have a price in each currency (what tier_down prices a move to, in the object's);
        # an unbilled store takes the default currency's (int_storage_costs)
        seen = set()
        for r in self.rate_card:
            if (r.store, r.tier, r.currency) in seen:
                raise ValueError(f"rate_card: two {r.currency} prices for tier {r.tier}"
                                 + (f" of store {r.store}" if r.store else ""))
            seen.add((r.store, r.tier, r.currency))
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
            "storage_policy": self.policy.as_json(),
            "storage_run_finished_hours": self.policy.run_finished_after_hours,
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
