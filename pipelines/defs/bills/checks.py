from pipelines.defs.bills.assets import stg_focus__bill_lines
from pipelines.ingest.sources import BILLS
from pipelines.ingest.staging_asset import contract_check

bills_contract = contract_check(stg_focus__bill_lines, *BILLS)
