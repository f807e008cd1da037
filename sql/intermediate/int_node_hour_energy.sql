-- The energy of each GPU node-hour of $day (docs/ledger.md#energy-kwh-and-co2e). Per GPU and hour,
-- the first of:
--   the DCGM energy counter (TOTAL_ENERGY_CONSUMPTION, mJ): what it rose by over the hour, each minute's
--     last reading against the minute before's, where the readings run on without a break of more than
--     5 minutes (the GPU's first minute of the day counts from its own first reading) and never fall
--     back (a driver reload restarts the counter): it measures between scrapes too;
--   its mean DCGM power over the hour's minutes that have a reading, for the whole hour (a GPU draws
--     power between scrapes too);
-- and a node-hour without any reading takes its GPU model's TDP for the GPU-seconds jobs held there
-- (idle GPUs without telemetry count nothing). `gpu_kwh` is the GPUs' energy, rounded to 1e-9 kWh (the
-- quantity energy cost lines are priced on); `kwh` is the facility's, times the config's PUE;
-- `co2e_kg` is `kwh` times the grid intensity. Quantities, not money, but kept in decimals (to 1e-12)
-- down to the marts, so every re-run adds them up to the same figures.
WITH counter_minutes AS (
    -- a GPU's counter per minute, whichever job labels its series had that minute
    SELECT hostname, gpu, minute_ts,
           arg_min(energy_first_mj, first_sample_ts)::DECIMAL(38, 3) AS first_mj,
           arg_max(energy_last_mj, last_sample_ts)::DECIMAL(38, 3) AS last_mj
    FROM staging.stg_dcgm__gpu_minutes
    WHERE day = $day AND gpu_instance IS NULL AND energy_last_mj IS NOT NULL
    GROUP BY ALL
),
counter_steps AS (
    SELECT hostname, gpu, date_trunc('hour', minute_ts) AS hour_ts,
           CASE WHEN lag(minute_ts) OVER w IS NULL THEN last_mj - first_mj
                WHEN minute_ts - lag(minute_ts) OVER w <= INTERVAL 5 MINUTE THEN last_mj - lag(last_mj) OVER w
           END AS rise_mj   -- NULL: the readings broke off before this minute
    FROM counter_minutes
    WINDOW w AS (PARTITION BY hostname, gpu ORDER BY minute_ts)
),
counter_hours AS (
    -- in exact decimals, as power below: a sum of DOUBLEs depends on the order it is added in (threads,
    -- Spark's partitions), which moved a day's kWh by 1e-12 between two runs
    SELECT hostname, hour_ts, gpu, (sum(rise_mj::DECIMAL(38, 6)) / 3600000000)::DECIMAL(38, 12) AS gpu_kwh  -- mJ -> kWh
    FROM counter_steps
    GROUP BY ALL
    HAVING count(*) = count(rise_mj) AND min(rise_mj) >= 0
),
power_hours AS (
    -- in exact decimals: a re-run must give the same kWh, whatever order DuckDB adds the minutes in
    SELECT hostname, date_trunc('hour', minute_ts) AS hour_ts, gpu,
           (sum(power_avg_w::DECIMAL(38, 12)) / count(*))::DECIMAL(38, 12) AS power_w
    FROM staging.stg_dcgm__gpu_minutes
    WHERE day = $day AND gpu_instance IS NULL AND power_avg_w IS NOT NULL
    GROUP BY ALL
),
gpu_hours AS (
    SELECT hostname, hour_ts, gpu, gpu_kwh, TRUE AS by_counter FROM counter_hours
    UNION ALL
    SELECT p.hostname, p.hour_ts, p.gpu, (p.power_w / 1000)::DECIMAL(38, 12), FALSE   -- W for one hour, in kWh
    FROM power_hours p
    ANTI JOIN counter_hours c ON c.hostname = p.hostname AND c.hour_ts = p.hour_ts AND c.gpu = p.gpu
),
measured AS (
    SELECT hostname, hour_ts, sum(gpu_kwh) AS gpu_kwh,
           CASE WHEN bool_and(by_counter) THEN 'dcgm_energy' ELSE 'dcgm_power' END AS energy_basis
    FROM gpu_hours GROUP BY ALL
),
allocated AS (
    SELECT g.hostname, g.hour_ts, sum(g.gpu_seconds) AS gpu_seconds
    FROM intermediate.int_gpu_seconds g WHERE g.day = $day GROUP BY ALL
),
by_tdp AS (
    SELECT a.hostname, a.hour_ts, (a.gpu_seconds * t.tdp_w / 3600000)::DECIMAL(38, 12) AS gpu_kwh
    FROM allocated a
    -- the canonical model named in a projection, not in the join condition: Spark joins on no subquery
    JOIN (SELECT n.hostname, gpu_model_canonical(n.gpu_model) AS gpu_model
          FROM intermediate.int_nodes n WHERE n.day = $day) n ON n.hostname = a.hostname
    JOIN intermediate.ref_gpu_tdp t ON t.gpu_model = n.gpu_model
    ANTI JOIN measured m ON m.hostname = a.hostname AND m.hour_ts = a.hour_ts
),
energy AS (
    SELECT hostname, hour_ts, gpu_kwh, energy_basis FROM measured
    UNION ALL
    SELECT hostname, hour_ts, gpu_kwh, 'tdp_allocated' FROM by_tdp
)
SELECT $day::DATE AS day, hostname, hour_ts,
       round(gpu_kwh, 9)::DECIMAL(18, 9) AS gpu_kwh,
       (round(gpu_kwh, 9) * $energy_pue::DECIMAL(18, 6))::DECIMAL(38, 12) AS kwh,
       (round(gpu_kwh, 9) * $energy_pue::DECIMAL(18, 6) * $kg_co2e_per_kwh::DECIMAL(18, 6))::DECIMAL(38, 12) AS co2e_kg,
       energy_basis
FROM energy
