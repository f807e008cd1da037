-- Builds, for $day, the intervals that decide each allocated GPU-second's category (see
-- int_gpu_seconds.sql). Each job's GPUs on each host are "slots": with DCGM job labels (hpc_job, or
-- namespace/pod) the labelled GPUs are slots of their own; a host without job labels judges the job by
-- all the host's GPUs together (a minute is idle only if every GPU on the host is idle), which never
-- overstates idle; allocated GPUs that no label covers on a labelled host have no telemetry.
-- A slice of a shared GPU (a MIG instance, a stated fraction: `gpu_slices`) is a slot of its own with
-- its share of the GPU (`share_units`, share_units_per_gpu() a GPU): judged by the MIG instance's own
-- series (GPU_I_ID) where its label shows it, else by the physical GPU's (the labelled GPU series, or the
-- GPU the record names), else as a whole GPU would be.

-- the job's time on each of its hosts, within the day; `near_*` widens it by one idle stretch on each
-- side of midnight (still within the job) so a stretch crossing midnight is judged whole, and before
-- midnight by as long as the policies' idle limits too, so a stretch's start is known that far back
-- (the savings opportunities price the idle time past those limits: int_gpu_seconds.sql)
CREATE OR REPLACE TEMP TABLE job_hosts AS
SELECT j.job_uid, j.job_id, j.job_key, h.hostname, j.gpu_index,
       slices_on_host(j.gpu_slices, coalesce(j.node_count, len(j.hosts)), h.k) AS host_slices,
       greatest(j.start_ts, $day::DATE - to_minutes($idle_lookback_minutes::BIGINT)) AS near_start,
       least(j.end_eff, $day::DATE + INTERVAL 1 DAY + to_minutes($idle_min_minutes::BIGINT)) AS near_end,
       coalesce(j.gpus // nullif(coalesce(j.node_count, len(j.hosts)), 0), n.gpu_count, 0) AS gpus_on_host,
       greatest(j.start_ts, $day::DATE::TIMESTAMP) AS w_start,
       least(j.end_eff, $day::DATE + INTERVAL 1 DAY) AS w_end
FROM intermediate.int_job_allocations j, unnest(j.hosts) WITH ORDINALITY AS h(hostname, k)
LEFT JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = h.hostname
WHERE j.day = $day
  AND j.job_uid NOT IN (SELECT job_uid FROM intermediate.int_job_conflicts WHERE day = $day);

-- the telemetry minutes around the day are gpu_minutes_near(...) (sql/macros/50_dcgm_rollup.sql), read where
-- they are used rather than copied: a copy of a fleet's day of minutes would be most of this step's memory
CREATE OR REPLACE TEMP TABLE labelled_slots AS
WITH labels AS (
    SELECT DISTINCT hostname, gpu, hpc_job FROM gpu_minutes_near($day,
    $idle_sm_threshold, $idle_lookback_minutes, $idle_min_minutes) WHERE hpc_job IS NOT NULL AND gpu_instance IS NULL
),
matched AS (
    SELECT jh.job_uid, jh.hostname, l.gpu, l.hpc_job,
           row_number() OVER (PARTITION BY jh.job_uid, jh.hostname ORDER BY l.gpu) AS nth, jh.gpus_on_host
    FROM job_hosts jh JOIN labels l ON l.hostname = jh.hostname AND l.hpc_job IN (jh.job_id, jh.job_key)
)
SELECT job_uid, hostname, gpu, hpc_job FROM matched WHERE nth <= gpus_on_host;

-- each slice of a shared GPU the job holds on the host: the n-th slice takes the n-th series carrying the
-- job's label (MIG instances first, then whole-GPU series the job's whole GPUs did not take); without
-- one, the physical GPU the record names, else no telemetry on a labelled host, else the host's GPUs
CREATE OR REPLACE TEMP TABLE slice_slots AS
WITH entries AS (
    SELECT jh.job_uid, jh.hostname, jh.gpu_index, jh.w_start, jh.w_end, jh.near_start, jh.near_end, e.units, e.n
    FROM job_hosts jh, unnest(jh.host_slices) WITH ORDINALITY AS e(units, n)
),
labels AS (
    SELECT DISTINCT hostname, gpu, gpu_instance, hpc_job FROM gpu_minutes_near($day,
    $idle_sm_threshold, $idle_lookback_minutes, $idle_min_minutes) WHERE hpc_job IS NOT NULL
),
candidates AS (
    SELECT jh.job_uid, l.hostname, l.gpu, l.gpu_instance, l.hpc_job,
           row_number() OVER (PARTITION BY jh.job_uid, jh.hostname
                              ORDER BY l.gpu_instance IS NULL, l.gpu, l.gpu_instance) AS nth
    FROM job_hosts jh JOIN labels l ON l.hostname = jh.hostname AND l.hpc_job IN (jh.job_id, jh.job_key)
    WHERE len(jh.host_slices) > 0
      AND NOT (l.gpu_instance IS NULL AND EXISTS (
          SELECT 1 FROM labelled_slots ls WHERE ls.job_uid = jh.job_uid AND ls.hostname = l.hostname AND ls.gpu = l.gpu))
)
SELECT e.job_uid, e.hostname,
       coalesce(c.gpu, e.gpu_index) AS gpu, c.gpu_instance, c.hpc_job, e.units AS share_units,
       CASE WHEN c.gpu IS NOT NULL THEN 'gpu'
            WHEN e.gpu_index IS NOT NULL THEN 'physical'
            WHEN e.hostname IN (SELECT hostname FROM labels) THEN 'none'
            ELSE 'host' END AS mode,
       e.w_start, e.w_end, e.near_start, e.near_end
