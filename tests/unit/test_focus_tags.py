"""FOCUS Tags normalisation (sql/staging/stg_focus__bill_lines/10_tags.sql, `focus.normalized_tags`) on
hostile Tags texts, each against the JSON its rule gives: a JSON object only (anything else has no
tags); keys trimmed of spaces; of keys that trimming makes one, the later value; keys in byte order,
whatever order the rows come in (the warehouse runs with preserve_insertion_order off); values as JSON,
unformatted; the caller's connection left as it was, and two threads on cursors of one connection never
see each other's texts."""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor

import duckdb
import polars as pl
import pytest

from pipelines.ingest.focus import normalized_tags

CASES = [
    # objects, as they are: keys in byte order (upper case before lower, digits and "_" between)
    ('{"a":1}', '{"a":1}'),
    ('{"b":2,"a":1}', '{"a":1,"b":2}'),
    ('{"z":1,"y":2,"x":3,"w":4,"v":5}', '{"v":5,"w":4,"x":3,"y":2,"z":1}'),
    ('{"a":"1","A":"2"}', '{"A":"2","a":"1"}'),
    ('{"Z":1,"a":2,"_":3,"0":4}', '{"0":4,"Z":1,"_":3,"a":2}'),
    ('{}', '{}'),
    # keys trimmed; where that makes two keys one, the later value
    ('{" org":"x"}', '{"org":"x"}'),
    ('{" org ":"x","org":"y"}', '{"org":"y"}'),
    ('{"org":"y"," org ":"x"}', '{"org":"x"}'),
    ('{" a ":1, "a":2, "a ":3}', '{"a":3}'),
    ('{ "  ":1}', '{"":1}'),
    ('{"\\u0020y":1}', '{"y":1}'),             # a space written as an escape is a space
    ('{"\u3000x\u3000":1}', '{"x":1}'),          # so is an ideographic space
    ('{"\\tk\\n":1}', '{"\\tk\\n":1}'),          # tabs and newlines are no spaces: kept
    # a key repeated as written: the later value
    ('{"a":1,"a":2}', '{"a":2}'),
    # nested values kept whole, white space gone
    ('{"k":{"n":[1,2]}}', '{"k":{"n":[1,2]}}'),
    ('{"a":{"b":{"c":[{"d":null}]}}}', '{"a":{"b":{"c":[{"d":null}]}}}'),
    ('{"a":"x" , "b" : [ 1 , 2 ] }', '{"a":"x","b":[1,2]}'),
    (' {"a":1} ', '{"a":1}'),
    ('{"x":true,"y":null}', '{"x":true,"y":null}'),
    # unicode: kept as characters, escapes decoded; control characters and quotes escaped
    ('{"ключ":"значение","🙂":"x"}', '{"ключ":"значение","🙂":"x"}'),
    ('{"\\u00e9":"\\u00e9"}', '{"é":"é"}'),
    ('{"k":"\\ud83d\\ude00"}', '{"k":"😀"}'),
    ('{"a\\u0000b":1}', '{"a\\u0000b":1}'),
    ('{"q":"a\\"b\\\\c"}', '{"q":"a\\"b\\\\c"}'),
    # numbers as DuckDB's JSON reads them: a big integer whole, others in their shortest form
    ('{"n":1.50,"e":1E3,"big":12345678901234567890123,"neg":-0}',
     '{"big":12345678901234567890123,"e":1000.0,"n":1.5,"neg":0}'),
    # not an object: no tags
    ('[1,2]', None), ('"s"', None), ('42', None), ('true', None), ('null', None), ('NULL', None),
    ('not json', None), ('', None), ('{"a":1}{', None), ('{"a":1', None),
]


@pytest.fixture
def con():
    with duckdb.connect() as con:
        yield con


def test_every_hostile_text_gives_its_rule_s_json(con):
    texts = [text for text, _ in CASES] * 2 + [None]
    got = normalized_tags(con, pl.Series("tags", texts))
    assert got.name == "tags"
    expected = [want for _, want in CASES] * 2 + [None]
    assert [(t, g) for t, g in zip(texts, got.to_list())] == [(t, w) for t, w in zip(texts, expected)]


def _by_rule(text: str) -> str:
    """The rule in Python, for objects of plain keys and values: trimmed keys, the later value, byte order."""
    pairs: dict[str, object] = {}
    for key, value in json.loads(text, object_pairs_hook=list):
        pairs[key.strip(" ")] = value
    return json.dumps(dict(sorted(pairs.items(), key=lambda kv: kv[0].encode())), separators=(",", ":"),
                      ensure_ascii=False)


def test_key_order_does_not_depend_on_row_order():
    """Many objects of many keys, each written in descending key order, on a connection configured as
    the warehouse is (preserve_insertion_order off, several threads): every result in byte order."""
    rng = random.Random(26)
    texts = []
    for i in range(300):
        keys = sorted({f" k{rng.randrange(10**6)}" if rng.random() < 0.2 else f"k{rng.randrange(10**6)}"
                       for _ in range(40)}, reverse=True)
        texts.append("{" + ",".join(f'{json.dumps(k)}:{n}' for n, k in enumerate(keys)) + "}")
    with duckdb.connect(config={"threads": 4, "preserve_insertion_order": False}) as con:
        got = normalized_tags(con, pl.Series("tags", texts)).to_list()
    assert got == [_by_rule(t) for t in texts]


def test_leaves_the_callers_connection_as_it_was(con):
    normalized_tags(con, pl.Series("tags", ['{"a":1}']))
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM tags_in")


def test_two_threads_on_one_connection_see_only_their_own_texts(con):
    """Each thread on its own cursor of one connection, as sync's parse thread is beside its writer:
    the texts one registers never answer the other's."""

    def work(thread: int) -> bool:
        with con.cursor() as mine:
            for round_ in range(20):
                texts = [f'{{"t{thread}":{round_},"n":{i}}}' for i in range(50)]
                want = [f'{{"n":{i},"t{thread}":{round_}}}' for i in range(50)]
                if normalized_tags(mine, pl.Series("tags", texts)).to_list() != want:
                    return False
        return True

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert all(pool.map(work, [1, 2]))
