"""AWS Cost and Usage Report files (CSV, CSV.gz, Parquet) → FOCUS rows → staging.stg_focus__bill_lines.

Legacy CUR and CUR 2.0 / Athena headers are mapped to FOCUS columns with vectorised polars expressions
(amounts and times worked out here once, from the CUR columns) and handed to
`focus.from_focus_frame`, so casting, the contract and quarantine are the FOCUS path's. The mapping's
tables are in pipelines/ingest/aws_cur_mapping.py; the mapping (focus-converters `aws-cur` rules,
FOCUS ≥ 1.0 credits and refunds) and what is refused: docs/ingest/aws_cur.md. (About 400 lines, one
module: one format read whole, as focus.py reads FOCUS.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl

from models.landing import MONEY, ROUNDING, TS
from pipelines.ingest import focus
from pipelines.ingest.common import RAW, blank_to_null, by_distinct, distinct_through_sql, spread, utc
from pipelines.landing.parsed import Parsed, combine, file_reject
from pipelines.ingest.foreign_exports import focus_in_cur_folder
from pipelines.ingest.money import EXACT, exact_money, exact_sum
from pipelines.lib.warehouse import sql, step
from pipelines.ingest.aws_cur_mapping import (AWS_TAG_PREFIX, CHARGE_CATEGORY, COLUMNS, LEGACY_MARK, REQUIRED,
                                              RESOURCE_ID_TYPES, SERVICE_CATEGORY, SNAKE_MARK, USER_TAG_PREFIX,
                                              cur_columns, resolve_columns, tag_key)

SOURCE = "aws_cur"

def parse(con: duckdb.DuckDBPyConnection, path: Path, file: str,
          default_currency: str = focus.DEFAULT_CURRENCY) -> Parsed:
    """A CUR file's rows as FOCUS rows; a row without lineItem/CurrencyCode takes `default_currency`.
    `con` is the caller's DuckDB, as for `focus.parse`."""
    return combine(parse_chunks(con, path, file, default_currency))


def parse_chunks(
    con: duckdb.DuckDBPyConnection, path: Path, file: str, default_currency: str = focus.DEFAULT_CURRENCY,
    descriptive: bool = True
) -> Iterator[Parsed]:
    """`parse`, a chunk of the file at a time. Without `descriptive`, the columns that only describe
    a line (DESCRIPTIVE) are not read: the rows still decide what is staged, what is quarantined and
    why, and what everything costs, which is all a summary (inspect) needs."""

    def parse_chunk(raw: pl.DataFrame, seen: focus.LineIds) -> Parsed:
        cols = resolve_columns(raw.columns)
        if cols["unblended_cost"] is None:
            reason = focus_in_cur_folder(header) or f"not an AWS CUR file: no {LEGACY_MARK} or {SNAKE_MARK} column"
            return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, reason))
        missing = [COLUMNS[c][0] for c in REQUIRED if cols[c] is None]
        if missing:
            return Parsed(
                rows=pl.DataFrame(),
                rejects=file_reject(SOURCE, file, f"missing required CUR column(s): {', '.join(missing)}"),
            )
        frame, given = to_focus_frame(con, raw, cols)
        return focus.from_focus_frame(con, frame, file, SOURCE, default_currency=default_currency, given=given,
                                      clean=True, seen=seen)

    header: list[str] = []

    def pick(names: list[str]) -> list[str]:
        header[:] = names  # the whole header, to tell a FOCUS file by (the frame has only CUR columns)
        return cur_columns(names, descriptive=descriptive)

    return focus.parse_in_chunks(path, file, SOURCE, pick, parse_chunk, render=_parquet_as_text,
                                 payload_name=_payload_name)


def _parquet_as_text(df: pl.DataFrame) -> pl.DataFrame:
    """Parquet values rendered as the text a CSV export would hold: CUR 2.0 Parquet carries MAP
    columns (`resource_tags`, `product`), zoned timestamps and DOUBLE amounts."""
    return df.select(_as_text(name, dtype) for name, dtype in df.schema.items())


