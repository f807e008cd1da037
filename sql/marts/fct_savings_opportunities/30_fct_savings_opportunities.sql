-- Savings opportunities over the trailing window ending $day: one row per opportunity and currency,
-- naming what it is about, the evidence, the action in one sentence and the money it would have saved
-- over the window and per month at the window's rate (docs/ledger.md#savings-opportunities). Each
-- GPU-second's money, and each inventoried object-day's, is claimed by at most one opportunity (the
-- pools of the files before), and add_commitment, priced last, is kept within what the window's cost
-- leaves, so a day's opportunities never sum past the window's cost in any currency.
WITH covered AS (
    SELECT count(*) AS days FROM sav_days
),
jobs AS (
    SELECT job_uid, billing_currency, any_value(job_id) AS job_id, any_value(cluster) AS cluster,
           any_value(run_id) AS run_id, any_value(team) AS team, any_value(project) AS project,
           any_value(user_name) AS user_name, coalesce(any_value(job_name), '') AS job_name,
           bool_or(interactive) AS interactive, max(gpus) AS gpus, any_value(array_to_string(hosts, ',')) AS hosts,
           any_value(gpu_model) AS gpu_model, max(gpus_never_active) AS gpus_never_active,
           min(right_size_gpus) AS right_size_gpus, any_value(fits_smaller) AS fits_smaller,
           max(fb_used_max_mib)::DOUBLE AS fb_used_max_mib, any_value(gpu_memory_gb)::DOUBLE AS gpu_memory_gb,
           sum(timeout_units) AS timeout_units, sum(never_units) AS never_units, sum(smaller_units) AS smaller_units,
           (sum(past_ms) / 7000.0 / 1000 / 3600)::DOUBLE AS past_gpu_hours,
           (sum(allocated_idle_gpu_seconds) / 3600)::DOUBLE AS idle_gpu_hours,
           sum(gpu_seconds * coalesce(gpus_never_active, 0) / nullif(gpus, 0)) / 3600 AS never_gpu_hours,
           sum(CASE WHEN smaller_units > 0 THEN productive_gpu_seconds ELSE 0 END) / 3600 AS smaller_gpu_hours
    FROM sav_job_days
    GROUP BY job_uid, billing_currency
),
runs AS (
    SELECT run_id, billing_currency, any_value(team) AS team, any_value(project) AS project,
           sum(checkpoint_units) AS checkpoint_units, sum(mfu_units) AS mfu_units,
           sum(checkpoint_storage_units) AS checkpoint_storage_units,
           avg(checkpoint_interval_s)::DOUBLE AS checkpoint_interval_s, avg(checkpoint_save_s)::DOUBLE AS checkpoint_save_s,
           avg(mtbf_s)::DOUBLE AS mtbf_s, avg(young_daly_interval_s)::DOUBLE AS young_daly_interval_s,
           sum(effective_mfu * gpu_seconds) / nullif(sum(gpu_seconds) FILTER (effective_mfu IS NOT NULL), 0)
               AS effective_mfu,
           (sum(gpu_seconds) / 3600)::DOUBLE AS gpu_hours
    FROM sav_run_days
    GROUP BY run_id, billing_currency
),
nodes AS (
    SELECT hostname, billing_currency, any_value(paid_as) AS paid_as, min(commitment_id) AS commitment_id,
           coalesce(min(idle_team), '_unallocated') AS team,
           (sum(idle_gpu_seconds) / 3600)::DOUBLE AS idle_gpu_hours, (sum(billed_gpu_seconds) / 3600)::DOUBLE AS billed_gpu_hours,
           sum(idle_units) AS idle_units
    FROM sav_node_days
    GROUP BY hostname, billing_currency
    -- a node paid for one way all window long: one whose way changed is left to the next window
    HAVING count(DISTINCT paid_as) = 1 AND sum(idle_gpu_seconds) > $release_idle_share * sum(billed_gpu_seconds)
       AND sum(idle_units) > 0
),
opportunities AS (
    SELECT CASE WHEN j.interactive THEN 'idle_session_timeout' ELSE 'cancel_hung_jobs' END AS kind,
           'job' AS subject_type, j.job_uid AS subject_key, j.job_id AS subject,
           j.team, j.project, j.user_name, j.cluster, j.job_id, j.run_id, NULL AS hostname, NULL AS commitment_id,
           j.billing_currency, j.timeout_units AS units, j.past_gpu_hours AS gpu_hours,
           CASE WHEN j.interactive
                THEN printf('session %s (%s, user %s, %s on %s) sat idle %s GPU-hours, %s of them after %d minutes idle in a row',
                            j.job_id, j.job_name, coalesce(j.user_name, '?'), plural(j.gpus, 'GPU'), j.hosts, num_text(j.idle_gpu_hours, 1), num_text(j.past_gpu_hours, 1), $idle_session_minutes)
                ELSE printf('job %s (%s, %s on %s) sat idle %s GPU-hours, %s of them after %d minutes idle in a row',
                            j.job_id, j.job_name, plural(j.gpus, 'GPU'), j.hosts, num_text(j.idle_gpu_hours, 1), num_text(j.past_gpu_hours, 1),
                            $hung_cancel_minutes) END AS evidence,
           CASE WHEN j.interactive
                THEN printf('Stop interactive sessions after %d idle minutes: session %s would have freed %s GPU-hours.',
                            $idle_session_minutes, j.job_id, num_text(j.past_gpu_hours, 1))
                ELSE printf('Cancel batch jobs idle %d minutes in a row (a sweep of hung jobs): job %s would have freed %s GPU-hours.',
                            $hung_cancel_minutes, j.job_id, num_text(j.past_gpu_hours, 1)) END AS action,
           to_json({'job_uid': j.job_uid, 'job_name': j.job_name, 'gpus': j.gpus, 'hosts': j.hosts, 'idle_gpu_hours': round(j.idle_gpu_hours, 3), 'past_limit_gpu_hours': round(j.past_gpu_hours, 3), 'limit_minutes': CASE WHEN j.interactive THEN $idle_session_minutes ELSE $hung_cancel_minutes END})::VARCHAR
               AS details
    FROM jobs j WHERE j.timeout_units > 0
    UNION ALL
    SELECT 'right_size', 'job', j.job_uid, j.job_id, j.team, j.project, j.user_name, j.cluster, j.job_id, j.run_id,
           NULL, NULL, j.billing_currency, j.never_units + j.smaller_units,
           CASE WHEN j.never_units > 0 THEN j.never_gpu_hours ELSE j.smaller_gpu_hours END,
           -- the job named once, then each reason it is oversized
           printf('job %s (%s) ', j.job_id, j.job_name) || concat_ws('; ',
               CASE WHEN j.never_units > 0
                    THEN printf('held %s, %d of them never active', plural(j.gpus, 'GPU'), j.gpus_never_active) END,
               CASE WHEN j.smaller_units > 0
                    THEN printf('peaked at %s GB of its %s''s %s GB: %s holds it', num_text(j.fb_used_max_mib / 1024, 1),
                                coalesce(j.gpu_model, 'GPU'), num_text(j.gpu_memory_gb, 0), j.fits_smaller) END),
           concat_ws(' ',
               CASE WHEN j.never_units > 0
                    THEN printf('Request %s instead of %d for %s.', plural(j.right_size_gpus, 'GPU'), j.gpus,
                                CASE WHEN j.job_name = '' THEN 'job ' || j.job_id ELSE j.job_name END) END,
               CASE WHEN j.smaller_units > 0
                    THEN printf('Run %s on %s instead of %s.', CASE WHEN j.job_name = '' THEN 'job ' || j.job_id ELSE j.job_name END,
                                j.fits_smaller, coalesce(j.gpu_model, 'its GPU')) END),
           to_json({'job_uid': j.job_uid, 'gpus': j.gpus, 'gpus_never_active': j.gpus_never_active, 'right_size_gpus': j.right_size_gpus, 'fits_smaller': j.fits_smaller, 'fb_used_max_mib': j.fb_used_max_mib})::VARCHAR
    FROM jobs j WHERE j.never_units + j.smaller_units > 0
    UNION ALL
    SELECT 'checkpoint_interval', 'run', r.run_id, r.run_id, r.team, r.project, NULL, NULL, NULL, r.run_id, NULL, NULL,
           r.billing_currency, r.checkpoint_units, r.gpu_hours,
           printf('run %s saved a checkpoint every %s minutes (saves of %s minutes, an interruption every %s hours): the Young–Daly interval is %s minutes',
                  r.run_id, num_text(r.checkpoint_interval_s / 60, 0), num_text(r.checkpoint_save_s / 60, 1), num_text(r.mtbf_s / 3600, 1), num_text(r.young_daly_interval_s / 60, 0)),
           printf('Checkpoint run %s every %s minutes, not every %s.', r.run_id, num_text(r.young_daly_interval_s / 60, 0), num_text(r.checkpoint_interval_s / 60, 0)),
           to_json({'checkpoint_interval_s': round(r.checkpoint_interval_s, 3), 'checkpoint_save_s': round(r.checkpoint_save_s, 3), 'mtbf_s': round(r.mtbf_s, 3), 'young_daly_interval_s': round(r.young_daly_interval_s, 3),
                    'checkpoint_storage_window': units_money(r.checkpoint_storage_units)::VARCHAR})::VARCHAR
    FROM runs r WHERE r.checkpoint_units > 0
    UNION ALL
    SELECT 'raise_mfu', 'run', r.run_id, r.run_id, r.team, r.project, NULL, NULL, NULL, r.run_id, NULL, NULL,
           r.billing_currency, r.mfu_units, r.gpu_hours,
           printf('run %s ran at %s %% effective MFU against a %s %% target over %s GPU-hours', r.run_id, num_text(100 * r.effective_mfu::DOUBLE, 1), num_text(100 * $mfu_target::DOUBLE, 0), num_text(r.gpu_hours, 1)),
           printf('Raise run %s''s MFU toward %s %%: profile its input pipeline, communication and kernels.',
                  r.run_id, num_text(100 * $mfu_target::DOUBLE, 0)),
           to_json({'effective_mfu': round(r.effective_mfu, 3), 'mfu_target': $mfu_target})::VARCHAR
    FROM runs r WHERE r.mfu_units > 0
    UNION ALL
    SELECT CASE WHEN n.paid_as = 'on_demand' THEN 'release_nodes' ELSE 'reduce_commitment' END,
           'node', n.hostname, n.hostname, n.team, NULL, NULL, NULL, NULL, NULL, n.hostname, n.commitment_id,
           n.billing_currency, n.idle_units, n.idle_gpu_hours,
           printf('%s was idle with no job %s %% of its billed GPU-hours (%s of %s) over %s%s', n.hostname, num_text(100 * n.idle_gpu_hours / n.billed_gpu_hours, 0), num_text(n.idle_gpu_hours, 1), num_text(n.billed_gpu_hours, 1), plural(c.days, 'day'),
                  CASE WHEN n.commitment_id IS NOT NULL THEN ', paid by ' || n.commitment_id ELSE '' END),
           CASE WHEN n.paid_as = 'on_demand'
                THEN printf('Release node %s (on demand or rented): %s idle GPU-hours in %s.', n.hostname, num_text(n.idle_gpu_hours, 1), plural(c.days, 'day'))
                ELSE printf('Shrink %s by node %s, idle %s %% of its hours.', coalesce(n.commitment_id, 'the commitment'),
                            n.hostname, num_text(100 * n.idle_gpu_hours / n.billed_gpu_hours, 0)) END,
           to_json({'paid_as': n.paid_as, 'idle_gpu_hours': round(n.idle_gpu_hours, 3), 'billed_gpu_hours': round(n.billed_gpu_hours, 3)})::VARCHAR
    FROM nodes n, covered c WHERE n.paid_as IN ('on_demand', 'committed')
    UNION ALL
    SELECT 'reduce_commitment', 'commitment', u.commitment_id, u.commitment_id, u.team, NULL, NULL, NULL, NULL, NULL,
           NULL, u.commitment_id, u.billing_currency, u.unused_units, NULL,
           printf('commitment %s went unused for %s %s on %s', u.commitment_id, num_text(units_money(u.unused_units), 2),
                  u.billing_currency, plural(u.days, 'day')),
           printf('Reduce commitment %s by its unused part at its next renewal (or exchange it).', u.commitment_id),
           to_json({'days': u.days})::VARCHAR
    FROM sav_unused_commitments u
    UNION ALL
    SELECT 'add_commitment', 'gpu_model', b.gpu_model, b.gpu_model, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           b.billing_currency,
           -- the base's share of the on-demand cost, at the discount (in millionths)
           ((b.cost_units // b.billed_seconds) * b.base_seconds
             + ((b.cost_units % b.billed_seconds) * b.base_seconds) // b.billed_seconds)
             * round($commitment_discount * 1000000)::HUGEINT // 1000000,
           b.base_seconds / 3600,
           printf('at least %s of %s were busy on on-demand nodes in every hour of %s', plural(b.base_gpus, 'GPU'),
                  b.gpu_model, plural(c.days, 'day')),
           printf('Commit to %s of %s (at %s %% off): the steady on-demand base.', plural(b.base_gpus, 'GPU'), b.gpu_model, num_text(100 * $commitment_discount::DOUBLE, 0)),
           to_json({'base_gpus': b.base_gpus, 'commitment_discount': $commitment_discount})::VARCHAR
    FROM sav_on_demand_base b, covered c
    WHERE b.base_gpus > 0 AND b.billed_seconds > 0
    UNION ALL
    SELECT * FROM sav_storage_opportunities
),
window_cost AS (
    -- the ledger's cost, and the inventoried storage the rate card prices (not bill money, so not in it)
    SELECT billing_currency, sum(units) AS units
    FROM (SELECT billing_currency, money_units(sum(effective_cost)) AS units
          FROM marts.fct_cost_daily WHERE day IN (SELECT day FROM sav_days) AND billing_currency IS NOT NULL
          GROUP BY billing_currency
          UNION ALL
          SELECT billing_currency, money_units(sum(effective_cost))
          FROM intermediate.int_storage_costs WHERE day IN (SELECT day FROM sav_days) AND priced_by = 'rate_card'
          GROUP BY billing_currency)
    GROUP BY billing_currency
),
others AS (
    SELECT billing_currency, sum(units) AS units FROM opportunities WHERE kind <> 'add_commitment' AND units > 0
    GROUP BY billing_currency
),
kept AS (
    -- add_commitment within what the window's cost leaves after the others
    SELECT o.kind, o.subject_type, o.subject_key, o.subject, o.team, o.project, o.user_name, o.cluster, o.job_id,
           o.run_id, o.hostname, o.commitment_id, o.billing_currency,
           CASE WHEN o.kind = 'add_commitment'
                THEN least(o.units, greatest(0, coalesce(w.units, 0) - coalesce(x.units, 0))) ELSE o.units END AS units,
           o.gpu_hours, o.evidence, o.action, o.details
    FROM opportunities o
    LEFT JOIN window_cost w ON w.billing_currency = o.billing_currency
    LEFT JOIN others x ON x.billing_currency = o.billing_currency
    WHERE o.units > 0
)
SELECT $day::DATE AS day, $day::DATE - ($savings_window_days - 1) AS window_start,
       $savings_window_days::INTEGER AS window_days, c.days::INTEGER AS days_covered,
       substr(sha256(to_json([k.kind, k.subject_type, k.subject_key, k.billing_currency])::VARCHAR), 1, 16)
           AS opportunity_id,
       k.kind, row_number() OVER (PARTITION BY k.billing_currency ORDER BY k.units DESC, k.kind, k.subject_key)::INTEGER
           AS rank,
       k.subject_type, k.subject, k.team, k.project, k.user_name, k.cluster, k.job_id, k.run_id, k.hostname,
       k.commitment_id, k.gpu_hours::DOUBLE AS gpu_hours, k.evidence, k.action, k.details, k.billing_currency,
       units_money(k.units)::DECIMAL(38, 18) AS saving_window,
       -- per month of 30 days at the window's rate: over the days of it the ledger has
       units_money(k.units * 30 // c.days)::DECIMAL(38, 18) AS saving_monthly
FROM kept k, covered c
WHERE k.units > 0
