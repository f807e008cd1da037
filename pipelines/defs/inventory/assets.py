from pipelines.ingest.sources import INVENTORY
from pipelines.ingest.staging_asset import staging_asset

stg_inventory__nodes = staging_asset(
    INVENTORY,
    description="""The optional node inventory `inventory/nodes.csv`: hostname, cluster, cloud resource id, GPU
model and count, pool and owning team. Without it, nodes are found through bill tags.""",
)
