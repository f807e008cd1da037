-- A batch's rows rolled up per GPU-minute in one pass over its files: per scrape (file × scrape time ×
-- GPU × job label, the metrics side by side) and so per minute, by the rollup both staging paths share
-- (sql/macros/50_dcgm_rollup.sql), from its ok rows only. Neither the samples nor the scrapes are kept
-- (30 s scrapes are twice the minutes). How many rows of each minute were ok, bad or sentinels rides
-- along, so the same pass says what each file staged, quarantined and dropped (50_batch_files.sql).
CREATE OR REPLACE TEMP VIEW dcgm_batch_scrapes AS SELECT * FROM dcgm_scrapes('dcgm_checked');

CREATE OR REPLACE TEMP TABLE dcgm_batch_minutes AS SELECT * FROM dcgm_minutes('dcgm_batch_scrapes');

DROP VIEW dcgm_batch_scrapes;
