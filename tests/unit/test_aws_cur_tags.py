"""The CUR 2.0 `resource_tags` map → FOCUS Tags: what every valid map gives (pinned), and what a hostile
map does — it gives the row its tags by the FOCUS Tags rule, or sends the row to ops.quarantine naming
the column, while the file's money stays whole."""

import csv
import json
from decimal import Decimal
from pathlib import Path

import polars as pl

from pipelines.ingest import aws_cur
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
    parsed = aws_cur.parse(_write(tmp_path / "cur.csv", [(t, team) for t, team, _ in VALID]), "cur.csv")
    assert parsed.rejects.height == 0
    assert _tags_by_row(parsed) == {i: expected for i, (_, _, expected) in enumerate(VALID)}


def test_each_valid_map_alone_gives_the_same_tags(tmp_path):
    """A map's tags do not depend on the other maps of its file."""
    for i, (tags, team, expected) in enumerate(VALID):
        parsed = aws_cur.parse(_write(tmp_path / f"cur{i}.csv", [(tags, team)]), "cur.csv")
        assert _tags_by_row(parsed) == {0: expected}, tags
