-- Which jobs are left out of the ledger. A job that is left out holds nothing: whether a later job fits
-- is judged by the jobs kept, never by one left out (else one bogus job would push out every real job it
-- overlapped). Taken in start order, a job is kept when its GPUs fit beside those of the kept jobs
-- still running at its start on each of its hosts, and a job asking more than a host has on its own
-- never fits. Each pass below judges every job by the previous pass's kept jobs; since a job's fate
-- depends only on jobs that started before it, pass n settles every chain of n jobs, each freed or
-- pushed out by the one before (SQL has no loop that Spark runs as well as DuckDB, so the passes are
-- written out: eight settle any chain a day of real exports has shown).
CREATE OR REPLACE TEMP TABLE jobs_left_out AS SELECT job_uid FROM job_holds WHERE FALSE;
CREATE OR REPLACE TEMP TABLE jobs_left_out AS
SELECT DISTINCT job_uid FROM (
    SELECT h.job_uid FROM job_holds h
    LEFT JOIN (SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid
               WHERE x.job_uid IS NULL) o ON o.job_uid = h.job_uid AND o.hostname = h.hostname
    GROUP BY h.job_uid, h.hostname, h.units, h.capacity
    HAVING coalesce(sum(o.holder_units), 0) + h.units > h.capacity * share_units_per_gpu()) over_capacity;

CREATE OR REPLACE TEMP TABLE jobs_left_out AS
SELECT DISTINCT job_uid FROM (
    SELECT h.job_uid FROM job_holds h
    LEFT JOIN (SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid
               WHERE x.job_uid IS NULL) o ON o.job_uid = h.job_uid AND o.hostname = h.hostname
    GROUP BY h.job_uid, h.hostname, h.units, h.capacity
    HAVING coalesce(sum(o.holder_units), 0) + h.units > h.capacity * share_units_per_gpu()) over_capacity;

CREATE OR REPLACE TEMP TABLE jobs_left_out AS
SELECT DISTINCT job_uid FROM (
    SELECT h.job_uid FROM job_holds h
    LEFT JOIN (SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid
               WHERE x.job_uid IS NULL) o ON o.job_uid = h.job_uid AND o.hostname = h.hostname
    GROUP BY h.job_uid, h.hostname, h.units, h.capacity
    HAVING coalesce(sum(o.holder_units), 0) + h.units > h.capacity * share_units_per_gpu()) over_capacity;

CREATE OR REPLACE TEMP TABLE jobs_left_out AS
SELECT DISTINCT job_uid FROM (
    SELECT h.job_uid FROM job_holds h
    LEFT JOIN (SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid
               WHERE x.job_uid IS NULL) o ON o.job_uid = h.job_uid AND o.hostname = h.hostname
    GROUP BY h.job_uid, h.hostname, h.units, h.capacity
    HAVING coalesce(sum(o.holder_units), 0) + h.units > h.capacity * share_units_per_gpu()) over_capacity;

CREATE OR REPLACE TEMP TABLE jobs_left_out AS
SELECT DISTINCT job_uid FROM (
    SELECT h.job_uid FROM job_holds h
    LEFT JOIN (SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid
               WHERE x.job_uid IS NULL) o ON o.job_uid = h.job_uid AND o.hostname = h.hostname
    GROUP BY h.job_uid, h.hostname, h.units, h.capacity
    HAVING coalesce(sum(o.holder_units), 0) + h.units > h.capacity * share_units_per_gpu()) over_capacity;

CREATE OR REPLACE TEMP TABLE jobs_left_out AS
SELECT DISTINCT job_uid FROM (
    SELECT h.job_uid FROM job_holds h
    LEFT JOIN (SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid
               WHERE x.job_uid IS NULL) o ON o.job_uid = h.job_uid AND o.hostname = h.hostname
    GROUP BY h.job_uid, h.hostname, h.units, h.capacity
    HAVING coalesce(sum(o.holder_units), 0) + h.units > h.capacity * share_units_per_gpu()) over_capacity;

CREATE OR REPLACE TEMP TABLE jobs_left_out AS
SELECT DISTINCT job_uid FROM (
    SELECT h.job_uid FROM job_holds h
    LEFT JOIN (SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid
               WHERE x.job_uid IS NULL) o ON o.job_uid = h.job_uid AND o.hostname = h.hostname
    GROUP BY h.job_uid, h.hostname, h.units, h.capacity
    HAVING coalesce(sum(o.holder_units), 0) + h.units > h.capacity * share_units_per_gpu()) over_capacity;

CREATE OR REPLACE TEMP TABLE jobs_left_out AS
SELECT DISTINCT job_uid FROM (
    SELECT h.job_uid FROM job_holds h
    LEFT JOIN (SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid
               WHERE x.job_uid IS NULL) o ON o.job_uid = h.job_uid AND o.hostname = h.hostname
    GROUP BY h.job_uid, h.hostname, h.units, h.capacity
    HAVING coalesce(sum(o.holder_units), 0) + h.units > h.capacity * share_units_per_gpu()) over_capacity;
