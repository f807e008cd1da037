-- The entries of CUR 2.0 `resource_tags` maps, read by the rule FOCUS Tags texts are read by (10_tags):
-- a text is a map when it is a JSON object, and a key written twice (or spelled twice, `t\u0065am` and
-- `team`) is two entries, `id` in the order written, so the later can win as it does there.
-- Input: tag_maps_in(value), distinct texts. Output: (value, id, key, tag) — one row with a null id for
-- every text that is a JSON object (so `{}` is told from a text that is none), then a row per entry: the
-- key as written (escapes read), the value's text (a string's own, JSON null as null, any other value
-- its JSON). A text that is not a JSON object has no row.
WITH maps AS (
    SELECT value AS map FROM tag_maps_in
    WHERE CASE WHEN json_valid(value) THEN json_type(value) = 'OBJECT' ELSE FALSE END
)
SELECT map AS value, NULL::UBIGINT AS id, NULL::VARCHAR AS key, NULL::VARCHAR AS tag FROM maps
UNION ALL
SELECT m.map, e.id, e.key,
       CASE e.type WHEN 'VARCHAR' THEN e.value ->> '$' WHEN 'NULL' THEN NULL ELSE e.value::VARCHAR END
FROM maps m, json_each(m.map) e
