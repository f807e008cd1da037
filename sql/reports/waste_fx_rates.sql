-- The config's exchange rates into its one reporting currency (finance.fx_rates, docs/tables.md#financefx_rates):
-- units of the reporting currency per unit of `currency` in `month`; the reporting currency itself at 1
-- (month NULL). Empty when the config has no `fx:` rates: then the report converts nothing.
SELECT currency, month, rate, source, reporting_currency
FROM finance.fx_rates
ORDER BY currency, month NULLS FIRST
