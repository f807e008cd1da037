-- Whether a charge period [ps, pe) touches the UTC day d; a point in time (pe = ps) belongs to its day.
CREATE OR REPLACE MACRO overlaps_day(ps, pe, d) AS
    ps < d::DATE + INTERVAL 1 DAY AND (pe > d::DATE OR (pe <= ps AND ps >= d::DATE));
