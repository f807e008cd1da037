-- An interactive session (a notebook, an editor, a shell) as policies.interactive describes one: its
-- partition, QOS, job name or one of its pod labels (`key=value`) matches that key's patterns. `res` is
-- $session_patterns: those four keys' globs, made one anchored regular expression each by the config.
-- NULLs and empty texts match nothing.
CREATE OR REPLACE MACRO is_interactive_session(partition_, qos_, job_name_, labels_, res) AS (
    coalesce(regexp_matches(nullif(partition_, ''), res[1]), FALSE)
    OR coalesce(regexp_matches(nullif(qos_, ''), res[2]), FALSE)
    OR coalesce(regexp_matches(nullif(job_name_, ''), res[3]), FALSE)
    OR coalesce(len(list_filter(labels_, lambda kv: regexp_matches(kv, res[4]))) > 0, FALSE)
);