FROM entries e
LEFT JOIN candidates c ON c.job_uid = e.job_uid AND c.hostname = e.hostname AND c.nth = e.n
WHERE e.w_end > e.w_start;

CREATE OR REPLACE TEMP TABLE slots AS
WITH labelled_hosts AS (SELECT DISTINCT hostname FROM gpu_minutes_near($day,
    $idle_sm_threshold, $idle_lookback_minutes, $idle_min_minutes) WHERE hpc_job IS NOT NULL AND gpu_instance IS NULL),
per_job AS (
    SELECT jh.*, (SELECT count(*) FROM labelled_slots ls WHERE ls.job_uid = jh.job_uid AND ls.hostname = jh.hostname) AS labelled,
           jh.hostname IN (SELECT hostname FROM labelled_hosts) AS host_labelled
    FROM job_hosts jh
),
all_slots AS (
    SELECT p.job_uid, p.hostname, ls.gpu, NULL::VARCHAR AS gpu_instance, ls.hpc_job, 1 AS multiplicity,
           share_units_per_gpu() AS share_units, 'gpu' AS mode, p.w_start, p.w_end, p.near_start, p.near_end
    FROM per_job p JOIN labelled_slots ls ON ls.job_uid = p.job_uid AND ls.hostname = p.hostname
    UNION ALL
    SELECT p.job_uid, p.hostname, NULL, NULL, NULL,
           p.gpus_on_host - p.labelled, share_units_per_gpu(), CASE WHEN p.host_labelled THEN 'none' ELSE 'host' END,
           p.w_start, p.w_end, p.near_start, p.near_end
    FROM per_job p
    WHERE p.gpus_on_host - p.labelled > 0 AND p.w_end > p.w_start
    UNION ALL
    SELECT job_uid, hostname, gpu, gpu_instance, hpc_job, 1, share_units, mode, w_start, w_end,
           near_start, near_end
    FROM slice_slots
)
SELECT row_number() OVER () AS slot_id, * FROM all_slots;

-- each slot's telemetry minutes within its job's time: its own GPU's (or MIG instance's) series (a
-- requeued job keeps its JobID, so the label alone does not tell two instances apart), or all series of
-- the physical GPU the record names, or the whole host's
-- (a host's GPUs judged together: low activity only when every GPU is, `activity_max`; their mean
-- activity, `activity`; their largest memory use). A minute without a utilisation reading (has_reading)
-- is no sample of use: a slot's own series without one is a gap (unmonitored), never idle; among a
-- host's GPUs such a GPU keeps the host's minute from being idle, and a host minute counts as a sample
-- only when some GPU read its utilisation.
CREATE OR REPLACE TEMP TABLE slot_minutes AS
SELECT s.slot_id, m.minute_ts, m.first_sample_ts, m.last_sample_ts, m.first_busy_ts, m.last_busy_ts, m.idle,
       m.activity, m.activity AS activity_max, m.tensor_active_avg, m.fb_used_max_mib
FROM slots s JOIN gpu_minutes_near($day,
    $idle_sm_threshold, $idle_lookback_minutes, $idle_min_minutes) m
  ON s.mode = 'gpu' AND m.hostname = s.hostname AND m.gpu = s.gpu AND m.hpc_job = s.hpc_job
 AND m.gpu_instance IS NOT DISTINCT FROM s.gpu_instance