def _as_text(name: str, dtype: pl.DataType) -> pl.Expr:
    c = pl.col(name)
    if dtype == pl.String:
        return c
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone:
            c = c.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        return c.dt.to_string("%Y-%m-%d %H:%M:%S%.f").alias(name)
    if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct) and [
        f.name for f in dtype.inner.fields
    ] == ["key", "value"]:
        # a Parquet MAP read as a list of entries: a JSON object, as CUR 2.0 CSV writes it
        pair = pl.element().struct.json_encode().str.replace(
            r'^\{"key":("(?:[^"\\]|\\.)*"),"value":(.*)\}$', "${1}:${2}"
        )
        return (pl.lit("{") + c.list.eval(pair).list.join(",") + pl.lit("}")).alias(name)
    if dtype.is_nested():  # a MAP (polars ≥ 2 reads it as Map), struct or list: its JSON
        return _json_value(c).alias(name)
    # numbers: floats render as their shortest round-trip decimal ("98.32", "1e-05"), decimals exactly
    return c.cast(pl.String).alias(name)


# EffectiveCost of commitment fees: the commitment's unused part, Σ sign·term (required?)
SUMS: dict[str, list[tuple[str, int, bool]]] = {
    "sp_unused_commitment": [("sp_total_commitment", 1, True), ("sp_used_commitment", -1, False)],
    "ri_unused_fees": [("ri_unused_upfront", 1, False), ("ri_unused_recurring", 1, False)],
}
# staging time column -> the CUR concept it is read from
TIMES = {
    "billing_period_start": "billing_period_start",
    "billing_period_end": "billing_period_end",
    "charge_period_start": "usage_start",
    "charge_period_end": "usage_end",
}
QUANTITIES = ("usage_amount",)
# the staging amounts worked out here from the CUR's (every FOCUS amount column)
AMOUNTS = ("effective_cost", "billed_cost", "list_cost", "contracted_cost")
# CUR money columns, read exactly (once per distinct value) before they are combined
MONEY_CONCEPTS = (
    "unblended_cost", "net_unblended_cost", "public_on_demand_cost", "sp_effective_cost", "ri_effective_cost",
    "sp_total_commitment", "sp_used_commitment", "ri_unused_upfront", "ri_unused_recurring",
)


