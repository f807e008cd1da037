-- FOCUS Tags normalised: keys trimmed (real exports carry keys like " org") and sorted; where two keys
-- are one (a key written twice, or keys alike once trimmed), the later value is kept. Input:
-- tags_in(value), distinct texts. Output: (value, tags) for every text that is a JSON object; any other
-- text has no row (so no tags).
WITH objects AS (
    SELECT value FROM tags_in
    WHERE CASE WHEN json_valid(value) THEN json_type(value) = 'OBJECT' ELSE FALSE END
)
SELECT o.value,
       coalesce((SELECT json_group_object(k, v)
                 FROM (SELECT trim(e.key) AS k, arg_max(e.value, e.id) AS v
                       FROM json_each(o.value) e GROUP BY k ORDER BY k)), '{}') AS tags
FROM objects o
