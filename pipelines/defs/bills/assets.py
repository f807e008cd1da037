from pipelines.ingest.sources import BILLS
from pipelines.ingest.staging_asset import staging_asset

stg_focus__bill_lines = staging_asset(
    *BILLS,
    description="""FOCUS 1.0–1.2 cost and usage rows from `bills/focus/`, and AWS CUR rows (legacy or 2.0 headers)
from `bills/aws_cur/` converted to FOCUS (CSV, CSV.gz, Parquet), cast to exact
DECIMAL money and UTC timestamps. Each bill file is read once; a re-delivered (restated) file
replaces its earlier rows. Bad rows go to ops.quarantine with their amounts.""",
)