def to_focus_frame(con: duckdb.DuckDBPyConnection, raw: pl.DataFrame,
                   cols: dict[str, str | None]) -> tuple[pl.DataFrame, dict[str, pl.Expr]]:
    """The CUR rows as FOCUS columns (text), followed by the raw CUR columns (kept for the quarantine
    payload; a CUR header that collides with a staging name is prefixed with `raw.`), and the staging
    columns already worked out here (amounts as EXACT structs, times as UTC; columns of the frame),
    for `focus.from_focus_frame`'s `given`."""
    cur_names = list(raw.columns)
    cols = _without_blank_columns(raw, cols)
    raw, tags = _with_tags(con, raw, cols)
    tag_columns = set(raw.columns) - set(cur_names)
    # every CUR value used more than once is cleaned (and every amount read) once, as its own column
    present = {concept: c for concept, c in cols.items() if c}
    raw = raw.with_columns(
        *[blank_to_null(c).alias(_text(concept)) for concept, c in present.items() if concept not in MONEY_CONCEPTS],
        *[exact_money(pl.col(c), shown=c).alias(_exact(concept))
          for concept, c in present.items() if concept in MONEY_CONCEPTS],
        *[_amount_sum(cols, name, terms).alias(_exact(name)) for name, terms in SUMS.items()],
    )
    text = {concept: (pl.col(_text(concept)) if c and concept not in MONEY_CONCEPTS else pl.lit(None, dtype=pl.String))
            for concept, c in cols.items()}
    raw = raw.with_columns(by_distinct(text["line_item_type"], lambda t: t.str.to_lowercase(), pl.String).alias("_kind"))
    kind = pl.col("_kind")

    def is_type(*types: str) -> pl.Expr:
        return kind.is_in([t.lower() for t in types])

    def amount(concept: str) -> pl.Expr:
        return pl.col(_exact(concept)) if concept in SUMS or cols[concept] else pl.lit(None, dtype=EXACT)

    zero = pl.struct(pl.lit(0, MONEY).alias("amount"), pl.lit(0, ROUNDING).alias("rounding"),
                     pl.lit(None, pl.String).alias("problem"))
    effective = (
        pl.when(is_type("SavingsPlanCoveredUsage")).then(amount("sp_effective_cost"))
        .when(is_type("SavingsPlanRecurringFee")).then(amount("sp_unused_commitment"))
        .when(is_type("SavingsPlanNegation", "SavingsPlanUpfrontFee")).then(zero)
        .when(is_type("Fee") & text["ri_arn"].is_not_null()).then(zero)  # RI upfront fee
        .when(is_type("DiscountedUsage")).then(amount("ri_effective_cost"))
        .when(is_type("RIFee")).then(amount("ri_unused_fees"))
        .otherwise(amount("unblended_cost"))
    )
    net = amount("net_unblended_cost")
    net_present = net.struct.field("amount").is_not_null() | net.struct.field("problem").is_not_null()
    billed = pl.when(net_present).then(net).otherwise(amount("unblended_cost"))
    # FOCUS: a credit's ListCost and ContractedCost are its BilledCost. ContractedCost is the cost at the
    # account's rates before any commitment: UnblendedCost (private-rate and EDP discounts are lines of
    # their own, so they net out), the on-demand cost of RI-covered usage (the reservation's rate is a
    # commitment's), and 0 on a savings plan's negation of the usage it covered.
    contracted = (
        pl.when(is_type("Credit")).then(billed)
        .when(is_type("SavingsPlanNegation")).then(zero)
        .when(is_type("DiscountedUsage")).then(amount("public_on_demand_cost"))
        .otherwise(amount("unblended_cost"))
    )
    raw = raw.with_columns(
        effective.alias("_amount.effective_cost"),
        billed.alias("_amount.billed_cost"),
        pl.when(is_type("Credit")).then(billed).otherwise(amount("public_on_demand_cost")).alias("_amount.list_cost"),
        contracted.alias("_amount.contracted_cost"),
    )
    # an unknown type goes on as `<column>=<value>`: never a valid category, so the contract rejects the
    # row naming it
    category = pl.coalesce(
        kind.replace_strict({k.lower(): v for k, v in CHARGE_CATEGORY.items()}, default=None, return_dtype=pl.String),
        pl.format("{}={}", pl.lit(cols["line_item_type"]), text["line_item_type"]),
    )
    sp_types = ("SavingsPlanCoveredUsage", "SavingsPlanRecurringFee", "SavingsPlanUpfrontFee")
    ri = is_type("DiscountedUsage", "RIFee") | (is_type("Fee") & text["ri_arn"].is_not_null())
    commitment_id = pl.when(is_type(*sp_types)).then(text["sp_arn"]).when(ri).then(text["ri_arn"])
    effective_amount = pl.col("_amount.effective_cost")
    unused = is_type("SavingsPlanRecurringFee", "RIFee") & (
        (effective_amount.struct.field("amount") != 0) | (effective_amount.struct.field("rounding") != 0)
    )
    status = (
        pl.when(commitment_id.is_null()).then(pl.lit(None, dtype=pl.String))
        .when(is_type("SavingsPlanCoveredUsage", "DiscountedUsage")).then(pl.lit("Used"))
        .when(unused.fill_null(False)).then(pl.lit("Unused"))
    )
    raw = raw.with_columns(
        category.alias("_category"), commitment_id.alias("_commitment_id"), status.alias("_status"),
        *[by_distinct(text[concept], utc, TS).alias(_parsed(concept)) for concept in TIMES.values() if cols[concept]],
        *[text[concept].cast(pl.Float64, strict=False).alias(_parsed(concept))
          for concept in QUANTITIES if cols[concept]],
    )
    category, commitment_id, status = pl.col("_category"), pl.col("_commitment_id"), pl.col("_status")
    raw = raw.with_columns(pl.coalesce(text["resource_id"], pl.when(status == "Unused").then(commitment_id))
                           .alias("_resource_id"))
    resource_id = pl.col("_resource_id")
    line_id = pl.when(text["time_interval"].is_not_null()).then(
        pl.format("{}/{}", text["line_item_id"], text["time_interval"])
    ).otherwise(text["line_item_id"])
    time = quantity = lambda concept: _as_read(raw, cols, concept)  # noqa: E731

    focus_columns = {
        "x_LineItemId": line_id,
        "BillingAccountId": text["payer_account_id"],
        "BillingAccountName": text["payer_account_name"],
        "SubAccountId": text["usage_account_id"],
        "SubAccountName": text["usage_account_name"],
        "InvoiceId": text["invoice_id"],
        "InvoiceIssuerName": text["invoicing_entity"],
        "PublisherName": text["legal_entity"],
        "BillingCurrency": text["currency"],
        "BillingPeriodStart": time("billing_period_start"),
        "BillingPeriodEnd": time("billing_period_end"),
        "ChargePeriodStart": time("usage_start"),
        "ChargePeriodEnd": time("usage_end"),
        "ChargeCategory": category,
        "ChargeDescription": text["description"],
        "PricingQuantity": quantity("usage_amount"),
        "ConsumedQuantity": pl.when(category == "Usage").then(quantity("usage_amount")),
        "PricingUnit": text["pricing_unit"],
        "PricingCurrency": text["pricing_currency"],
        "CommitmentDiscountId": commitment_id,
        "CommitmentDiscountType": pl.when(is_type(*sp_types)).then(pl.lit("Savings Plan"))
        .when(ri).then(pl.lit("Reservation")),
        "CommitmentDiscountCategory": pl.when(is_type(*sp_types)).then(pl.lit("Spend"))
        .when(ri).then(pl.lit("Usage")),
        "CommitmentDiscountStatus": status,
        "ProviderName": pl.lit("AWS"),
        "ResourceId": resource_id,
        "ResourceType": by_distinct(resource_id, _resource_type, pl.String),
        "RegionId": text["region"],
        "ServiceName": pl.coalesce(
            text["product_name"], text["product_map"].str.json_path_match("$.product_name"), text["product_code"]
        ),
        "ServiceCategory": text["product_code"]
        .replace_strict(SERVICE_CATEGORY, default="Other", return_dtype=pl.String)
        .fill_null("Other"),
        "SkuId": text["sku"],
        "Tags": tags,
    }
    given = {col: pl.col(f"_amount.{col}") for col in AMOUNTS}
    given |= {col: pl.col(_parsed(concept)) for col, concept in TIMES.items() if cols[concept]}
    frame = raw.select(
        "_row",
        *[expr.cast(pl.String).alias(name) for name, expr in focus_columns.items()],
        *[pl.col(c).alias(_payload_name(c)) for c in cur_names if c != "_row" and c not in tag_columns],
        *[pl.col(f"_amount.{col}") for col in AMOUNTS],
        *[pl.col(_parsed(concept)) for concept in TIMES.values() if cols[concept]],
    )
    return frame, given


