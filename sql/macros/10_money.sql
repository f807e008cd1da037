-- Money moves between DECIMAL(38,18) and integer units of 1e-18 so that
-- splits are exact integer arithmetic (largest remainder), never floats.
CREATE OR REPLACE MACRO money_units(x) AS
    trunc(x)::HUGEINT * 1000000000000000000::HUGEINT + ((x - trunc(x)) * 1000000000000000000)::HUGEINT;
CREATE OR REPLACE MACRO units_money(u) AS (u::DECIMAL(38, 0) * 0.000000000000000001);
-- A weight for splitting money by money: an amount in whole micro-units (1e-6), never negative. Coarse on
-- purpose: the split itself stays exact, and weights this size keep the products within HUGEINT.
CREATE OR REPLACE MACRO micro_units(x) AS greatest(0, money_units(x) // 1000000000000);
