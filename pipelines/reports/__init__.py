"""Reports read from the warehouse's marts; `gpuledger report` and the report assets call these."""

from pipelines.reports.period import period_of
from pipelines.reports.waste import DEFAULT_REPORTS, check_report_request, write_team_report

__all__ = ["DEFAULT_REPORTS", "check_report_request", "period_of", "write_team_report"]