def _without_blank_columns(raw: pl.DataFrame, cols: dict[str, str | None]) -> dict[str, str | None]:
    """`cols` without the columns this chunk leaves empty throughout: every value they could give is
    null, as when the file lacks them, and the mapping skips them. Most commitment columns are such
    (an account without reservations or savings plans), so this saves half the columns' work."""
    text = [c for c in dict.fromkeys(cols.values()) if c and raw.schema[c] == pl.String]
    empty = raw.select((pl.col(c).str.len_bytes() == 0).fill_null(True).all() for c in text).row(0) if text else ()
    blank = {c for c, is_empty in zip(text, empty) if is_empty}
    return {concept: None if c in blank else c for concept, c in cols.items()}


def _text(concept: str) -> str:
    return f"_text.{concept}"


def _exact(concept: str) -> str:
    return f"_exact.{concept}"


# names the FOCUS frame and its parse use: FOCUS columns, staging columns, bookkeeping (`_…`)
_TAKEN = {
    *(n for names in focus.STRING_COLUMNS.values() for n in names),
    *focus.MONEY_COLUMNS.values(), *focus.TIME_COLUMNS.values(), *focus.FLOAT_COLUMNS.values(), *focus.STAGED,
}


def _payload_name(column: str) -> str:
    """A CUR column's name in the FOCUS frame and the payload: `raw.` + a name staging also uses."""
    return RAW + column if column in _TAKEN or column.startswith("_") else column


