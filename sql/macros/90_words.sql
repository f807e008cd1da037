-- a count and its noun for people: 1 GPU, 2 GPUs, 1 day, 3 days
CREATE OR REPLACE MACRO plural(n, noun) AS (n::VARCHAR || ' ' || noun || CASE WHEN n = 1 THEN '' ELSE 's' END);

-- a number for people, to `places` decimals, the same text on every engine: rounded as a decimal (half
-- away from zero), never by a printf of a DOUBLE (C and Java round a binary 0.35 differently)
CREATE OR REPLACE MACRO num_text(x, places) AS round(x::DECIMAL(38, 6), places)::VARCHAR;

-- Words for alert messages (sql/alerts/), counts said with plural(): GPUs as people say them, from
-- share units (models/mig_profiles.py) — whole GPUs, sevenths of a MIG GPU ("⅐ of a GPU (MIG 1g.10gb)",
-- "3/7 of a GPU"), other fractions in decimals ("0.25 of a GPU") — and a duration ("45 minutes",
-- "10 h 05 min").
CREATE OR REPLACE MACRO gpu_units_text(units, mig) AS CASE
    WHEN units % 7000 = 0 THEN plural(units // 7000, 'GPU')
    WHEN units % 1000 = 0 AND units < 7000
        THEN CASE WHEN units = 1000 THEN '⅐' ELSE (units // 1000)::VARCHAR || '/7' END || ' of a GPU'
             || coalesce(' (' || mig || ')', '')
    WHEN units < 7000 THEN gpu_count_text(round(units / 7000, 3)::DECIMAL(18, 3)) || ' of a GPU'
    ELSE gpu_count_text(round(units / 7000, 3)::DECIMAL(18, 3)) || ' GPUs' END;
CREATE OR REPLACE MACRO duration_text(seconds) AS CASE
    WHEN seconds < 7200 THEN plural(floor(seconds / 60)::BIGINT, 'minute')
    ELSE printf('%d h %02d min', floor(seconds / 3600)::BIGINT, floor((seconds % 3600) / 60)::BIGINT) END;