WHERE m.last_sample_ts >= s.near_start AND m.first_sample_ts < s.near_end AND m.has_reading
UNION ALL
SELECT s.slot_id, m.minute_ts, min(m.first_sample_ts), max(m.last_sample_ts), min(m.first_busy_ts),
       max(m.last_busy_ts), bool_and(m.idle), avg(m.activity), max(m.activity), avg(m.tensor_active_avg),
       max(m.fb_used_max_mib)
FROM slots s JOIN gpu_minutes_near($day,
    $idle_sm_threshold, $idle_lookback_minutes, $idle_min_minutes) m ON s.mode = 'host' AND m.hostname = s.hostname
WHERE m.last_sample_ts >= s.near_start AND m.first_sample_ts < s.near_end
GROUP BY s.slot_id, m.minute_ts
HAVING bool_or(m.has_reading)
UNION ALL
SELECT s.slot_id, m.minute_ts, min(m.first_sample_ts), max(m.last_sample_ts), min(m.first_busy_ts),
       max(m.last_busy_ts), bool_and(m.idle), avg(m.activity), max(m.activity), avg(m.tensor_active_avg),
       max(m.fb_used_max_mib)
FROM slots s JOIN gpu_minutes_near($day,
    $idle_sm_threshold, $idle_lookback_minutes, $idle_min_minutes) m
  ON s.mode = 'physical' AND m.hostname = s.hostname AND m.gpu = s.gpu AND m.gpu_instance IS NULL
WHERE m.last_sample_ts >= s.near_start AND m.first_sample_ts < s.near_end AND m.has_reading
GROUP BY s.slot_id, m.minute_ts;


-- idle: runs of idle minutes at least the configured stretch long. A run continues across a short
-- telemetry gap (at most three scrape intervals between samples); a longer gap or an active minute ends it.
-- Its ends are refined to the sample: a run starts one scrape after the last busy sample of the minute
-- before it, and ends at the first busy sample of the minute after it (a sample at t stands for
-- [t, t + scrape)).
CREATE OR REPLACE TEMP TABLE idle_intervals AS
WITH ordered AS (
    SELECT slot_id, minute_ts, idle, first_sample_ts,
           lag(last_sample_ts) OVER w AS prev_last, lag(idle) OVER w AS prev_idle,
           lag(minute_ts) OVER w AS prev_minute, lag(last_busy_ts) OVER w AS prev_last_busy,
           lead(minute_ts) OVER w AS next_minute, lead(first_busy_ts) OVER w AS next_first_busy,
           lead(idle) OVER w AS next_idle
    FROM slot_minutes
    WINDOW w AS (PARTITION BY slot_id ORDER BY minute_ts)
),
runs AS (
    SELECT *, sum(CASE WHEN idle AND prev_idle AND epoch(first_sample_ts) - epoch(prev_last) <= 3 * $scrape_seconds
                       THEN 0 ELSE 1 END) OVER (PARTITION BY slot_id ORDER BY minute_ts) AS run_no
    FROM ordered
),
stretches AS (
    SELECT slot_id,
           coalesce(arg_min(CASE WHEN prev_minute = minute_ts - INTERVAL 1 MINUTE AND NOT prev_idle
                                 THEN prev_last_busy + to_seconds($scrape_seconds::BIGINT) END, minute_ts),
                    min(minute_ts)) AS s,
           coalesce(arg_max(CASE WHEN next_minute = minute_ts + INTERVAL 1 MINUTE AND NOT next_idle
                                 THEN next_first_busy END, minute_ts),
                    max(minute_ts) + INTERVAL 1 MINUTE) AS e
    FROM runs WHERE idle
    GROUP BY slot_id, run_no
)
SELECT slot_id, s, e FROM stretches
WHERE e - s >= to_minutes($idle_min_minutes::BIGINT);

