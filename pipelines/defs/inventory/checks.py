from pipelines.defs.inventory.assets import stg_inventory__nodes
from pipelines.ingest.sources import INVENTORY
from pipelines.ingest.staging_asset import contract_check

inventory_contract = contract_check(stg_inventory__nodes, INVENTORY)
