"""Raising alerts from sql/alerts/*.sql into ops.alerts, for the daily asset, the live sensor and the CLI
(docs/plans.md#alerts). Sits on lib and ingest; the Dagster definitions and the CLI sit on it."""
