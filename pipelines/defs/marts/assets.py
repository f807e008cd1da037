from pipelines.engines.sql_asset import sql_asset

fct_cost_daily = sql_asset(
    "marts/fct_cost_daily",
    group="marts",
    description="""Cost per day × team × project × category (productive, rerun_loss, allocated_idle,
failed_job, unmonitored, idle_unallocated, storage, network, compute_other, other, shared,
unused_commitment, tax, credit, unattributed), EffectiveCost and BilledCost in DECIMAL. Each day sums
exactly to the day's share of the bill.""",
)

fct_job_cost = sql_asset(
    "marts/fct_job_cost",
    group="marts",
    description="""Each job's cost and GPU-seconds per day, split by ledger category, with its run, team,
project and user.""",
)

fct_rerun_loss = sql_asset(
    "marts/fct_rerun_loss",
    group="marts",
    description="""Work lost to each interruption of a training run: GPU-seconds since the last
checkpoint, restart GPU-seconds of the resuming job, and their cost.""",
)

fct_idle_waste_daily = sql_asset(
    "marts/fct_idle_waste_daily",
    group="marts",
    description="""Idle GPU-seconds per day, team and node — billed but unallocated, and allocated but
inactive — and what they cost.""",
)

fct_run_efficiency_daily = sql_asset(
    "marts/fct_run_efficiency_daily",
    group="marts",
    description="""Per run and day: tokens and kept tokens, MFU (on productive GPU-seconds) and effective
MFU (on all of the run's GPU-seconds), goodput, cost per 1M tokens, the cost of 1M tokens at the
target MFU, and the cost of running below target. The FLOPs convention is stored with each row.""",
)

fct_job_efficiency_daily = sql_asset(
    "marts/fct_job_efficiency_daily",
    group="marts",
    description="""Busy but under-used, per day, job and currency: productive GPU-seconds at low SM activity
and their cost, mean SM and tensor activity, peak memory against the GPU's, GPUs held but never active and
the right size, and the smallest GPU or MIG profile that holds the job's memory, with its cost at the
fleet's price when cheaper. A lens on productive time; the ledger's categories are unchanged.""",
)

fct_user_cost_daily = sql_asset(
    "marts/fct_user_cost_daily",
    group="marts",
    description="""Cost per day × team × user × category × currency, as `sreport user top` gives it: the
node-hour cost of each user's jobs by ledger category, with the low-activity GPU-seconds and cost of their
productive time. A team's users add up to its jobs' part of fct_cost_daily.""",
)

fct_gpu_price_daily = sql_asset(
    "marts/fct_gpu_price_daily",
    group="marts",
    description="""What a GPU-hour of each GPU model cost the fleet over the 30 days ending on the day, per
currency: every billed GPU-second of its nodes and what they cost. The price plan and the under-use lens
use.""",
)

fct_savings_opportunities = sql_asset(
    "marts/fct_savings_opportunities",
    group="marts",
    description="""What to do, ranked in money: each day, over the trailing `savings.window_days` (30), the
opportunities the ledger sees — cancel hung batch jobs, time out idle interactive sessions, right-size
jobs, release idle on-demand nodes, reduce unused commitments, commit to the steady on-demand base,
checkpoint at the Young–Daly interval, raise MFU — each with its subject, evidence, one-sentence action
and what it would have saved over the window and per month. A GPU-second's money is saved by at most one
opportunity; a day's opportunities never sum past the window's cost.""",
)

dim_nodes = sql_asset(
    "marts/dim_nodes",
    group="marts",
    description="""GPU nodes per day: cluster, cloud resource id, GPU model (as reported and as the
catalog knows it) and count, pool and owning team, and whether they came from the inventory, bill
tags or telemetry.""",
)

dim_projects = sql_asset(
    "marts/dim_projects",
    group="marts",
    description="""Teams and projects carrying cost on the day, with their job count and cost.""",
)

fct_node_hourly = sql_asset(
    "marts/fct_node_hourly",
    group="marts",
    description="""Each billed node-hour by team and ledger category: GPU-seconds and cost. The hourly grain
behind the idle-waste mart, for heatmaps of idle GPUs by node and hour.""",
)

fct_config_cost_daily = sql_asset(
    "marts/fct_config_cost_daily",
    group="marts",
    description="""The cost lines generated from the config (rate cards, contracts, owned hardware
depreciation and facility, energy) per day, invoice month, currency and cost source: what reconciliation
compares the ledger to beside the bill.""",
)

fct_bill_daily = sql_asset(
    "marts/fct_bill_daily",
    group="marts",
    description="""The bill as landed, per day and invoice month: the day's share of every line's
EffectiveCost and BilledCost, with the quarantined lines' part shown apart. Reconciliation compares
the ledger to it.""",
)

fct_run_badput_daily = sql_asset(
    "marts/fct_run_badput_daily",
    group="marts",
    description="""The badput of each run per day: every GPU-second of the run's jobs and its cost in exactly
one kind — disruption (rerun loss), idle (allocated idle), failed, unmonitored, and the productive time
split into startup, checkpoint_save, evaluation, data_wait, exposed_communication and goodput (from
the trainer's phase events and step timers). Per run, day and currency the kinds sum exactly to the
run's GPU-seconds and cost in fct_run_efficiency_daily.""",
)

fct_run_overhead_daily = sql_asset(
    "marts/fct_run_overhead_daily",
    group="marts",
    description="""Per run and day: the queue wait of its jobs (Submit to Start, seconds and GPU-hours), its
checkpoints, their observed interval and blocking save time, its observed MTBF, the Young–Daly interval
for them, and what the difference between observed and optimal checkpoint overhead cost.""",
)
