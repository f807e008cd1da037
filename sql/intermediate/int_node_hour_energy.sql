-- The energy of each GPU node-hour of $day (docs/ledger.md#energy-kwh-and-co2e): per GPU, its mean DCGM
-- power over the hour's minutes that have a reading, for the whole hour (a GPU draws power between
-- scrapes too); a node-hour without any power reading takes its GPU model's TDP for the GPU-seconds
-- jobs held there (idle GPUs without telemetry count nothing). `gpu_kwh` is the GPUs' energy, rounded
-- to 1e-9 kWh (the quantity energy cost lines are priced on); `kwh` is the facility's, times the
-- config's PUE; `co2e_kg` is `kwh` times the grid intensity. Quantities, not money, but kept in
-- decimals (to 1e-12) down to the marts, so every re-run adds them up to the same figures.
WITH gpu_hours AS (
    -- in exact decimals: a re-run must give the same kWh, whatever order DuckDB adds the minutes in
    SELECT hostname, date_trunc('hour', minute_ts) AS hour_ts, gpu,
           (sum(power_avg_w::DECIMAL(38, 12)) / count(*))::DECIMAL(38, 12) AS power_w
    FROM staging.stg_dcgm__gpu_minutes
    WHERE day = $day AND gpu_instance IS NULL AND power_avg_w IS NOT NULL
    GROUP BY ALL
),
measured AS (
    SELECT hostname, hour_ts, sum(power_w) / 1000 AS gpu_kwh   -- W for one hour, in kWh
    FROM gpu_hours GROUP BY ALL
),
allocated AS (
    SELECT g.hostname, g.hour_ts, sum(g.gpu_seconds) AS gpu_seconds
    FROM intermediate.int_gpu_seconds g WHERE g.day = $day GROUP BY ALL
),
by_tdp AS (
    SELECT a.hostname, a.hour_ts, (a.gpu_seconds * t.tdp_w / 3600000)::DECIMAL(38, 12) AS gpu_kwh
    FROM allocated a
    JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = a.hostname
    JOIN intermediate.ref_gpu_tdp t ON t.gpu_model = gpu_model_canonical(n.gpu_model)
    ANTI JOIN measured m ON m.hostname = a.hostname AND m.hour_ts = a.hour_ts
),
energy AS (
    SELECT hostname, hour_ts, gpu_kwh, 'dcgm_power' AS energy_basis FROM measured
    UNION ALL
    SELECT hostname, hour_ts, gpu_kwh, 'tdp_allocated' FROM by_tdp
)
SELECT $day::DATE AS day, hostname, hour_ts,
       round(gpu_kwh, 9)::DECIMAL(18, 9) AS gpu_kwh,
       (round(gpu_kwh, 9) * $energy_pue::DECIMAL(18, 6))::DECIMAL(38, 12) AS kwh,
       (round(gpu_kwh, 9) * $energy_pue::DECIMAL(18, 6) * $kg_co2e_per_kwh::DECIMAL(18, 6))::DECIMAL(38, 12) AS co2e_kg,
       energy_basis
FROM energy
