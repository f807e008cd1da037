-- A batch's rows per sample (file × scrape time × GPU × job label), the metrics side by side, from its
-- ok rows only; how many rows of each sample were ok, bad or sentinels rides along, so one pass over
-- the files says what each file staged, quarantined and dropped (sql/macros/50_dcgm_rollup.sql).
CREATE OR REPLACE TEMP TABLE dcgm_batch_samples AS
SELECT * FROM dcgm_scrapes('dcgm_checked')
