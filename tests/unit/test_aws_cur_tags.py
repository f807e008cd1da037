"""The CUR 2.0 `resource_tags` map → FOCUS Tags: what every valid map gives (pinned), and what a hostile
map does — it gives the row its tags by the FOCUS Tags rule, or sends the row to ops.quarantine naming
the column, while the file's money stays whole."""

import csv
import json
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.ingest import aws_cur, focus
from tests.support.memory_db import memory_db
from tests.unit.test_aws_cur import _cur_rows

# (resource_tags text, resource_tags_user_team) -> the row's Tags (None: no tags). Pinned from the parse
# before the map was decoded per distinct text: every one of these is a map AWS could write, or one
# whose reading was already settled (values trimmed, null spellings dropped, `aws:` keys left out,
# `user:`/`user_` taken off, a resource_tags_user_<key> column winning over the map's key).
VALID = [
    ('{"user:project":"llm-7b"}', "", {"project": "llm-7b"}),
    ('{"user_project":"llm-7b","aws_createdBy":"IAMUser:x"}', "", {"project": "llm-7b"}),
    ('{"user:Project":"a","user:cost-center":"cc 42"}', "", {"Project": "a", "cost-center": "cc 42"}),
    ('{"user:project":"  padded  "}', "", {"project": "padded"}),
    ('{"user:project":"","user:owner":"NULL","user:env":"null"}', "", None),
    ('{"aws:createdBy":"IAMUser:x","aws:cloudformation:stack-name":"s"}', "", None),
    ("{}", "", None),
    ("{}", "core", {"team": "core"}),
    ('{"user:team":"from-map","user:project":"p"}', "from-column", {"team": "from-column", "project": "p"}),
    ('{"user:team":"from-map"}', "", {"team": "from-map"}),
    ('{"user:owner":"Zoë 🚀","user:quote":"a \\"b\\" \\\\ c"}', "", {"owner": "Zoë 🚀", "quote": 'a "b" \\ c'}),
    ('{"user:k\\"ey":"v","user:sl\\\\ash":"w","user:ünï":"x"}', "", {'k"ey': "v", "sl\\ash": "w", "ünï": "x"}),
    ('{"user: spaced ":"v"}', "", {"spaced": "v"}),
    ('{"untagged":"v"}', "", {"untagged": "v"}),
    ('{"user:count":7,"user:ratio":0.5,"user:flag":true,"user:gone":null}', "",
     {"count": "7", "ratio": "0.5", "flag": "true"}),
    ('{"user:nested":{"x":1},"user:list":["a","b"]}', "", {"nested": '{"x":1}', "list": '["a","b"]'}),
    ("", "only-column", {"team": "only-column"}),
    ("", "", None),
]


def _write(path: Path, maps: list[tuple[str, str]]) -> Path:
    """A CUR 2.0 CSV of Usage rows costing 1.25 each, the i-th row with maps[i] as its resource_tags and
    resource_tags_user_team (line ids map-0, map-1, …)."""
    header, rows = _cur_rows(1)
    template = next(r for r in rows if r["identity_line_item_id"] == "net-usage")
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, header)
        writer.writeheader()
        for i, (tags, team) in enumerate(maps):
            writer.writerow(template | {"identity_line_item_id": f"map-{i}", "line_item_unblended_cost": "1.25",
                                        "line_item_net_unblended_cost": "1.25", "resource_tags": tags,
                                        "resource_tags_user_team": team})
    return path


def _tags_by_row(parsed) -> dict[int, dict | None]:
    return {int(r["line_id"].split("/")[0].removeprefix("map-")): None if r["tags"] is None else json.loads(r["tags"])
            for r in parsed.rows.iter_rows(named=True)}


def test_valid_maps_give_the_tags_they_always_gave(tmp_path):
    parsed = aws_cur.parse(memory_db(), _write(tmp_path / "cur.csv", [(t, team) for t, team, _ in VALID]), "cur.csv")
    assert parsed.rejects.height == 0
    assert _tags_by_row(parsed) == {i: expected for i, (_, _, expected) in enumerate(VALID)}


def test_each_valid_map_alone_gives_the_same_tags(tmp_path):
    """A map's tags do not depend on the other maps of its file."""
    for i, (tags, team, expected) in enumerate(VALID):
        parsed = aws_cur.parse(memory_db(), _write(tmp_path / f"cur{i}.csv", [(tags, team)]), "cur.csv")
        assert _tags_by_row(parsed) == {0: expected}, tags


