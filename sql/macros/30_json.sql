-- A JSON object as a map of its keys to their values as text. Keys and values are looked up as data,
-- never pasted into a JSON path: a tag key or project name may hold any character (`"`, `*`, `$`…).
-- Not an object (or not JSON): NULL.
CREATE OR REPLACE MACRO json_map(doc) AS TRY_CAST(TRY_CAST(doc AS JSON) AS MAP(VARCHAR, VARCHAR));
CREATE OR REPLACE MACRO first_present(m, keys) AS list_filter(list_transform(keys, lambda k: m[k]), lambda v: v IS NOT NULL)[1];
-- The first of `keys` present in a FOCUS Tags JSON object (tag keys have spellings: project, user:project…).
CREATE OR REPLACE MACRO tag_value(tags, keys) AS first_present(json_map(tags), keys);
-- A value of a config mapping passed as a JSON object parameter (pools → team, account → project…).
CREATE OR REPLACE MACRO config_lookup(mapping, key) AS json_map(mapping)[key];