def _parsed(concept: str) -> str:
    return f"_parsed.{concept}"


def _as_read(raw: pl.DataFrame, cols: dict[str, str | None], concept: str) -> pl.Expr:
    """A CUR time or quantity as text for FOCUS; an unreadable one as `<column>=<value>`, so the
    reason names it (worded only in a chunk that has one)."""
    col = cols[concept]
    if col is None:
        return pl.lit(None, dtype=pl.String)
    value, parsed = pl.col(_text(concept)), pl.col(_parsed(concept))
    broken = value.is_not_null() & parsed.is_null()
    if not raw.select(broken.any()).item():
        return value
    return pl.when(broken).then(pl.format("{}={}", pl.lit(col), value)).otherwise(value)


def _amount_sum(cols: dict[str, str | None], name: str, terms: list[tuple[str, int, bool]]) -> pl.Expr:
    """Σ sign·term of CUR amounts, exactly (see `money.exact_sum`), as an EXACT struct; worked out
    once per distinct combination of the terms' texts. A missing term counts as 0 unless it is
    required (then the amount is null and the contract rejects the row); none present gives null;
    an unreadable term gives its problem."""
    present = [(cols[concept], sign, required) for concept, sign, required in terms if cols[concept]]
    if not present or any(required and not cols[concept] for concept, _, required in terms):
        return pl.lit(None, dtype=EXACT)
    formula = " ".join(f"{'+' if sign > 0 else '-'} {col}" for col, sign, _ in present).lstrip("+ ")

    def totals(texts: pl.Series) -> pl.Series:
        if all(term.null_count() == len(term) for term in texts.struct.unnest()):  # no term in this chunk (usual)
            return pl.repeat(None, len(texts), dtype=EXACT, eager=True)
        distinct = texts.unique().struct.unnest()
        parts = distinct.with_columns(
            exact_money(pl.col(col), shown=col).alias(f"_part{i}") for i, (col, _, _) in enumerate(present)
        )
        summed = parts.with_columns(exact_sum(parts, [(sign, f"_part{i}") for i, (_, sign, _) in enumerate(present)])
                                    .alias("_sum"))
        given = [pl.col(col).is_not_null() for col, _, _ in present]  # null spellings are null by now
        problem = pl.coalesce([pl.col(f"_part{i}").struct.field("problem") for i in range(len(present))])
        required_missing = pl.any_horizontal([~g for g, (_, _, required) in zip(given, present) if required]
                                             or [pl.lit(False)])
        total = pl.col("_sum")
        table = summed.select(
            pl.struct([pl.col(col) for col, _, _ in present]).alias("value"),
            pl.when(problem.is_not_null())
            .then(pl.struct(pl.lit(None, MONEY).alias("amount"), pl.lit(None, ROUNDING).alias("rounding"),
                            problem.alias("problem")))
            .when(~pl.any_horizontal(given) | required_missing).then(pl.lit(None, dtype=EXACT))
            .otherwise(pl.struct(
                total.struct.field("amount"), total.struct.field("rounding"),
                pl.when(total.struct.field("problem").is_not_null())
                .then(pl.format("'{}' {}", pl.lit(formula), total.struct.field("problem"))).alias("problem"),
            ))
            .alias("total"),
        )
        joined = texts.to_frame("value").join(table, on="value", how="left", maintain_order="left", nulls_equal=True)
        return joined["total"]

    cleaned = pl.struct([blank_to_null(col).alias(col) for col, _, _ in present])
    return cleaned.map_batches(totals, return_dtype=EXACT)