# hostile maps AWS never writes, each with what its row gets: its tags, by the FOCUS Tags rule (a key
# that is written twice keeps its later value, as sql/staging/stg_focus__bill_lines/10_tags.sql decides
# for FOCUS files), or QUARANTINED. Every row costs 1.25.
QUARANTINED = "quarantined"
HOSTILE = [  # (resource_tags text, what its row gets)
    ('{"user:team":"a","user:team":"b"}', {"team": "b"}),                 # a key written twice
    ('{"user:t\\u0065am":"a","user:team":"b"}', {"team": "b"}),           # two spellings of one key
    ('{"user:team":"a","user_team":"b"}', {"team": "b"}),                 # one key once its prefix is off
    ('{"user:team ":"a","user:team":"b"}', {"team": "b"}),                # one key once trimmed
    ('{"user:Team":"a","user:team":"b"}', {"Team": "a", "team": "b"}),    # keys differ in case: two tags
    ('{"user:team":1}', {"team": "1"}),                                   # the JSON type differs by row
    ('{"user:team":{"x":[1,{"y":null}]}}', {"team": '{"x":[1,{"y":null}]}'}),
    ('{"user:team":["a",2,true]}', {"team": '["a",2,true]'}),
    ('{"user:team":false}', {"team": "false"}),
    ('{"user:team":null}', None),
    ('{"user:team":"a"}', {"team": "a"}),
    ('{"":"x"}', {"": "x"}),                                              # an empty key, as FOCUS keeps it
    ('{"user:q\\"uo\\\\te\\n":"\\t"}', None),                             # a blank value, however escaped
    ('{"user:q\\"uo\\\\te\\n":"v\\u0000"}', {'q"uo\\te\n': "v\x00"}),  # keys lose only spaces, as in FOCUS
    ('{"user:💸":"€"}', {"💸": "€"}),
    ("{user_project: llm-70b", QUARANTINED),                              # not JSON
    ('{"user:team":"a"} {"user:team":"b"}', QUARANTINED),
    ('{"user:team":01}', QUARANTINED),
    ('{"user:team":"\\ud800"}', QUARANTINED),                             # a lone surrogate: no text
    ('[{"key":"user:team","value":"a"}]', QUARANTINED),                   # JSON, but no object
    ('"user:team=a"', QUARANTINED),
    ("42", QUARANTINED),
]


def _outcome(parsed) -> dict[int, object]:
    got: dict[int, object] = dict(_tags_by_row(parsed))
    for r in parsed.rejects.iter_rows(named=True):
        got[int(json.loads(r["payload"])["identity_line_item_id"].removeprefix("map-"))] = QUARANTINED
    return got


def _money_is_whole(parsed, rows: int) -> None:
    """kept + quarantined EffectiveCost and BilledCost are the file's (1.25 a row)"""
    for col in ("effective_cost", "billed_cost"):
        assert parsed.rows[col].sum() + parsed.rejects[col].sum() == Decimal("1.25") * rows, col


def test_hostile_maps_in_one_file_tag_or_quarantine_only_their_rows(tmp_path):
    maps = [(text, "") for text, _ in HOSTILE] + [(text, team) for text, team, _ in VALID]
    parsed = aws_cur.parse(memory_db(), _write(tmp_path / "cur.csv", maps), "bills/aws_cur/cur.csv")
    expected = [outcome for _, outcome in HOSTILE] + [tags for _, _, tags in VALID]
    assert _outcome(parsed) == dict(enumerate(expected))
    _money_is_whole(parsed, len(maps))
    assert parsed.rejects.height == expected.count(QUARANTINED)
    for r in parsed.rejects.iter_rows(named=True):
        text = json.loads(r["payload"])["resource_tags"]  # the CUR row itself is kept
        assert r["reason"] == f"Tags 'resource_tags={text}' is not a JSON object"
        assert r["file"] == "bills/aws_cur/cur.csv" and r["row_ref"].startswith("row ")
        assert r["effective_cost"] == r["billed_cost"] == Decimal("1.25")


def test_each_hostile_map_alone_does_what_it_does_among_others(tmp_path):
    for i, (text, outcome) in enumerate(HOSTILE):
        parsed = aws_cur.parse(memory_db(), _write(tmp_path / f"cur{i}.csv", [(text, "")]), "cur.csv")
        assert _outcome(parsed) == {0: outcome}, text
        _money_is_whole(parsed, 1)


def test_a_key_written_twice_keeps_its_later_value_as_in_focus_files():
    """FOCUS and CUR agree: the FOCUS Tags rule (10_tags.sql) decides a repeated key, for both."""
    texts = ['{"team":"a","team":"b"}', '{"t\\u0065am":"a","team":"b"}', '{"team ":"a","team":"b"}']
    normalized = focus.normalized_tags(memory_db(), pl.Series(texts)).to_list()
    assert [json.loads(t) for t in normalized] == [{"team": "b"}] * 3


def test_many_distinct_keys_across_rows_and_in_one_map(tmp_path):
    """A file whose maps hold 5,000 keys between them, and a row with 2,000 keys of its own: each row
    gets its own keys (the old reading made one column per key of the whole file)."""
    maps = [(json.dumps({f"user:k{i}": f"v{i}", "user:team": i if i % 2 else str(i)}), "") for i in range(5000)]
    maps.append((json.dumps({f"user:w{j}": "x" for j in range(2000)}), ""))
    parsed = aws_cur.parse(memory_db(), _write(tmp_path / "cur.csv", maps), "cur.csv")
    got = _outcome(parsed)
    assert all(got[i] == {f"k{i}": f"v{i}", "team": str(i)} for i in range(5000))
    assert got[5000] == {f"w{j}": "x" for j in range(2000)}
    _money_is_whole(parsed, len(maps))


def test_parquet_map_with_a_key_twice_reads_as_its_csv(tmp_path):
    """A Parquet MAP can hold a key twice: rendered as the CSV's JSON text, it is read the same way."""
    csv_path = _write(tmp_path / "cur.csv", [('{"user:team":"a","user:team":"b","user:p":"q"}', "")])
    frame = pl.read_csv(csv_path, infer_schema=False)
    table = frame.drop("resource_tags").to_arrow()
    entries = pa.array([[("user:team", "a"), ("user:team", "b"), ("user:p", "q")]], pa.map_(pa.string(), pa.string()))
    pq.write_table(table.append_column("resource_tags", entries), tmp_path / "cur.parquet")
    parsed = aws_cur.parse(memory_db(), tmp_path / "cur.parquet", "cur.parquet")
    assert _outcome(parsed) == {0: {"team": "b", "p": "q"}}
