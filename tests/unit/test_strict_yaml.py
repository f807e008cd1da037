"""The strict YAML reader (pipelines/lib/config/strict_yaml.py) every config and plan goes through: a key
written twice, an anchor or alias, a merge key, and a document over the byte, node or depth limits
are errors naming the line (and the file), never a silently different value or an exhausted machine."""

from __future__ import annotations

import json
import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.lib.config.strict_yaml import MAX_YAML_BYTES, StrictYamlError, dump_yaml, load_yaml, read_yaml_text


def _error(text: str, **limits) -> StrictYamlError:
    with pytest.raises(StrictYamlError) as err:
        load_yaml(text, "org.yaml", **limits)
    return err.value


# a billion laughs, five levels deep (9^5 = 59,049 values): the nine-level one took 11.7 GB to read,
# this one is small enough that the reader it replaced accepts it quickly (and fails the test)
BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcd", "bcde"))


def test_a_top_level_key_written_twice_names_the_key_the_file_and_both_lines():
    err = _error("costs:\n  rate_cards: [{pool: a, price_per_gpu_hour: '2'}]\nteams: {}\ncosts:\n  energy: {}\n")
    assert (err.line, err.source) == (4, "org.yaml")
    assert str(err).startswith("org.yaml:4: `costs` is given twice, on line 1 and line 4")


def test_a_nested_key_written_twice_in_a_flow_mapping_is_named_by_its_path():
    err = _error('default_currency: USD\nbudgets: {llm-70b: "60000", llm-70b: "1"}\n')
    assert err.line == 2 and "`budgets.llm-70b` is given twice on line 2" in err.problem


@pytest.mark.parametrize("first, second", [("1", "0x1"), ("yes", "true"), ("'a'", "a"), ("1.0", "1")])
def test_keys_yaml_reads_as_equal_are_the_same_key(first, second):
    err = _error(f"m:\n  {first}: x\n  {second}: y\n")
    assert err.line == 3 and "is given twice, on line 2 and line 3" in err.problem


def test_a_key_repeated_in_two_different_mappings_is_fine():
    doc = load_yaml("a: {x: 1}\nb: {x: 2}\nc: [{x: 3}, {x: 4}]\n")
    assert doc.data == {"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}]}
    assert doc.key_lines[("c", 1, "x")] == 3 and doc.key_lines[("b",)] == 2


@pytest.mark.parametrize("text, line, words", [
    ("x: 1\nbase: &base {pool: a}\n", 2, "an anchor (&base) is not allowed"),
    ("x: &one 1\n", 1, "an anchor (&one)"),
    ("costs:\n  rate_cards:\n    - <<: {pool: a}\n      pool: b\n", 3, "a merge key (<<) is not allowed"),
    (BOMB, 1, "an anchor (&a) is not allowed"),
])
def test_anchors_aliases_and_merge_keys_are_refused_naming_the_line(text, line, words):
    err = _error(text)
    assert err.line == line and words in err.problem, err


def test_an_alias_alone_is_refused_naming_the_line():
    # an alias with no anchor never reaches the composer's own error: it is named as an alias
    err = _error("a: 1\nb: *nowhere\n")
    assert err.line == 2 and "an alias (*nowhere) is not allowed" in err.problem


def test_the_billion_laughs_is_refused_at_once():
    bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))  # 9^9 values
    started = time.perf_counter()
    err = _error(bomb)
    assert time.perf_counter() - started < 0.5 and err.line == 1


