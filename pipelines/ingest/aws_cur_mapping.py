"""The tables of the AWS CUR → FOCUS mapping (pipelines/ingest/aws_cur.py): which header holds each
concept (legacy CUR and CUR 2.0 / Athena spellings), how LineItemType and ProductCode map to FOCUS
ChargeCategory and ServiceCategory, the resource-id types and tag prefixes, and a file's header resolved
by them. The rules are focus-converters' `aws-cur` ones (docs/ingest/aws_cur.md)."""

from __future__ import annotations

# concept -> header spellings: legacy CUR first, then Athena / CUR 2.0. Matched case-insensitively,
# the first one present wins.
COLUMNS: dict[str, tuple[str, ...]] = {
    "line_item_id": ("identity/LineItemId", "identity_line_item_id"),
    "time_interval": ("identity/TimeInterval", "identity_time_interval"),
    "invoice_id": ("bill/InvoiceId", "bill_invoice_id"),
    "payer_account_id": ("bill/PayerAccountId", "bill_payer_account_id"),
    "payer_account_name": ("bill/PayerAccountName", "bill_payer_account_name"),
    "invoicing_entity": ("bill/InvoicingEntity", "bill_invoicing_entity"),
    "billing_period_start": ("bill/BillingPeriodStartDate", "bill_billing_period_start_date"),
    "billing_period_end": ("bill/BillingPeriodEndDate", "bill_billing_period_end_date"),
    "usage_account_id": ("lineItem/UsageAccountId", "line_item_usage_account_id"),
    "usage_account_name": ("lineItem/UsageAccountName", "line_item_usage_account_name"),
    "legal_entity": ("lineItem/LegalEntity", "line_item_legal_entity"),
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
    "pricing_currency": ("pricing/currency", "pricing_currency"),
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
# concepts that only describe a line: no check reads them and no amount depends on them
DESCRIPTIVE = ("invoice_id", "payer_account_id", "payer_account_name", "invoicing_entity", "usage_account_id",
               "usage_account_name", "legal_entity", "product_code", "resource_id", "description", "product_name",
               "region", "sku", "pricing_unit", "pricing_currency", "product_map")
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
# lines (docs/ledger.md), everything else lands in `other`.
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


def cur_columns(header: list[str], descriptive: bool = True) -> list[str]:
    """The CUR columns the FOCUS mapping reads: every concept's column (without `descriptive`, not
    those of DESCRIPTIVE) and every user-tag source. The other columns (a legacy CUR has about 90) are
    read only for the payload of quarantined rows."""
    wanted = {c for concept, c in resolve_columns(header).items() if c and (descriptive or concept not in DESCRIPTIVE)}
    return [c for c in header if c in wanted or tag_key(c) is not None]


def tag_key(column: str) -> str | None:
    """The user-tag key a `resourceTags/user:<key>` or `resource_tags_user_<key>` column holds."""
    low = column.lower()
    for prefix in ("resourcetags/user:", "resource_tags_user_"):
        if low.startswith(prefix) and len(column) > len(prefix):
            return column[len(prefix):].strip()
    return None


def resolve_columns(columns: list[str]) -> dict[str, str | None]:
    """concept -> the file's header for it (case-insensitive), or None."""
    by_lower = {}
    for c in columns:
        by_lower.setdefault(c.lower(), c)
    return {
        concept: next((by_lower[n.lower()] for n in names if n.lower() in by_lower), None)
        for concept, names in COLUMNS.items()
    }
