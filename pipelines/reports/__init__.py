"""Reports read from the warehouse's marts; `gpuledger report` and the report assets call these."""

from pipelines.reports.period import period_of
from pipelines.reports.waste import DEFAULT_REPORTS, write_team_report

__all__ = ["DEFAULT_REPORTS", "period_of", "write_team_report"]
