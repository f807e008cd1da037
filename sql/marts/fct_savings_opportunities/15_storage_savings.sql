-- What inventoried storage could have saved over the trailing window under storage.policy
-- (docs/ledger.md#storage-opportunities), in units of 1e-18 of its currency. Every object-day's money is
-- claimed at most once, in this order:
--   prune_checkpoints: a checkpoint of a finished run older than its last `keep_last` (its whole cost);
--   stale_datasets: a dataset object neither read nor written for `stale_after_days` (its whole cost);
--   tier_down: an object on a hot tier past `max_hot_age_hours` (its cost less the cold tier's).
-- An object's cost on a day is the least of two: its bytes' share of its store and tier's cost that day
-- (the bill's lines or the rate card, int_storage_costs: one price per byte within a store, tier and
-- currency), and its bytes at the unit price of the lines billed by bytes over time. The share is what the
-- ledger charges; the unit price is what fewer bytes save. They differ where a file system is billed by
-- its provisioned capacity: half empty, its share of the bill is twice what a GiB less would save.

-- each store and tier's cost a day, per currency, over its bytes that day: `units` is the least of its
-- share of the bill and its bytes at the unit price, decided here once rather than per object (both
-- are a price per byte within a store, tier and currency)
CREATE OR REPLACE TEMP TABLE sav_storage_prices AS
WITH cost AS (
    SELECT day, store, tier, billing_currency, money_units(sum(effective_cost)) AS units
    FROM intermediate.int_storage_costs
    WHERE day IN (SELECT day FROM sav_days) AND priced_by IN ('bill', 'rate_card')
    GROUP BY ALL
),
-- the bytes of each store and tier, from its groups' (a group is on a row per line that prices it, with
-- its bytes each time): the objects' table is scanned once, below, not twice
bytes AS (
    SELECT day, store, tier, sum(bytes)::HUGEINT AS bytes
    FROM (SELECT DISTINCT day, store, tier, kind, run_id, object_project, bytes
          FROM intermediate.int_storage_costs WHERE day IN (SELECT day FROM sav_days))
    GROUP BY ALL
),
priced_lines AS (
    SELECT DISTINCT day, store, tier, billing_currency, line_key
    FROM intermediate.int_storage_costs
    WHERE day IN (SELECT day FROM sav_days) AND priced_by = 'bill'
),
-- what each of those lines charges a GiB for a day, in units of 1e-21 (1e-18 of the currency, and 1e-3
-- more to keep the price's digits), from its own effective cost over its pricing quantity: 0 for a line
-- billed by anything but bytes over time (requests, throughput, retrievals), which fewer bytes do not
-- save; NULL, unknown, for a line without a unit or a positive quantity
line_prices AS (
    SELECT l.day, l.line_key,
           CASE WHEN b.pricing_unit IS NULL OR NOT b.pricing_quantity > 0 THEN NULL
                WHEN storage_unit_gib_hours(b.pricing_unit, l.day) IS NULL THEN 0
                -- beyond a million currency units a GiB-day no storage costs; the bound keeps the sums in range
                ELSE least(money_units(b.effective_cost) * 1000000000 * 24
                           // (round(b.pricing_quantity::DECIMAL(38, 6) * 1000000)::HUGEINT
                               * storage_unit_gib_hours(b.pricing_unit, l.day)),
                           1000000000000000000000000000::HUGEINT) END AS gib_day_milli_units
    FROM (SELECT DISTINCT day, line_key FROM priced_lines) l
    JOIN staging.stg_focus__bill_lines b ON b._file || '#' || b._row = l.line_key
    WHERE b.charge_period_start < (SELECT max(day) FROM sav_days) + INTERVAL 1 DAY
      AND b.charge_period_end > (SELECT min(day) FROM sav_days)
),
unit_prices AS (
    SELECT p.day, p.store, p.tier, p.billing_currency,
           CASE WHEN count(*) = count(lp.gib_day_milli_units) THEN sum(lp.gib_day_milli_units) END
               AS gib_day_milli_units
    FROM priced_lines p LEFT JOIN line_prices lp USING (day, line_key)
    GROUP BY ALL
)
SELECT c.day, c.store, c.tier, c.billing_currency, b.bytes,
       CASE WHEN u.gib_day_milli_units IS NULL THEN c.units
            -- the store and tier's bytes at the unit price: price × bytes // 2^30, the price cut at 2^30
            -- first so that a large store at a large price stays within HUGEINT
            ELSE least(c.units, (greatest(0, u.gib_day_milli_units) // 1073741824 * b.bytes
                                 + greatest(0, u.gib_day_milli_units) % 1073741824 * b.bytes // 1073741824)
                                // 1000) END AS units
FROM cost c JOIN bytes b USING (day, store, tier)
LEFT JOIN unit_prices u USING (day, store, tier, billing_currency)
WHERE b.bytes > 0;

-- who an object's cost goes to: its row of int_storage_costs (the store's tag, where it has no project)
CREATE OR REPLACE TEMP TABLE sav_storage_placement AS
SELECT day, store, tier, kind, run_id, object_project, any_value(project) AS project, any_value(team) AS team
FROM intermediate.int_storage_costs
WHERE day IN (SELECT day FROM sav_days)
GROUP BY ALL;

-- when each run last ran: its jobs' ends (a running job: never), else its trainer's last event
CREATE OR REPLACE TEMP TABLE sav_run_activity AS
WITH jobs AS (
    SELECT run_id, max(coalesce(end_ts, TIMESTAMP '9999-12-31 00:00:00')) AS last_ts
    FROM marts.fct_job_cost WHERE run_id IS NOT NULL AND day <= $day::DATE GROUP BY run_id
),
events AS (
    SELECT run_id, max(ts) AS last_ts FROM staging.stg_runs__events WHERE ts < $day::DATE + INTERVAL 1 DAY
    GROUP BY run_id
)
SELECT run_id, greatest(j.last_ts, e.last_ts) AS last_ts
FROM jobs j FULL JOIN events e USING (run_id);

CREATE OR REPLACE TEMP TABLE sav_storage_object_days AS
WITH objects AS (
    SELECT o.day, o.store, o.key, o.size_bytes, o.tier, o.kind, o.run_id, o.step, pl.project, pl.team,
           o.last_modified, o.last_accessed, p.billing_currency,
           p.units * o.size_bytes // p.bytes AS units,
           pol.hot_tiers, pol.max_hot_age_hours, pol.cold_tier, pol.keep_last, pol.stale_after_days
    FROM intermediate.int_storage_objects o
    JOIN sav_storage_prices p USING (day, store, tier)
    JOIN sav_storage_placement pl
      ON pl.day = o.day AND pl.store = o.store AND pl.tier = o.tier AND pl.kind = o.kind
     AND pl.run_id IS NOT DISTINCT FROM o.run_id AND pl.object_project IS NOT DISTINCT FROM o.project
    JOIN sav_storage_policy pol ON pol.kind = o.kind
    WHERE o.day IN (SELECT day FROM sav_days)
),
-- a finished run's checkpoints (every store), newest step first: the first keep_last steps are kept
ranked AS (
    SELECT o.*, dense_rank() OVER (PARTITION BY o.day, o.run_id, o.kind ORDER BY o.step DESC) AS step_rank,
           a.last_ts IS NULL
               OR epoch(o.day::TIMESTAMP) + 86400 - epoch(a.last_ts) >= $storage_run_finished_hours * 3600
               AS run_finished
    FROM objects o LEFT JOIN sav_run_activity a USING (run_id)
),
counted AS (
    -- the run's checkpoints that day: the number of its steps (the evidence's "keeps N")
    SELECT *, max(step_rank) OVER (PARTITION BY day, run_id, kind) AS run_checkpoints FROM ranked
),
-- the cold tier's price in the object's currency: the rate card's for every store, else the bill's own
-- for that tier that day (all its stores)
cold AS (
    SELECT r.tier, r.currency, money_units(r.price_per_gb_month::DECIMAL(38, 18)) AS month_units
    FROM (SELECT unnest(from_json($storage_rate_card, '[{"tier": "VARCHAR", "store": "VARCHAR", "currency": "VARCHAR",
          "price_per_gb_month": "VARCHAR"}]'), recursive := true)) r
    WHERE r.store IS NULL
),
billed_cold AS (
    SELECT day, tier, billing_currency, sum(units) AS units, sum(bytes) AS bytes
    FROM sav_storage_prices GROUP BY ALL
)
SELECT r.* EXCLUDE (hot_tiers, max_hot_age_hours, keep_last, stale_after_days, step_rank, run_finished,
                    run_checkpoints),
       CASE WHEN r.kind = 'checkpoint' AND r.run_id IS NOT NULL AND r.step IS NOT NULL AND r.run_finished
                 AND r.step_rank > r.keep_last THEN 'prune_checkpoints'
            WHEN r.kind = 'dataset' AND epoch(r.day::TIMESTAMP) - epoch(r.last_accessed) > r.stale_after_days * 86400
                 AND coalesce(epoch(r.day::TIMESTAMP) - epoch(r.last_modified) > r.stale_after_days * 86400, TRUE)
                 THEN 'stale_datasets'
            WHEN list_contains(r.hot_tiers, r.tier) AND r.cold_tier IS NOT NULL AND r.cold_tier <> r.tier
                 AND epoch(r.day::TIMESTAMP) - epoch(r.last_modified) > r.max_hot_age_hours * 3600
                 THEN 'tier_down' END AS opportunity,
       -- what the object would cost on the cold tier that day
       coalesce(c.month_units * r.size_bytes // (1073741824::BIGINT * day(last_day(r.day))),
                b.units * r.size_bytes // nullif(b.bytes, 0)) AS cold_units,
       r.step_rank, r.run_checkpoints, r.keep_last, r.stale_after_days, r.max_hot_age_hours
FROM counted r
LEFT JOIN cold c ON c.tier = r.cold_tier AND c.currency = r.billing_currency
LEFT JOIN billed_cold b ON b.day = r.day AND b.tier = r.cold_tier AND b.billing_currency = r.billing_currency;

-- the opportunities: a run's checkpoints to prune, a run's (or a store's) objects to tier down, a
-- store's stale datasets; the evidence names the objects as of the window's last day that has them
CREATE OR REPLACE TEMP TABLE sav_storage_opportunities AS
WITH claims AS (
    SELECT *, CASE WHEN opportunity = 'tier_down' THEN greatest(0, units - cold_units) ELSE units END AS saved,
           CASE WHEN run_id IS NOT NULL AND kind IN ('checkpoint', 'log') THEN 'run' ELSE 'store' END AS subject_type
    FROM sav_storage_object_days
    WHERE opportunity IS NOT NULL AND (opportunity <> 'tier_down' OR cold_units IS NOT NULL)
),
keyed AS (
    SELECT *, CASE subject_type WHEN 'run' THEN run_id ELSE store END AS subject,
           to_json([opportunity, CASE subject_type WHEN 'run' THEN run_id ELSE store END,
                    project, kind])::VARCHAR AS subject_key
    FROM claims
),
last_day AS (
    SELECT *, day = max(day) OVER (PARTITION BY subject_key, billing_currency) AS on_last_day,
           -- the five largest objects of its last day name it
           row_number() OVER (PARTITION BY subject_key, billing_currency, day ORDER BY size_bytes DESC, key) AS size_rank
    FROM keyed
),
grouped AS (
    SELECT opportunity, subject_type, subject_key, subject, any_value(project) AS project,
           any_value(team) AS team, kind, billing_currency,
           sum(saved) AS units, max(day) AS last_day,
           count(*) FILTER (on_last_day) AS objects,
           count(DISTINCT step) FILTER (on_last_day) AS checkpoints,
           max(run_checkpoints) FILTER (on_last_day) AS run_checkpoints,
           min(step) FILTER (on_last_day) AS first_step, max(step) FILTER (on_last_day) AS last_step,
           sum(size_bytes) FILTER (on_last_day)::DOUBLE AS bytes,
           array_to_string(list(DISTINCT store ORDER BY store) FILTER (on_last_day), ', ') AS stores,
           array_to_string(list(DISTINCT tier ORDER BY tier) FILTER (on_last_day), ', ') AS tiers,
           any_value(cold_tier) AS cold_tier, any_value(keep_last) AS keep_last,
           any_value(stale_after_days) AS stale_after_days, any_value(max_hot_age_hours) AS max_hot_age_hours,
           list(key ORDER BY size_rank) FILTER (on_last_day AND size_rank <= 5) AS largest
    FROM last_day
    GROUP BY opportunity, subject_type, subject_key, subject, kind, billing_currency
    HAVING sum(saved) > 0
)
SELECT opportunity AS kind, subject_type, subject_key, subject,
       team, project,
       NULL AS user_name, NULL AS cluster, NULL AS job_id, CASE WHEN subject_type = 'run' THEN subject END AS run_id,
       NULL AS hostname, NULL AS commitment_id, billing_currency, units, NULL::DOUBLE AS gpu_hours,
       CASE opportunity
            WHEN 'prune_checkpoints'
            THEN printf('run %s has finished and keeps %s; the policy keeps its last %d: the %d before them (steps %d to %d) hold %s TB in %s',
                        subject, plural(run_checkpoints, 'checkpoint'), keep_last, checkpoints, first_step,
                        last_step, num_text(bytes / 1e12, 2), stores)
            WHEN 'stale_datasets'
            THEN printf('%s of %s (%s TB) in %s %s neither read nor written for %d days or more',
                        plural(objects, 'dataset object'), project, num_text(bytes / 1e12, 2), stores,
                        CASE WHEN objects = 1 THEN 'was' ELSE 'were' END, stale_after_days)
            ELSE printf('%s of %s (%s TB) %s on %s past %s hours', plural(objects, kind || ' object'),
                        CASE subject_type WHEN 'run' THEN 'run ' || subject ELSE project || ' in ' || stores END,
                        num_text(bytes / 1e12, 2), CASE WHEN objects = 1 THEN 'stays' ELSE 'stay' END, tiers,
                        num_text(max_hot_age_hours, 0)) END AS evidence,
       CASE opportunity
            WHEN 'prune_checkpoints'
            THEN printf('Delete run %s''s checkpoints up to step %d and keep the last %d: %s TB.', subject, last_step,
                        keep_last, num_text(bytes / 1e12, 2))
            WHEN 'stale_datasets'
            THEN printf('Archive or delete the datasets of %s untouched for %d days: %s TB in %s.',
                        project, stale_after_days, num_text(bytes / 1e12, 2), stores)
            ELSE printf('Move %s''s %ss older than %s hours from %s to %s: %s TB.',
                        CASE subject_type WHEN 'run' THEN 'run ' || subject ELSE project END, kind,
                        num_text(max_hot_age_hours, 0), tiers, cold_tier, num_text(bytes / 1e12, 2)) END AS action,
       to_json({'kind': kind, 'objects': objects, 'bytes': bytes::HUGEINT, 'stores': stores, 'tiers': tiers,
                'as_of': last_day, 'checkpoints': CASE WHEN opportunity = 'prune_checkpoints' THEN checkpoints END,
                'keep_last': CASE WHEN opportunity = 'prune_checkpoints' THEN keep_last END,
                'cold_tier': CASE WHEN opportunity = 'tier_down' THEN cold_tier END,
                'largest': largest})::VARCHAR AS details
FROM grouped;
