-- amount × rate, exactly, rounded once to 1e-18: both are DECIMAL(38,18), whose product needs 36
-- decimals and would overflow above 100, so it is taken in parts,
-- trunc(a)·r + frac(a)·trunc(r) + frac(a)·frac(r). The finance views convert to the reporting currency with it.
CREATE OR REPLACE MACRO finance.times_rate(a, r) AS
    (trunc(a)::DECIMAL(38, 0) * r)::DECIMAL(38, 18)
    + ((a - trunc(a))::DECIMAL(19, 18) * trunc(r)::DECIMAL(38, 0))::DECIMAL(38, 18)
    + ((a - trunc(a))::DECIMAL(19, 18) * (r - trunc(r))::DECIMAL(19, 18))::DECIMAL(38, 18);
