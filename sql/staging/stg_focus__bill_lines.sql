-- FOCUS 1.0–1.2 cost and usage rows, one per landed bill line (AWS CUR arrives here converted to FOCUS).
-- Timestamps are UTC; money is exact DECIMAL. `tags` is the FOCUS Tags JSON object with keys trimmed.
-- Amounts are stored at 1e-18, rounded half-even; `*_rounding` is what that took off, so
-- billed_cost + billed_cost_rounding is exactly the amount the file wrote (|rounding| <= 0.5e-18).
CREATE TABLE IF NOT EXISTS staging.stg_focus__bill_lines (
    _file                   VARCHAR NOT NULL,
    _row                    BIGINT NOT NULL,
    source                  VARCHAR NOT NULL,   -- focus | aws_cur
    line_id                 VARCHAR,            -- x_LineItemId / identity/LineItemId when the export has one
    billing_account_id      VARCHAR,
    billing_account_name    VARCHAR,
    billing_currency        VARCHAR,
    billing_period_start    TIMESTAMP,
    billing_period_end      TIMESTAMP,
    charge_period_start     TIMESTAMP NOT NULL,
    charge_period_end       TIMESTAMP NOT NULL,
    charge_category         VARCHAR NOT NULL,   -- Usage | Purchase | Tax | Credit | Adjustment
    charge_class            VARCHAR,            -- Correction or NULL
    charge_frequency        VARCHAR,
    charge_description      VARCHAR,
    pricing_category        VARCHAR,
    pricing_quantity        DOUBLE,
    pricing_unit            VARCHAR,
    pricing_currency        VARCHAR,
    consumed_quantity       DOUBLE,
    consumed_unit           VARCHAR,
    list_cost               DECIMAL(38, 18),
    contracted_cost         DECIMAL(38, 18),
    billed_cost             DECIMAL(38, 18) NOT NULL,
    effective_cost          DECIMAL(38, 18) NOT NULL,
    billed_cost_rounding    DECIMAL(38, 38) DEFAULT 0,
    effective_cost_rounding DECIMAL(38, 38) DEFAULT 0,
    commitment_discount_id       VARCHAR,
    commitment_discount_type     VARCHAR,
    commitment_discount_category VARCHAR,
    commitment_discount_status   VARCHAR,   -- Used | Unused
    provider_name           VARCHAR,            -- ServiceProviderName (1.3), else ProviderName
    host_provider_name      VARCHAR,            -- HostProviderName (1.3)
    publisher_name          VARCHAR,
    invoice_issuer_name     VARCHAR,
    invoice_id              VARCHAR,
    region_id               VARCHAR,
    resource_id             VARCHAR,
    resource_name           VARCHAR,
    resource_type           VARCHAR,
    service_category        VARCHAR,
    service_name            VARCHAR,
    service_subcategory     VARCHAR,
    sku_id                  VARCHAR,
    sub_account_id          VARCHAR,
    sub_account_name        VARCHAR,
    tags                    VARCHAR
);
-- A warehouse built before amounts were kept with their rounding gains the columns (its rows were
-- exact then: anything finer than 1e-18 was refused, so their rounding is 0).
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS billed_cost_rounding DECIMAL(38, 38) DEFAULT 0;
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS effective_cost_rounding DECIMAL(38, 38) DEFAULT 0;
-- A warehouse built before these FOCUS columns were staged gains them, NULL on the lines staged then
-- (the FOCUS export carries them from each origin line).
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS billing_account_name VARCHAR;
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS pricing_currency VARCHAR;
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS host_provider_name VARCHAR;
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS publisher_name VARCHAR;
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS invoice_issuer_name VARCHAR;
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS service_subcategory VARCHAR;
ALTER TABLE staging.stg_focus__bill_lines ADD COLUMN IF NOT EXISTS sub_account_name VARCHAR;