def _resource_type(resource_id: pl.Expr) -> pl.Expr:
    """`arn:partition:service:region:account:type/id` (or `type:id`) -> type; EC2 ids by prefix."""
    arn_type = resource_id.str.extract(r"^arn:[^:]*:[^:]*:[^:]*:[^:]*:([^/:]+)[/:]", 1)
    expr = arn_type
    for pattern, kind in RESOURCE_ID_TYPES.items():
        expr = pl.when(resource_id.str.contains(pattern)).then(pl.lit(kind)).otherwise(expr)
    return expr


def _json_value(expr: pl.Expr) -> pl.Expr:
    """Any value as its JSON text (strings quoted and escaped)."""
    return pl.struct(expr.alias("v")).struct.json_encode().str.strip_prefix('{"v":').str.strip_suffix("}")


def _with_tags(con: duckdb.DuckDBPyConnection, raw: pl.DataFrame,
               cols: dict[str, str | None]) -> tuple[pl.DataFrame, pl.Expr]:
    """The FOCUS Tags expression (a JSON object text, null without tags) over every user-tag source:
    legacy `resourceTags/user:<key>` columns, Athena `resource_tags_user_<key>` columns and the CUR 2.0
    `resource_tags` map. A column wins over the map for its key (its pair is written after the map's,
    and FOCUS Tags keep a key's later value). A map that is not a JSON object goes on as
    `resource_tags=<text>`, so the contract rejects its row naming the column. Returns `raw` with the
    map's pairs as the helper column `__tag_map` (no CUR column)."""
    by_key: dict[str, list[pl.Expr]] = {}
    for c in raw.columns:
        key = tag_key(c)
        if key is not None:
            by_key.setdefault(key, []).append(blank_to_null(c))
    parts = [
        pl.when(value.is_not_null()).then(pl.lit(json.dumps(key) + ":") + _json_value(value))
        for key, values in sorted(by_key.items())
        for value in [pl.coalesce(values)]
    ]
    invalid_map = pl.lit(None, dtype=pl.String)
    map_col = cols["resource_tags"]
    if map_col is not None:
        text = blank_to_null(map_col)
        # on this thread, not in a polars expression (which may run on a polars thread): `con` is ours
        raw = raw.with_columns(_map_pairs(con, raw.select(text).to_series()).alias("__tag_map"))
        pairs = pl.col("__tag_map")
        invalid_map = pl.when(text.is_not_null() & pairs.is_null()).then(pl.format("{}={}", pl.lit(map_col), text))
        parts.insert(0, pl.when(pairs != "").then(pairs))
    if not parts:
        return raw, invalid_map
    pairs = pl.concat_list(parts).list.drop_nulls()
    built = pl.when(pairs.list.len() > 0).then(pl.lit("{") + pairs.list.join(",") + pl.lit("}"))
    return raw, pl.coalesce(invalid_map, built)


def _map_pairs(con: duckdb.DuckDBPyConnection, maps: pl.Series) -> pl.Series:
    """Each `resource_tags` text's user tags as JSON object members (`"team":"ml",…`, "" for none;
    null when the text is not a JSON object), in the map's order, its `aws:` keys left out and
    `user:`/`user_` taken off, values cleaned as a tag column's are. Read once per distinct text, in
    DuckDB by the rule FOCUS Tags are read by (sql/…/15_tag_map_entries.sql): a text is read on its
    own, so one row's map (a key written twice, a value of another JSON type than another row's,
    thousands of keys) can never break its neighbours'."""
    read = distinct_through_sql(con, maps, "tag_maps_in", sql(step("staging/stg_focus__bill_lines", "tag_map_entries")))
    if read is None:
        return maps
    distinct, entries = read
    key, tag = pl.col("key"), blank_to_null("tag")
    pair = pl.when(key.is_not_null() & ~key.str.contains(AWS_TAG_PREFIX) & tag.is_not_null()).then(
        _json_value(key.str.replace(USER_TAG_PREFIX, "")) + pl.lit(":") + _json_value(tag))
    members = entries.group_by("value").agg(pair.sort_by("id").drop_nulls().str.join(",").alias("pairs"))
    by_text = distinct.to_frame("value").join(members, on="value", how="left", maintain_order="left")
    return spread(maps, distinct, by_text["pairs"])