def test_nesting_beyond_the_depth_limit_is_refused_before_it_is_recursed_into():
    err = _error("a: " + "[" * 100 + "]" * 100 + "\n")
    assert err.line == 1 and "nested more than 32 deep" in err.problem
    assert _error("a: " + "[" * 50000 + "]" * 50000 + "\n").line == 1  # libyaml's own limit (1000) may come first
    assert load_yaml("a: " + "[" * 31 + "]" * 31 + "\n").data == {"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}


def test_documents_over_the_node_and_byte_limits_are_refused():
    assert "more than 10 keys, values, lists and mappings" in _error("a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n", max_nodes=10).problem
    assert load_yaml("a: [1, 2, 3, 4, 5, 6, 7]\n", max_nodes=10).data == {"a": [1, 2, 3, 4, 5, 6, 7]}  # 10 nodes
    assert "over the 100-byte limit" in _error("a: '" + "x" * 100 + "'\n", max_bytes=100).problem


def test_a_file_is_read_only_up_to_the_byte_limit(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("# padding\n" * (MAX_YAML_BYTES // 10 + 1))
    with pytest.raises(StrictYamlError, match=r"big.yaml: a YAML file of 1,048,58\d bytes is over the 1,048,576-byte limit"):
        read_yaml_text(big)
    started = time.perf_counter()
    with pytest.raises(StrictYamlError, match="over the 1,048,576-byte limit"):
        read_yaml_text("/dev/zero")  # never ends: only the limit is read
    assert time.perf_counter() - started < 2


def test_what_gpuledger_writes_it_reads_back():
    shared = {"pool": "a", "price_per_gpu_hour": "2"}
    data = {"costs": {"rate_cards": [shared, shared]}}
    assert "&" in yaml.safe_dump(data)  # PyYAML writes an object met twice as an anchor and an alias
    assert load_yaml(dump_yaml(data)).data == data


def test_syntax_errors_keep_their_line():
    err = _error("a: [1\n")
    assert err.line == 2 and err.problem.startswith("not valid YAML:")


# --- property: never silently last-wins --------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "run_id", "0x1", "1"])  # few keys: duplicates are common
SCALARS = st.one_of(st.integers(-5, 5), st.sampled_from(["x", "60000", "1e400", "USD"]), st.booleans(), st.none())


def _mappings(depth: int) -> st.SearchStrategy:
    """A mapping as a list of (key, value) pairs: a key may come twice, as a hostile file writes it."""
    value = SCALARS if depth == 0 else st.one_of(SCALARS, _mappings(depth - 1), st.lists(SCALARS, max_size=3))
    return st.lists(st.tuples(KEYS, value), min_size=1, max_size=4)


def _render(pairs: list, indent: int = 0) -> list[str]:
    out = []
    for key, value in pairs:
        head = " " * indent + key + ":"
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            out += [head, *_render(value, indent + 2)]
        else:
            out.append(f"{head} {json.dumps(value)}")
    return out


def _duplicate_paths(pairs: list, at: tuple = ()) -> set[str]:
    found, seen = set(), set()
    for key, value in pairs:
        canonical = yaml.safe_load(f"{key}: 0").popitem()[0]  # 0x1 and 1 are one key
        if canonical in seen:
            found.add(".".join((*at, key)))
        seen.add(canonical)
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            found |= _duplicate_paths(value, (*at, key))
    return found


@settings(max_examples=300, deadline=None)
@given(_mappings(3), st.one_of(st.none(), st.integers(0, 40)))
def test_the_reader_gives_the_duplicate_free_parse_or_names_the_duplicate(pairs, anchor_at):
    lines = _render(pairs)
    anchor_line = None
    if anchor_at is not None:  # an anchored value, and an alias of it at the end
        i = anchor_at % len(lines)
        anchor_line = i + 1
        key, _, value = lines[i].partition(":")
        lines[i] = f"{key}: &v{value}" if value.strip() else f"{key}: &v"
        lines.append("zz: *v")
    text = "\n".join(lines) + "\n"
    duplicates = _duplicate_paths(pairs)
    try:
        doc = load_yaml(text, "p.yaml")
    except StrictYamlError as err:
        if anchor_at is not None:
            assert "anchor (&v)" in err.problem and err.line == anchor_line, err
        else:
            named = err.problem.split("`")[1]
            assert named in duplicates and "is given twice" in err.problem, (err, duplicates)
        return
    assert anchor_at is None and not duplicates, text
    assert doc.data == yaml.safe_load(text)  # no duplicates: exactly what PyYAML itself reads


def test_every_yaml_gpuledger_reads_goes_through_the_strict_reader():
    # PyYAML's own readers are last-wins on a duplicate key and follow aliases: only strict_yaml may call them
    import ast

    from tests.conftest import PROJECT_ROOT

    readers = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all", "compose",
               "compose_all", "parse", "SafeLoader", "FullLoader", "Loader", "CSafeLoader", "CLoader", "BaseLoader"}
    found = []
    for folder in ("pipelines", "models", "simulator"):
        for path in sorted((PROJECT_ROOT / folder).rglob("*.py")):
            if path.name == "strict_yaml.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "yaml"
                        and node.attr in readers) or (isinstance(node, ast.ImportFrom) and node.module == "yaml"
                             and any(a.name in readers for a in node.names)):
                    found.append(f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}")
    assert not found, found


@pytest.mark.parametrize("text", [
    "a: 1\nb: 2\na: 3\n", "x: &one 1\n", "a: *x\n", "a: " + "[" * 40 + "]" * 40 + "\n", "a: [1\n",
    "<<: {a: 1}\n", "m: {1: a, 0x1: b}\n",
])
def test_the_pure_python_reader_refuses_what_the_libyaml_one_does(monkeypatch, text):
    # without libyaml, PyYAML's own parser runs under the same checks
    from pipelines.lib.config import strict_yaml

    fast = _error(text)
    monkeypatch.setattr(strict_yaml, "_LOADER", strict_yaml._PurePythonLoader)
    slow = _error(text)
    assert (slow.line, slow.problem.split(":")[0]) == (fast.line, fast.problem.split(":")[0])
    assert load_yaml("a: {b: [1, 2]}\n").data == {"a": {"b": [1, 2]}}