-- unmonitored: gaps between samples longer than three scrape intervals, and a slot with none at all
CREATE OR REPLACE TEMP TABLE gap_intervals AS
WITH ordered AS (
    SELECT slot_id, first_sample_ts, last_sample_ts,
           lag(last_sample_ts) OVER (PARTITION BY slot_id ORDER BY minute_ts) AS prev_last
    FROM slot_minutes
),
bounds AS (
    -- the first and last sample inside the slot's window of the day
    SELECT m.slot_id, min(m.first_sample_ts) AS first_ts, max(m.last_sample_ts) AS last_ts
    FROM slot_minutes m JOIN slots s USING (slot_id)
    WHERE m.last_sample_ts >= s.w_start AND m.first_sample_ts < s.w_end
    GROUP BY m.slot_id
)
SELECT slot_id, prev_last + to_seconds($scrape_seconds::BIGINT) AS s, first_sample_ts AS e
FROM ordered
WHERE epoch(first_sample_ts) - epoch(prev_last) > 3 * $scrape_seconds
UNION ALL
SELECT s.slot_id, s.w_start, b.first_ts FROM slots s JOIN bounds b USING (slot_id)
WHERE epoch(b.first_ts) - epoch(s.w_start) > 3 * $scrape_seconds
UNION ALL
SELECT s.slot_id, b.last_ts + to_seconds($scrape_seconds::BIGINT), s.w_end FROM slots s JOIN bounds b USING (slot_id)
WHERE epoch(s.w_end) - epoch(b.last_ts) > 3 * $scrape_seconds
UNION ALL
SELECT s.slot_id, s.w_start, s.w_end FROM slots s
WHERE s.mode = 'none' OR s.slot_id NOT IN (SELECT slot_id FROM bounds);

