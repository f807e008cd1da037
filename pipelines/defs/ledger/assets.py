from pipelines.engines.sql_asset import sql_asset

int_bill_line_hours = sql_asset(
    "intermediate/int_bill_line_hours",
    group="ledger",
    description="""The day's hourly pieces of every bill line, staged or quarantined: each line is cut
over the hours of its charge period by time and its EffectiveCost and BilledCost split exactly
(largest remainder), so a line spanning days lands on each day in proportion to time.""",
)

int_nodes = sql_asset(
    "intermediate/int_nodes",
    group="ledger",
    description="""GPU nodes known on the day, with cluster, cloud resource id, GPU model and count, pool and
pool-owning team: from the inventory, else from bill tags, else from telemetry. A GPU model the
catalog does not know is noted in ops.quarantine (MFU on it stays NULL).""",
)

int_node_hours = sql_asset(
    "intermediate/int_node_hours",
    group="ledger",
    description="""Each billed hour of each GPU node: its cost (EffectiveCost, BilledCost) and billed GPU
capacity, from the instance lines matched to the node by ResourceId or node tag.""",
)

int_job_allocations = sql_asset(
    "intermediate/int_job_allocations",
    group="ledger",
    description="""Job allocations that held GPUs on the day (latest sacct record of each), with project,
team and run, and the rerun-loss windows of interrupted and resuming jobs.""",
)

int_job_conflicts = sql_asset(
    "intermediate/int_job_conflicts",
    group="ledger",
    description="""Jobs that claim GPUs a node does not have free (two jobs on the same GPUs at once): left
out of the GPU-second ledger so no GPU-second counts twice, and their records quarantined with the
jobs already holding the GPUs.""",
)

int_gpu_seconds = sql_asset(
    "intermediate/int_gpu_seconds",
    group="ledger",
    description="""Allocated GPU-seconds per job, host, hour and category (rerun_loss, allocated_idle,
failed_job, unmonitored, productive, in that precedence), by interval arithmetic over job windows,
telemetry idle stretches and gaps, and rerun windows.""",
)

int_node_hour_energy = sql_asset(
    "intermediate/int_node_hour_energy",
    group="ledger",
    description="""Energy of each GPU node-hour: kWh from DCGM power (else the model's TDP while jobs hold
the GPUs), times PUE, and its CO2e at the config's grid intensity. Quantities for every GPU, cloud ones
included; energy is priced only where the config says power is paid apart.""",
)

int_config_cost_lines = sql_asset(
    "intermediate/int_config_cost_lines",
    group="ledger",
    description="""Cost lines from the organisation config for fleets without a bill — rate cards,
contracts, owned hardware (depreciation, facility) and energy — per line, node and hour, in the shape of
bill lines and marked with their cost_source. A node-hour a bill line covers takes none (the bill wins).""",
)

int_bill_line_placements = sql_asset(
    "intermediate/int_bill_line_placements",
    group="ledger",
    description="""Every bill line of the day that is not a GPU node-hour, with its day share and where it
goes: to its tagged project (storage, network, compute_other, other), shared by GPU cost, tax and
credit by pre-tax cost, unused commitment to the pool owner, or unattributed. The ledger and the
FOCUS export both read it.""",
)

int_cost_allocations = sql_asset(
    "intermediate/int_cost_allocations",
    group="ledger",
    description="""Every dollar of the day's bill placed on a team, project and category (and job and
node for node-hours), by largest remainder so the day sums exactly to the bill.""",
)
