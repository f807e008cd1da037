-- How many GiB-hours one unit of a bill's PricingUnit holds, where the unit is bytes over time as bills
-- spell it (GB-Months, GB-Mo, GB/Month, 1 GB/Month, GB Hours, gibibyte month, TB-Mo); NULL for any other
-- unit (Requests, GB of transfer, GiB/Second-Months of throughput). A month is the days of `d`'s month.
-- GB counts as a GiB, as AWS's storage bills mean it: of the two readings it gives the lower price per byte.
-- (the unit as the pattern reads it: lower case, spaces trimmed and single)
CREATE OR REPLACE MACRO storage_unit_text(unit) AS regexp_replace(lower(trim(unit)), '\s+', ' ', 'g');
CREATE OR REPLACE MACRO storage_unit_pattern() AS
    '^(?:([0-9]{1,6}) ?)?(gb|gib|gibibytes?|gigabytes?|tb|tib|tebibytes?|terabytes?) ?[-/ ] ?(mo|mos|mon|mth|mths|months?|days?|hrs?|hours?)$';
CREATE OR REPLACE MACRO storage_unit_gib_hours(unit, d) AS CASE
    WHEN regexp_matches(storage_unit_text(unit), storage_unit_pattern()) THEN
        coalesce(TRY_CAST(nullif(regexp_extract(storage_unit_text(unit), storage_unit_pattern(), 1), '') AS BIGINT), 1)
        * CASE WHEN starts_with(regexp_extract(storage_unit_text(unit), storage_unit_pattern(), 2), 't') THEN 1024 ELSE 1 END
        * CASE left(regexp_extract(storage_unit_text(unit), storage_unit_pattern(), 3), 1)
               WHEN 'm' THEN 24 * day(last_day(d)) WHEN 'd' THEN 24 ELSE 1 END END;
