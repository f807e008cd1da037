"""AWS Cost and Usage Report files (CSV, CSV.gz, Parquet) → FOCUS rows → staging.stg_focus__bill_lines.

Reads legacy CUR (`lineItem/UnblendedCost` headers) and CUR 2.0 / Athena (`line_item_unblended_cost`)
exports, builds a frame of FOCUS columns (all text) with vectorised polars expressions, and hands it to
`focus.from_focus_frame`, so casting, the FocusBillLine contract and quarantine are the FOCUS path's.

The mapping follows the focus_converters `aws-cur` rules (shared/reference/billing-focus-cur-opencost.md
§2.1) with FOCUS ≥ 1.0 semantics for credits and refunds:

* ChargeCategory from `LineItemType` (`CHARGE_CATEGORY`; Credit → `Credit`, Refund → `Usage`, keeping the
  negative amount). An unknown type goes on as `lineItem/LineItemType=<value>`, which the contract
  quarantines, naming it (passing the bare value on would let a type spelled `Adjustment` through).
* EffectiveCost is the amortized cost: `SavingsPlanEffectiveCost` on SP-covered usage, the unused part
  of the commitment on SP recurring fees (`TotalCommitmentToDate − UsedCommitment`) and RI fees
  (`UnusedAmortizedUpfrontFeeForBillingPeriod + UnusedRecurringFee`), `reservation/EffectiveCost` on RI
  usage, 0 on SP negations, SP upfront fees and RI upfront fees (`Fee` rows carrying a reservation ARN;
  their amount reaches EffectiveCost amortized through the RI usage and RIFee rows), else UnblendedCost.
  Sums are exact DECIMAL(38, 18), rendered back to text.
* BilledCost = NetUnblendedCost, else UnblendedCost; ListCost = pricing/publicOnDemandCost.
* An SP recurring fee or RI fee with a non-zero unused part is the commitment's unused cost:
  `CommitmentDiscountStatus = Unused` (ResourceId falls back to the commitment ARN, as FOCUS puts it);
  SP-covered and RI-covered usage is `Used`. Both carry the commitment's ARN as CommitmentDiscountId.
* Tags: a JSON object of the user tags, keys without their `user:` / `user_` prefix, empty values dropped.

A money, quantity or time value that is present but unreadable reaches FOCUS as `<CUR column>=<value>`,
so the quarantine reason names the CUR column (e.g. `BilledCost 'lineItem/NetUnblendedCost=1,5' is not
a number`), and the row's other amounts are kept with it.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from models.landing import MONEY
from pipelines.ingest import focus
from pipelines.ingest.common import RAW, Parsed, add_broken_lines, blank_to_null, file_reject, to_utc

SOURCE = "aws_cur"

# concept -> header spellings: legacy CUR first, then Athena / CUR 2.0. Matched case-insensitively,
# the first one present wins.
COLUMNS: dict[str, tuple[str, ...]] = {
    "line_item_id": ("identity/LineItemId", "identity_line_item_id"),
    "time_interval": ("identity/TimeInterval", "identity_time_interval"),
    "invoice_id": ("bill/InvoiceId", "bill_invoice_id"),
    "payer_account_id": ("bill/PayerAccountId", "bill_payer_account_id"),
    "billing_period_start": ("bill/BillingPeriodStartDate", "bill_billing_period_start_date"),
    "billing_period_end": ("bill/BillingPeriodEndDate", "bill_billing_period_end_date"),
    "usage_account_id": ("lineItem/UsageAccountId", "line_item_usage_account_id"),
    "line_item_type": ("lineItem/LineItemType", "line_item_line_item_type"),
    "usage_start": ("lineItem/UsageStartDate", "line_item_usage_start_date"),
    "usage_end": ("lineItem/UsageEndDate", "line_item_usage_end_date"),
    "product_code": ("lineItem/ProductCode", "line_item_product_code"),
    "resource_id": ("lineItem/ResourceId", "line_item_resource_id"),
    "usage_amount": ("lineItem/UsageAmount", "line_item_usage_amount"),
    "currency": ("lineItem/CurrencyCode", "line_item_currency_code"),
    "unblended_cost": ("lineItem/UnblendedCost", "line_item_unblended_cost"),
    "net_unblended_cost": ("lineItem/NetUnblendedCost", "line_item_net_unblended_cost"),
    "description": ("lineItem/LineItemDescription", "line_item_line_item_description"),
    "product_name": ("product/ProductName", "product_product_name"),
    "region": ("product/regionCode", "product_region_code", "product/region", "product_region"),
    "sku": ("product/sku", "product_sku"),
    "pricing_unit": ("pricing/unit", "pricing_unit"),
    "public_on_demand_cost": ("pricing/publicOnDemandCost", "pricing_public_on_demand_cost"),
    "ri_arn": ("reservation/ReservationARN", "reservation_reservation_a_r_n", "reservation_reservation_arn"),
    "ri_effective_cost": ("reservation/EffectiveCost", "reservation_effective_cost"),
    "ri_unused_upfront": (
        "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
        "reservation_unused_amortized_upfront_fee_for_billing_period",
    ),
    "ri_unused_recurring": ("reservation/UnusedRecurringFee", "reservation_unused_recurring_fee"),
    "sp_arn": ("savingsPlan/SavingsPlanARN", "savings_plan_savings_plan_a_r_n", "savings_plan_savings_plan_arn"),
    "sp_effective_cost": ("savingsPlan/SavingsPlanEffectiveCost", "savings_plan_savings_plan_effective_cost"),
    "sp_total_commitment": ("savingsPlan/TotalCommitmentToDate", "savings_plan_total_commitment_to_date"),
    "sp_used_commitment": ("savingsPlan/UsedCommitment", "savings_plan_used_commitment"),
    # CUR 2.0 map columns (JSON text in CSV, MAP in Parquet)
    "resource_tags": ("resource_tags",),
    "product_map": ("product",),
}
REQUIRED = ("line_item_type", "usage_start", "usage_end", "unblended_cost")
LEGACY_MARK, SNAKE_MARK = "lineItem/UnblendedCost", "line_item_unblended_cost"

# LineItemType (case-insensitive) -> FOCUS ChargeCategory. Credit is a FOCUS Credit; a Refund keeps the
# category of what it refunds (usage), as a negative amount. The converter's `Adjustment` is pre-1.0.
CHARGE_CATEGORY: dict[str, str] = {
    "Usage": "Usage",
    "DiscountedUsage": "Usage",
    "SavingsPlanCoveredUsage": "Usage",
    "SavingsPlanNegation": "Usage",
    "BundledDiscount": "Usage",
    "Discount": "Usage",
    "EdpDiscount": "Usage",
    "PrivateRateDiscount": "Usage",
    "Refund": "Usage",
    "RIFee": "Purchase",
    "Fee": "Purchase",
    "SavingsPlanUpfrontFee": "Purchase",
    "SavingsPlanRecurringFee": "Purchase",
    "Tax": "Tax",
    "Credit": "Credit",
}

# lineItem/ProductCode -> FOCUS ServiceCategory; any other product code is `Other`. Only codes whose
# category is unambiguous are listed: the ledger uses Storage / Networking / Compute for project-tagged
# lines (DESIGN §3), everything else lands in `other`.
SERVICE_CATEGORY: dict[str, str] = {
    "AmazonEC2": "Compute",
    "AmazonEKS": "Compute",
    "AWSLambda": "Compute",
    "AmazonS3": "Storage",
    "AmazonEFS": "Storage",
    "AmazonFSx": "Storage",
    "AmazonVPC": "Networking",
    "AWSDataTransfer": "Networking",
    "AmazonCloudFront": "Networking",
    "AmazonSageMaker": "AI and Machine Learning",
    "AmazonBedrock": "AI and Machine Learning",
}

# EC2 resource ids that are not ARNs -> FOCUS ResourceType (as AWS's own FOCUS export spells them).
RESOURCE_ID_TYPES = {r"^i-[0-9a-f]+$": "instance", r"^vol-[0-9a-f]+$": "volume"}

# a CUR 2.0 / Athena user-tag key prefix, and the AWS-generated tag prefix (dropped: not user tags)
USER_TAG_PREFIX = r"^(?i:user[:_])"
AWS_TAG_PREFIX = r"^(?i:aws[:_])"


def parse(path: Path, file: str) -> Parsed:
    try:
        raw, broken = read_table(path)
    except Exception as err:  # any unreadable file is quarantined whole, never fatal
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable file: {err}"))
    raw = raw.rename({c: c.strip() for c in raw.columns})
    cols = resolve_columns(raw.columns)
    lowered = {c.lower() for c in raw.columns}
    if LEGACY_MARK.lower() not in lowered and SNAKE_MARK.lower() not in lowered:
        return Parsed(
            rows=pl.DataFrame(),
            rejects=file_reject(SOURCE, file, f"not an AWS CUR file: no {LEGACY_MARK} or {SNAKE_MARK} column"),
        )
    missing = [COLUMNS[c][0] for c in REQUIRED if cols[c] is None]
    if missing:
        return Parsed(
            rows=pl.DataFrame(),
            rejects=file_reject(SOURCE, file, f"missing required CUR column(s): {', '.join(missing)}"),
        )
    parsed = focus.from_focus_frame(to_focus_frame(raw, cols), file, source=SOURCE)
    return add_broken_lines(parsed, SOURCE, file, broken)


def read_table(path: Path) -> tuple[pl.DataFrame, list[tuple[int, str, str]]]:
    """Every column as text with a `_row` column, and the CSV lines that could not be read. CSV and
    CSV.gz are read as FOCUS files are; Parquet values are rendered as text here, because CUR 2.0
    Parquet carries MAP columns (`resource_tags`, `product`) and zoned timestamps."""
    if not path.name.lower().endswith(".parquet"):
        return focus.read_table(path)
    df = pl.read_parquet(path)
    return df.select(_as_text(name, dtype) for name, dtype in df.schema.items()).with_row_index("_row", offset=1), []


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


def resolve_columns(columns: list[str]) -> dict[str, str | None]:
    """concept -> the file's header for it (case-insensitive), or None."""
    by_lower = {}
    for c in columns:
        by_lower.setdefault(c.lower(), c)
    return {
        concept: next((by_lower[n.lower()] for n in names if n.lower() in by_lower), None)
        for concept, names in COLUMNS.items()
    }


