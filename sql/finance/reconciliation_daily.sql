-- Daily reconciliation per billing currency: the cost lines — the bill (every landed line's share of the
-- day) and those the config generated (`config_*`: rate cards, contracts, owned hardware, energy) —
-- against what the ledger allocated. `difference_*` (allocated − bill − config) must be 0; quarantined
-- lines are in both, as `unattributed` in the ledger. Amounts in different currencies are never added:
-- one row each.
-- `rounding_*` is what storing the lines at 1e-18 took off: bill + rounding is the bill as written.
CREATE OR REPLACE VIEW finance.reconciliation_daily AS
WITH bill AS (
    SELECT day, billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b,
           sum(quarantined_effective_cost) AS qe, sum(quarantined_billed_cost) AS qb,
           sum(lines) AS lines, sum(quarantined_lines) AS quarantined_lines,
           sum(effective_cost_rounding) AS re, sum(billed_cost_rounding) AS rb
    FROM marts.fct_bill_daily GROUP BY day, billing_currency
),
config AS (
    SELECT day, billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM marts.fct_config_cost_daily GROUP BY day, billing_currency
),
costed AS (
    -- the bill and the config's lines side by side, per day and currency
    SELECT coalesce(b.day, c.day) AS day, coalesce(b.billing_currency, c.billing_currency) AS billing_currency,
           b.e, b.b, b.qe, b.qb, b.lines, b.quarantined_lines, b.re, b.rb, c.e AS ce, c.b AS cb
    FROM bill b FULL JOIN config c ON c.day = b.day AND c.billing_currency = b.billing_currency
),
allocated AS (
    SELECT day, billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b,
           -- what the ledger could not place (unattributed)
           coalesce(sum(c.effective_cost) FILTER (k.is_unplaced), 0) AS ue
    FROM marts.fct_cost_daily c LEFT JOIN marts.dim_ledger_categories k ON k.name = c.category
    GROUP BY day, billing_currency
),
-- Bill files that could not be read hold money nobody can see: each makes the days its name (or its
-- manifest) says it covers incomplete, and one whose name says no day makes every day incomplete.
unreadable_bill_files AS (
    SELECT file, first_day, last_day FROM ops.landed_files WHERE status = 'unreadable'
),
-- Every refusal recorded, whatever the source, with its file and why: a landed file not read (its status
-- neither current, superseded nor duplicate), a file refused whole (row_ref 'file'), and a quarantined
-- bill line whose money is not on the bill side (its amount or its charge period did not parse, so no
-- day holds it). Each covers the days it names, else its file's days, else — dated nowhere — every day.
refusals AS (
    SELECT file, coalesce(status_reason, 'not read (' || status || ')') AS reason, first_day, last_day
    FROM ops.landed_files WHERE status NOT IN ('current', 'superseded', 'duplicate')
    UNION ALL
    SELECT q.file, 'refused whole: ' || q.reason, coalesce(q.day, l.first_day), coalesce(q.day, l.last_day)
    FROM ops.quarantine q LEFT JOIN ops.landed_files l ON l.source = q.source AND l.file = q.file
    WHERE q.row_ref = 'file' AND coalesce(q.origin, 'landing') = 'landing'
    UNION ALL
    SELECT q.file,
           count(*) || ' quarantined bill line(s) whose money is on no day (first: ' || min(q.row_ref) || ', '
               || arg_min(q.reason, q.row_ref) || ')',
           coalesce(q.day, l.first_day), coalesce(q.day, l.last_day)
    FROM ops.quarantine q LEFT JOIN ops.landed_files l ON l.source = q.source AND l.file = q.file
    WHERE q.source IN (SELECT source FROM ops.landing_sources WHERE is_bill) AND q.row_ref <> 'file'
      AND (q.effective_cost IS NULL OR q.billed_cost IS NULL OR q.charge_period_start IS NULL)
    GROUP BY q.file, coalesce(q.day, l.first_day), coalesce(q.day, l.last_day)
),
-- how the day's last run ended: anything but `succeeded` (failed, or still `running` because it was
-- killed or is under way) leaves the day's marts possibly half-written
run_status AS (
    SELECT day, status, reason FROM ops.ledger_days
),
days AS (
    SELECT day FROM costed UNION SELECT day FROM allocated UNION SELECT day FROM run_status WHERE status <> 'succeeded'
    UNION SELECT unnest(generate_series(first_day, last_day, INTERVAL 1 DAY))::DATE FROM refusals
    WHERE first_day IS NOT NULL
),
unreadable AS (
    SELECT d.day, count(*) AS n, list(u.file ORDER BY u.file) AS files
    FROM days d
    JOIN unreadable_bill_files u ON u.first_day IS NULL OR d.day BETWEEN u.first_day AND u.last_day
    GROUP BY d.day
),
refused AS (
    SELECT day, count(*) AS n, list(file ORDER BY file) AS files,
           string_agg(file || ': ' || reason, '; ' ORDER BY file) AS reasons
    FROM (SELECT d.day, r.file, min(r.reason) AS reason
          FROM days d JOIN refusals r ON r.first_day IS NULL OR d.day BETWEEN r.first_day AND r.last_day
          GROUP BY d.day, r.file)
    GROUP BY day
),
reconciled AS (
    SELECT coalesce(b.day, a.day, r.day) AS day, coalesce(b.billing_currency, a.billing_currency) AS billing_currency,
           coalesce(b.e, 0) AS bill_effective_cost, coalesce(b.b, 0) AS bill_billed_cost,
           coalesce(a.e, 0) AS allocated_effective_cost, coalesce(a.b, 0) AS allocated_billed_cost,
           coalesce(b.qe, 0) AS quarantined_effective_cost, coalesce(b.qb, 0) AS quarantined_billed_cost,
           coalesce(b.ce, 0) AS config_effective_cost, coalesce(b.cb, 0) AS config_billed_cost,
           coalesce(a.ue, 0) AS unattributed_effective_cost,
           coalesce(a.e, 0) - coalesce(b.e, 0) - coalesce(b.ce, 0) AS difference_effective_cost,
           coalesce(a.b, 0) - coalesce(b.b, 0) - coalesce(b.cb, 0) AS difference_billed_cost,
           coalesce(b.lines, 0) AS bill_lines, coalesce(b.quarantined_lines, 0) AS quarantined_lines,
           coalesce(b.re, 0) AS rounding_effective_cost, coalesce(b.rb, 0) AS rounding_billed_cost
    FROM costed b FULL JOIN allocated a ON a.day = b.day AND a.billing_currency = b.billing_currency
    -- a day with nothing but a refusal or a failed run has one row, with no currency
    FULL JOIN (SELECT day FROM days EXCEPT (SELECT day FROM costed UNION SELECT day FROM allocated)) r ON FALSE
)
SELECT c.*,
       coalesce(u.n, 0) AS unreadable_bill_files,
       coalesce(u.files, []::VARCHAR[]) AS unreadable_bill_file_names,
       coalesce(f.n, 0) AS refused_files,
       coalesce(f.files, []::VARCHAR[]) AS refused_file_names,
       coalesce(s.status, 'unknown') AS run_status,
       -- why the day is not reconciled, in sentences naming each file and run; NULL when it is
       nullif(concat_ws('; ',
           CASE s.status WHEN 'failed' THEN 'the day''s last run failed: ' || coalesce(s.reason, 'no reason recorded')
                         WHEN 'running' THEN 'the day''s last run did not finish: it failed, was killed, or is still running' END,
           CASE WHEN f.n > 0 THEN f.n || ' landed file(s) covering the day were refused or not wholly read, '
                                  || 'so their money may be missing: ' || f.reasons END,
           CASE WHEN c.difference_effective_cost <> 0 OR c.difference_billed_cost <> 0
                THEN 'the ledger does not add up to the bill and the config''s cost lines' END), '') AS incomplete_reason,
       -- the day is reconciled only when its last run succeeded, every landed file that touches it was
       -- read, every quarantined line's money is on the bill side, and the ledger adds up
       incomplete_reason IS NULL AS complete
FROM reconciled c
LEFT JOIN unreadable u ON u.day = c.day
LEFT JOIN refused f ON f.day = c.day
LEFT JOIN run_status s ON s.day = c.day
