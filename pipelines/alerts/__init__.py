"""Alerts beyond the daily asset: raising them from sql/alerts/*.sql into ops.alerts (for the daily
asset, the live sensor and the CLI; docs/plans.md#alerts) and delivering them — the messages, the
channels that carry them, the delivery pass and the actions alerts run (docs/plans.md#delivery).
Sits on lib and ingest; the Dagster definitions and the CLI sit on it."""
