"""The one partitioning every daily asset shares: UTC calendar days."""

import dagster as dg

DAILY = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="UTC")