def to_focus_frame(raw: pl.DataFrame, cols: dict[str, str | None]) -> pl.DataFrame:
    """The CUR rows as FOCUS columns (text), followed by the raw CUR columns (kept for the quarantine
    payload; a CUR header that collides with a staging name is prefixed with `raw.`)."""
    text = {concept: (blank_to_null(c) if c else pl.lit(None, dtype=pl.String)) for concept, c in cols.items()}
    cur_names = list(raw.columns)
    raw, tags = _with_tags(raw, cols)
    tag_columns = set(raw.columns) - set(cur_names)
    kind = text["line_item_type"].str.to_lowercase()

    def is_type(*types: str) -> pl.Expr:
        return kind.is_in([t.lower() for t in types])

    unblended = _money(cols["unblended_cost"])
    effective = (
        pl.when(is_type("SavingsPlanCoveredUsage")).then(_money(cols["sp_effective_cost"]))
        .when(is_type("SavingsPlanRecurringFee"))
        .then(_decimal_sum(cols, [("sp_total_commitment", 1, True), ("sp_used_commitment", -1, False)]))
        .when(is_type("SavingsPlanNegation", "SavingsPlanUpfrontFee")).then(pl.lit("0"))
        .when(is_type("Fee") & text["ri_arn"].is_not_null()).then(pl.lit("0"))  # RI upfront fee
        .when(is_type("DiscountedUsage")).then(_money(cols["ri_effective_cost"]))
        .when(is_type("RIFee"))
        .then(_decimal_sum(cols, [("ri_unused_upfront", 1, False), ("ri_unused_recurring", 1, False)]))
        .otherwise(unblended)
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
    unused = is_type("SavingsPlanRecurringFee", "RIFee") & (effective.cast(MONEY, strict=False) != 0)
    status = (
        pl.when(commitment_id.is_null()).then(pl.lit(None, dtype=pl.String))
        .when(is_type("SavingsPlanCoveredUsage", "DiscountedUsage")).then(pl.lit("Used"))
        .when(unused.fill_null(False)).then(pl.lit("Unused"))
    )
    resource_id = pl.coalesce(text["resource_id"], pl.when(status == "Unused").then(commitment_id))
    line_id = pl.when(text["time_interval"].is_not_null()).then(
        pl.format("{}/{}", text["line_item_id"], text["time_interval"])
    ).otherwise(text["line_item_id"])

    focus_columns = {
        "x_LineItemId": line_id,
        "BillingAccountId": text["payer_account_id"],
        "SubAccountId": text["usage_account_id"],
        "InvoiceId": text["invoice_id"],
        "BillingCurrency": text["currency"],
        "BillingPeriodStart": _time(cols["billing_period_start"]),
        "BillingPeriodEnd": _time(cols["billing_period_end"]),
        "ChargePeriodStart": _time(cols["usage_start"]),
        "ChargePeriodEnd": _time(cols["usage_end"]),
        "ChargeCategory": category,
        "ChargeDescription": text["description"],
        "BilledCost": pl.coalesce(_money(cols["net_unblended_cost"]), unblended),
        "EffectiveCost": effective,
        "ListCost": _money(cols["public_on_demand_cost"]),
        "PricingQuantity": _quantity(cols["usage_amount"]),
        "ConsumedQuantity": pl.when(category == "Usage").then(_quantity(cols["usage_amount"])),
        "PricingUnit": text["pricing_unit"],
        "CommitmentDiscountId": commitment_id,
        "CommitmentDiscountType": pl.when(is_type(*sp_types)).then(pl.lit("Savings Plan"))
        .when(ri).then(pl.lit("Reservation")),
        "CommitmentDiscountCategory": pl.when(is_type(*sp_types)).then(pl.lit("Spend"))
        .when(ri).then(pl.lit("Usage")),
        "CommitmentDiscountStatus": status,
        "ProviderName": pl.lit("AWS"),
        "ResourceId": resource_id,
        "ResourceType": _resource_type(resource_id),
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
    taken = set(focus_columns) | set(focus.STAGED) | {"_idx", "_errors"}
    cur_columns = [c for c in raw.columns if c != "_row" and c not in tag_columns]
    return raw.select(
        "_row",
        *[expr.cast(pl.String).alias(name) for name, expr in focus_columns.items()],
        *[pl.col(c).alias(RAW + c if c in taken else c) for c in cur_columns],
    )


def _money(col: str | None) -> pl.Expr:
    """A CUR amount as text for FOCUS; an unreadable one as `<column>=<value>`."""
    if col is None:
        return pl.lit(None, dtype=pl.String)
    return _flag_broken(col, blank_to_null(col).cast(MONEY, strict=False))


def _quantity(col: str | None) -> pl.Expr:
    if col is None:
        return pl.lit(None, dtype=pl.String)
    return _flag_broken(col, blank_to_null(col).cast(pl.Float64, strict=False))


def _time(col: str | None) -> pl.Expr:
    if col is None:
        return pl.lit(None, dtype=pl.String)
    return _flag_broken(col, to_utc(col))


def _flag_broken(col: str, parsed: pl.Expr) -> pl.Expr:
    value = blank_to_null(col)
    return pl.when(value.is_not_null() & parsed.is_null()).then(pl.format("{}={}", pl.lit(col), value)).otherwise(value)


def _decimal_sum(cols: dict[str, str | None], terms: list[tuple[str, int, bool]]) -> pl.Expr:
    """Σ sign·term in exact DECIMAL, as text. A missing term counts as 0 unless it is required (then
    the sum is null and the contract rejects the row); none present gives null; an unreadable term
    gives `<column>=<value>`."""
    present, broken, required_missing = [], [], []
    for concept, sign, required in terms:
        col = cols[concept]
        if col is None:
            if required:
                return pl.lit(None, dtype=pl.String)
            continue
        value = blank_to_null(col)
        number = value.cast(MONEY, strict=False)
        present.append((sign, value, number))
        broken.append(pl.when(value.is_not_null() & number.is_null()).then(pl.format("{}={}", pl.lit(col), value)))
        if required:
            required_missing.append(value.is_null())
    if not present:
        return pl.lit(None, dtype=pl.String)
    total = pl.lit(0, dtype=MONEY)
    for sign, _, number in present:
        total = total + number.fill_null(0) if sign > 0 else total - number.fill_null(0)
    all_missing = pl.all_horizontal([value.is_null() for _, value, _ in present])
    missing = pl.any_horizontal(required_missing) if required_missing else pl.lit(False)
    problems = pl.concat_list(broken).list.drop_nulls()
    return (
        pl.when(problems.list.len() > 0).then(problems.list.join("; "))
        .when(all_missing | missing).then(pl.lit(None, dtype=pl.String))
        .otherwise(total.cast(MONEY).cast(pl.String))
    )


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


def _with_tags(raw: pl.DataFrame, cols: dict[str, str | None]) -> tuple[pl.DataFrame, pl.Expr]:
    """The FOCUS Tags expression (a JSON object text, null without tags) over every user-tag source:
    legacy `resourceTags/user:<key>` columns, Athena `resource_tags_user_<key>` columns and the CUR 2.0
    `resource_tags` map. A map that is not a JSON object is passed on whole so the contract rejects it.
    Returns `raw` with the map's keys added as `__tag<n>` columns (helpers, not CUR columns)."""
    by_key: dict[str, list[pl.Expr]] = {}
    for c in raw.columns:
        low = c.lower()
        for prefix in ("resourcetags/user:", "resource_tags_user_"):
            if low.startswith(prefix) and len(c) > len(prefix):
                by_key.setdefault(c[len(prefix):], []).append(blank_to_null(c))
    invalid_map = pl.lit(None, dtype=pl.String)
    map_col = cols["resource_tags"]
    if map_col is not None:
        text = blank_to_null(map_col)
        valid = text.str.json_path_match("$").str.starts_with("{").fill_null(False)
        invalid_map = pl.when(text.is_not_null() & ~valid).then(text)
        decoded = raw.select(pl.when(valid).then(text)).to_series()
        if decoded.drop_nulls().len():
            fields = decoded.str.json_decode(infer_schema_length=None)
            if isinstance(fields.dtype, pl.Struct) and fields.dtype.fields:
                unnested = fields.struct.unnest()
                added = {}
                for i, name in enumerate(unnested.columns):
                    if pl.Series([name]).str.contains(AWS_TAG_PREFIX).item():
                        continue
                    key = pl.Series([name]).str.replace(USER_TAG_PREFIX, "").item()
                    series = unnested[name]
                    value = series if series.dtype == pl.String else unnested.select(
                        pl.when(pl.col(name).is_not_null()).then(_json_value(pl.col(name)).str.strip_chars('"'))
                    ).to_series()
                    added[f"__tag{i}"] = value
                    by_key.setdefault(key, []).append(blank_to_null(f"__tag{i}"))
                raw = raw.with_columns(**added)
    parts = [
        pl.when(value.is_not_null()).then(pl.lit(json.dumps(key) + ":") + _json_value(value))
        for key, values in sorted(by_key.items())
        for value in [pl.coalesce(values)]
    ]
    if not parts:
        return raw, invalid_map
    pairs = pl.concat_list(parts).list.drop_nulls()
    built = pl.when(pairs.list.len() > 0).then(pl.lit("{") + pairs.list.join(",") + pl.lit("}"))
    return raw, pl.coalesce(invalid_map, built)
