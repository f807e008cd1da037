"""The one YAML reader of gpuledger: the organisation config and run plans (plans/*.yaml) are read here.

PyYAML's safe loader is safe against code execution, not against a file that lies or explodes:
- a key written twice is last-wins, silently: a second `costs:` drops every rate card of the first,
  and `{llm-70b: "60000", llm-70b: "1"}` is a budget of 1. Here it is an error naming the key, the
  file and both lines (keys are compared as YAML reads them, so `1:` and `0x1:`, or `yes:` and `true:`,
  are the same key);
- anchors and aliases (`&a` / `*a`) let nine lines stand for a billion values (the "billion laughs"):
  walking or validating them took 11.7 GB. Neither file has a use for them, so any anchor, alias or
  merge key (`<<:`) is refused, naming its line;
- a file is read only up to a byte limit (1 MiB unless told), and a document only up to a number of
  nodes and a nesting depth, so whatever a file holds, reading it costs a bounded time and memory and
  ends in a sentence rather than an exhausted machine.

`load_yaml(text, source=...)` gives the data and the line of each key path (for error messages);
`read_yaml_text(path)` reads a file within the byte limit; `dump_yaml(data)` writes YAML this reader
takes back (PyYAML's dumper writes an object met twice as an anchor and an alias). Both raise StrictYamlError, a ValueError
with the `line` (1-based, 0 when the whole document is meant) and the `problem` sentence apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MAX_YAML_BYTES = 1 << 20  # a config or a plan is a few kilobytes; a megabyte is not one
MAX_YAML_NODES = 200_000  # every scalar, list and mapping; a 1 MiB file of short scalars is about that
MAX_YAML_DEPTH = 32  # lists and mappings inside each other; the config's deepest is 5


class StrictYamlError(ValueError):
    """A YAML document refused, with the 1-based line of the problem (0: the whole document)."""

    def __init__(self, problem: str, line: int = 0, source: str | Path | None = None):
        self.problem, self.line, self.source = problem, line, source
        where = f"{source}:{line}" if source and line else (str(source) if source else (f"line {line}" if line else ""))
        super().__init__(f"{where}: {problem}" if where else problem)


@dataclass(frozen=True)
class YamlDocument:
    data: Any  # None for an empty document
    key_lines: dict[tuple, int]  # each key path (keys, and list indexes) -> the line it is written on


def read_yaml_text(path: Path, max_bytes: int = MAX_YAML_BYTES) -> str:
    """The UTF-8 text of the file at `path`, read only up to `max_bytes` (a bigger file, or a device
    that never ends, is refused without reading it all). OSError and UnicodeDecodeError pass through."""
    with open(path, "rb") as f:
        data = f.read(max_bytes + 1)
        if len(data) > max_bytes:
            size = os.fstat(f.fileno()).st_size
            shown = f"{size:,} bytes" if size > max_bytes else "more bytes"
            raise StrictYamlError(f"a YAML file of {shown} is over the {max_bytes:,}-byte limit", 0, path)
    return data.decode("utf-8")


def load_yaml(text: str, source: str | Path | None = None, *, max_bytes: int = MAX_YAML_BYTES,
              max_nodes: int = MAX_YAML_NODES, max_depth: int = MAX_YAML_DEPTH) -> YamlDocument:
    """The one document in `text` (read from `source`, named in errors), refusing duplicate keys,
    anchors, aliases and merge keys, and anything over the limits, with a StrictYamlError."""
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise StrictYamlError(f"a YAML document of {size:,} bytes is over the {max_bytes:,}-byte limit", 0, source)
    loader = _LOADER(text, max_nodes, max_depth)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDocument(None, {})
        loader.paths, key_lines = _walk(node)
        return YamlDocument(loader.construct_document(node), key_lines)
    except StrictYamlError as err:
        raise StrictYamlError(err.problem, err.line, source) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        raise StrictYamlError(f"not valid YAML: {' '.join(str(err).split())}",
                              mark.line + 1 if mark else 0, source) from None
    except yaml.YAMLError as err:
        raise StrictYamlError(f"not valid YAML: {' '.join(str(err).split())}", 0, source) from None
    finally:
        loader.dispose()


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(data: Any) -> str:
    """`data` as block YAML, keys in their order, every value written out where it is (no anchors)."""
    return yaml.dump(data, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True)


def _line(node_or_event: Any) -> int:
    return node_or_event.start_mark.line + 1


class _StrictChecks:
    """The checks of this module, mixed in before a PyYAML safe loader's classes (libyaml's parser or
    PyYAML's own, below): composing refuses anchors, aliases and the limits; constructing a mapping
    refuses merge keys and a key given twice."""

    def __init__(self, text: str, max_nodes: int, max_depth: int):
        super().__init__(text)
        self.max_nodes, self.max_depth = max_nodes, max_depth
        self.nodes = self.depth = 0
        self.paths: dict[int, tuple] = {}  # id(mapping node) -> its key path, for naming a duplicate

    def compose_node(self, parent: Any, index: Any) -> Any:
        # checked before the node is composed: an alias is never followed, a deep nest never recursed into
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise StrictYamlError(f"an alias (*{event.anchor}) is not allowed: write the value out where it is used",
                                  _line(event))
        if getattr(event, "anchor", None) is not None:
            raise StrictYamlError(f"an anchor (&{event.anchor}) is not allowed: gpuledger reads no aliases, "
                                  "write each value out where it is used", _line(event))
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise StrictYamlError(f"the document has more than {self.max_nodes:,} keys, values, lists and mappings, "
                                  "the limit of a YAML file gpuledger reads", _line(event))
        self.depth += 1
        try:
            if self.depth > self.max_depth:
                raise StrictYamlError(f"lists and mappings are nested more than {self.max_depth} deep, the limit of "
                                      "a YAML file gpuledger reads", _line(event))
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:` merges a mapping in, silently last-wins too
                raise StrictYamlError("a merge key (<<) is not allowed: write the keys out", _line(key_node))
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: the safe constructor names it below
                break
            if first is not key_node:
                raise StrictYamlError(self._duplicate(node, first, key_node), _line(key_node))
        return super().construct_mapping(node, deep=deep)

    def _duplicate(self, mapping: yaml.MappingNode, first: yaml.Node, second: yaml.Node) -> str:
        texts = [k.value if isinstance(k, yaml.ScalarNode) else str(self.construct_object(k)) for k in (first, second)]
        path = ".".join(str(p) for p in (*self.paths.get(id(mapping), ()), texts[1]))
        lines = (f"twice on line {_line(first)}" if _line(first) == _line(second)
                 else f"twice, on line {_line(first)} and line {_line(second)}")
        same = f" (`{texts[0]}` and `{texts[1]}` are the same key in YAML)" if texts[0] != texts[1] else ""
        return (f"`{path}` is given {lines}{same}: a YAML reader would silently keep the second only; "
                "keep one (merge them if both are meant)")


def _walk(root: yaml.Node) -> tuple[dict[int, tuple], dict[tuple, int]]:
    """id(mapping node) -> its key path, and key path -> its line, over the whole document (iteratively:
    the depth limit bounds it anyway, but a walk needs no recursion)."""
    paths: dict[int, tuple] = {}
    lines: dict[tuple, int] = {}
    stack: list[tuple[yaml.Node, tuple]] = [(root, ())]
    while stack:
        node, at = stack.pop()
        if isinstance(node, yaml.MappingNode):
            paths[id(node)] = at
            for key, value in node.value:
                path = (*at, key.value)
                lines.setdefault(path, _line(key))
                stack.append((value, path))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*at, i)] = _line(item)
                stack.append((item, (*at, i)))
    return paths, lines


class _PurePythonLoader(_StrictChecks, yaml.SafeLoader):
    pass


if yaml.__with_libyaml__:
    import yaml._yaml as _libyaml

    class _LibyamlSafeLoader(yaml.composer.Composer, _libyaml.CParser, yaml.constructor.SafeConstructor,
                             yaml.resolver.Resolver):
        """libyaml's parser (its events come 17 times faster than PyYAML's own scanner gives them) under
        PyYAML's Python composer, so that compose_node is the checked one."""

        def __init__(self, text: str):
            _libyaml.CParser.__init__(self, text)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    class _LibyamlLoader(_StrictChecks, _LibyamlSafeLoader):
        pass

    _LOADER: type = _LibyamlLoader
else:  # PyYAML built without libyaml: the same checks, slower
    _LOADER = _PurePythonLoader
