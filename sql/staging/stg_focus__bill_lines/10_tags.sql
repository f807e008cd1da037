-- FOCUS Tags normalised: keys trimmed (real exports carry keys like " org") and in key order (by byte);
-- where two keys are one (a key written twice, or keys alike once trimmed), the later value is kept.
-- The object is json_group_object's text written out with the aggregate's own ORDER BY
-- (json_group_object is a macro that takes none, and the order of a subquery does not hold where
-- preserve_insertion_order is off, as in the warehouse).
-- Input: tags_in(value), distinct texts. Output: (value, tags) for every text that is a JSON object;
-- any other text has no row (so no tags).
WITH objects AS (
    SELECT value FROM tags_in
    WHERE CASE WHEN json_valid(value) THEN json_type(value) = 'OBJECT' ELSE FALSE END
)
SELECT o.value,
       coalesce((SELECT ('{' || string_agg(to_json(k) || ':' || CASE WHEN v IS NULL THEN 'null'::JSON ELSE to_json(v) END,
                                           ',' ORDER BY k) || '}')::JSON
                 FROM (SELECT trim(e.key) AS k, arg_max(e.value, e.id) AS v
                       FROM json_each(o.value) e GROUP BY k)), '{}') AS tags
FROM objects o