-- every interval a rule claims, with its category's precedence (marts.dim_ledger_categories: the
-- highest wins; of rerun_loss, its restart above its lost work), clipped to the slot's window.
-- The interval rules are the one place SQL names a ledger category: a rule is its category's own (it says
-- "this stretch of a job's GPU is `allocated_idle`"), so each rule gives the name its category is declared
-- by (models/ledger_categories.py) and nothing else decides between them: which one wins is the
-- categories' precedence, from the table. A new GPU category a job's time can take is its declaration
-- (with a precedence) and its rule here; tests/unit/test_category_literals.py checks that every rule
-- names a declared category with a precedence and that every such category has a rule. (A table of rules
-- would still need this SQL to find each rule's intervals, so it would only move the names one step away.)
CREATE OR REPLACE TEMP TABLE slot_intervals AS
WITH raw AS (
    -- interval rules: (slot, start, end, the category it claims, the part of a rerun loss it is)
    -- a restart window inside a lost window (a resumed job interrupted again before its first step)
    -- counts as restart
    SELECT s.slot_id, greatest(j.lost_from, s.w_start) AS s, s.w_end AS e, 'rerun_loss' AS rule,
           'lost' AS rerun_part
    FROM slots s JOIN intermediate.int_job_allocations j ON j.day = $day AND j.job_uid = s.job_uid
    WHERE j.lost_from IS NOT NULL
    UNION ALL
    SELECT s.slot_id, s.w_start, least(j.restart_until, s.w_end), 'rerun_loss', 'restart'
    FROM slots s JOIN intermediate.int_job_allocations j ON j.day = $day AND j.job_uid = s.job_uid
    WHERE j.restart_until IS NOT NULL
    UNION ALL
    SELECT slot_id, s, e, 'allocated_idle', NULL FROM idle_intervals
    UNION ALL
    SELECT s.slot_id, s.w_start, s.w_end, 'failed_job', NULL
    FROM slots s JOIN intermediate.int_job_allocations j ON j.day = $day AND j.job_uid = s.job_uid
    WHERE j.failed
    UNION ALL
    SELECT slot_id, s, e, 'unmonitored', NULL FROM gap_intervals
    UNION ALL
    SELECT slot_id, w_start, w_end, 'productive', NULL FROM slots
    -- end of interval rules
)
-- `category` keeps a rerun loss's part after a colon (rerun_loss:restart), split again in int_gpu_seconds.sql
SELECT r.slot_id, greatest(r.s, sl.w_start) AS s, least(r.e, sl.w_end) AS e,
       2 * c.precedence + CASE WHEN r.rerun_part = 'restart' THEN 1 ELSE 0 END AS prio,
       c.name || coalesce(':' || r.rerun_part, '') AS category
FROM raw r JOIN slots sl USING (slot_id)
JOIN marts.dim_ledger_categories c ON c.name = r.rule
WHERE least(r.e, sl.w_end) > greatest(r.s, sl.w_start);

-- elementary segments: cut at every interval edge and every hour, then take the winning category
CREATE OR REPLACE TEMP TABLE slot_segments AS
WITH edges AS (
    SELECT slot_id, s AS t FROM slot_intervals
    UNION SELECT slot_id, e FROM slot_intervals
    UNION SELECT slot_id, unnest(generate_series(date_trunc('hour', w_start) + INTERVAL 1 HOUR, w_end, INTERVAL 1 HOUR))
    FROM slots WHERE w_end > date_trunc('hour', w_start) + INTERVAL 1 HOUR
),
segments AS (
    SELECT slot_id, t AS s, lead(t) OVER (PARTITION BY slot_id ORDER BY t) AS e FROM edges
)
SELECT g.slot_id, g.s, g.e, arg_max(i.category, i.prio) AS category
FROM segments g
JOIN slot_intervals i ON i.slot_id = g.slot_id AND i.s <= g.s AND i.e >= g.e
WHERE g.e IS NOT NULL AND g.e > g.s
GROUP BY g.slot_id, g.s, g.e;

-- The under-use lens on productive time (docs/ledger.md#under-use-a-lens-on-productive-time), per slot and
-- hour: of each productive segment, the milliseconds inside each telemetry minute of the slot, in total
-- and in minutes whose activity is below `efficiency.low_activity`, with activity, tensor activity and
-- memory use weighed by them. Productive time in a minute without a sample is counted as not low.
CREATE OR REPLACE TEMP TABLE productive_lens AS
WITH segment_minutes AS (
    SELECT g.slot_id, date_trunc('hour', g.s) AS hour_ts, m.activity, m.activity_max, m.tensor_active_avg,
           m.fb_used_max_mib,
           epoch_ms(least(g.e, m.minute_ts + INTERVAL 1 MINUTE)) - epoch_ms(greatest(g.s, m.minute_ts)) AS ms
    FROM slot_segments g
    -- a segment lies within one hour (segments are cut at every hour), and so does a minute: joined by
    -- hour first, each segment meets its hour's 60 minutes only
    JOIN slot_minutes m ON m.slot_id = g.slot_id AND date_trunc('hour', m.minute_ts) = date_trunc('hour', g.s)
     AND m.minute_ts < g.e AND m.minute_ts + INTERVAL 1 MINUTE > g.s
    -- productive time: the GPU time that is no waste
    JOIN marts.dim_ledger_categories k ON k.name = g.category AND k.is_gpu AND NOT k.is_waste
)
SELECT slot_id, hour_ts,
       sum(ms) FILTER (activity_max < $low_activity) AS low_activity_ms,
       sum(ms) FILTER (activity IS NOT NULL) AS activity_ms,
       -- in integers (activity in millionths), so the sums are the same in any order and on every re-run
       sum(ms * round(activity * 1000000)::BIGINT) AS activity_weighted_ms,
       sum(ms) FILTER (tensor_active_avg IS NOT NULL) AS tensor_ms,
       sum(ms * round(tensor_active_avg * 1000000)::BIGINT) AS tensor_weighted_ms,
       max(fb_used_max_mib) AS fb_used_max_mib
FROM segment_minutes WHERE ms > 0
GROUP BY slot_id, hour_ts;

-- per job and host, the whole GPUs with telemetry of their own (labelled series) within the job's time
-- of the day, and how many of them were ever active (a minute that is not idle): the rest of them were
-- held for nothing
CREATE OR REPLACE TEMP TABLE slot_gpu_activity AS
SELECT s.slot_id, s.job_uid, s.hostname, bool_or(NOT m.idle) AS active
FROM slots s
JOIN slot_minutes m ON m.slot_id = s.slot_id AND m.last_sample_ts >= s.w_start AND m.first_sample_ts < s.w_end
WHERE s.mode = 'gpu' AND s.gpu_instance IS NULL AND s.share_units = share_units_per_gpu()
GROUP BY s.slot_id, s.job_uid, s.hostname;

CREATE OR REPLACE TEMP TABLE slot_activity AS
SELECT job_uid, hostname, count(*) AS gpus_seen, count(*) FILTER (active) AS gpus_active
FROM slot_gpu_activity
GROUP BY job_uid, hostname;

-- the slots of GPUs held for nothing (never active while another GPU of the job on the host was): their
-- idle time is the job's oversize (right_size), never time past an idle limit
CREATE OR REPLACE TEMP TABLE slot_never_active AS
SELECT g.slot_id
FROM slot_gpu_activity g
JOIN slot_activity a ON a.job_uid = g.job_uid AND a.hostname = g.hostname
WHERE NOT g.active AND a.gpus_active > 0
