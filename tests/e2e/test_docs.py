"""The project documents itself in docs/, and what cites it can rely on it.

- every `docs/…` path cited anywhere in the repository (code, SQL, tests, Markdown) exists, and a cited
  `#section` is a heading of that page; every relative link of the Markdown pages resolves likewise;
- no file cites the product's design contract, which a user's clone does not have, and no page under
  docs/ points outside the repository (../shared);
- every table and view a demo warehouse publishes is in docs/tables.md, under its own heading, with
  every one of its columns; every ledger category of models/ledger_categories.py is in docs/ledger.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from tests.conftest import PROJECT_ROOT

DOCS = PROJECT_ROOT / "docs"
# what `git ls-files` would hold of text: generated folders and dot folders are not the repository's
SKIPPED_DIRS = {"data", "dagster_home", "node_modules", "__pycache__"}
TEXT_SUFFIXES = {".py", ".sql", ".md", ".yaml", ".yml", ".toml", ".cfg", ".txt"}
# a `docs/...` citation: a path under docs/ and, optionally, a section anchor
DOCS_CITATION = re.compile(r"(?<![\w./-])(docs/(?:[\w-]+(?:\.[\w-]+)*/?)*)(?:#([\w-]+))?")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
# spelled in two parts so this file does not cite it either
CONTRACT = re.compile(r"\b" + "DESI" + r"GN\b")


def repository_files() -> list[Path]:
    files = []
    for path in sorted(PROJECT_ROOT.rglob("*")):
        rel = path.relative_to(PROJECT_ROOT)
        if any(p.startswith(".") or p in SKIPPED_DIRS or p.endswith(".egg-info") for p in rel.parts[:-1]):
            continue
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name == "Makefile"):
            files.append(path)
    return files


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The section anchors of a Markdown page (headings outside code blocks; a repeated one gets -1, -2…)."""
    seen: dict[str, int] = {}
    out, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"#{1,6} (.+)", line)
        if m and not fenced:
            base = slug(m[1])
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def test_repository_walk_sees_code_sql_tests_and_docs():
    rels = {p.relative_to(PROJECT_ROOT).as_posix() for p in repository_files()}
    assert {"README.md", "docs/ledger.md", "sql/marts/fct_cost_daily.sql", "pipelines/ingest/focus.py",
            "tests/e2e/test_docs.py", "Makefile"} <= rels
    assert not any(r.startswith((".venv/", ".git/", "data/")) for r in rels)


def test_every_cited_docs_path_exists_with_its_section():
    problems, cited = [], 0
    for path in repository_files():
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            for m in DOCS_CITATION.finditer(line):
                cited += 1
                target, anchor = PROJECT_ROOT / m[1], m[2]
                where = f"{path.relative_to(PROJECT_ROOT)}:{n}: {m[0]}"
                if not target.exists():
                    problems.append(f"{where}: no such file")
                elif anchor and (target.suffix != ".md" or anchor not in anchors(target)):
                    problems.append(f"{where}: no section #{anchor}")
    assert cited > 20  # the code, SQL and tests do cite docs/
    assert not problems, "\n".join(problems)


def test_every_relative_markdown_link_resolves():
    pages = [PROJECT_ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    problems = []
    for page in pages:
        for m in MARKDOWN_LINK.finditer(page.read_text(encoding="utf-8")):
            link = m[1]
            if re.match(r"^[a-z]+:", link):
                continue  # https:, mailto:
            file_part, _, anchor = link.partition("#")
            target = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(PROJECT_ROOT)}: ({link})"
            if not target.exists():
                problems.append(f"{where}: no such file")
            elif anchor and (target.suffix != ".md" or anchor not in anchors(target)):
                problems.append(f"{where}: no section #{anchor}")
    assert not problems, "\n".join(problems)


def test_the_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    listed = {m[1] for m in MARKDOWN_LINK.finditer(index)}
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")} - {"README.md"}
    assert pages == listed
    for source in ("focus", "aws_cur", "slurm", "kubernetes", "dcgm", "runs", "inventory"):
        assert f"ingest/{source}.md" in pages


def test_nothing_cites_the_design_contract_or_points_outside_the_repository():
    citing = [f"{p.relative_to(PROJECT_ROOT)}:{n}" for p in repository_files()
              for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), start=1)
              if CONTRACT.search(line)]
    assert not citing, citing
    outside = [f"{p.relative_to(PROJECT_ROOT)}: {m[0]}" for p in DOCS.rglob("*.md")
               for m in re.finditer(r"\.\./shared|/work/shared", p.read_text(encoding="utf-8"))]
    assert not outside, outside


def test_every_ledger_category_is_in_the_ledger_page():
    from models.ledger_categories import CATEGORIES

    ledger = (DOCS / "ledger.md").read_text(encoding="utf-8")
    missing = [c.name for c in CATEGORIES if f"`{c.name}`" not in ledger]
    assert not missing, missing


@pytest.fixture(scope="module")
def published(simulated_ledger) -> Path:
    run = simulated_ledger  # the session's ledger: only read here
    return run.warehouse.with_name(f"{run.warehouse.stem}.published.duckdb")


def tables_page_sections() -> dict[str, str]:
    """docs/tables.md's `### schema.table` sections: name -> the text under the heading."""
    text = (DOCS / "tables.md").read_text(encoding="utf-8")
    parts = re.split(r"^### (\S+)\s*$", text, flags=re.M)
    return {name: re.split(r"^## ", body, flags=re.M)[0] for name, body in zip(parts[1::2], parts[2::2])}


@pytest.mark.world
def test_every_published_table_and_view_is_documented_with_its_columns(published):
    with duckdb.connect(str(published), read_only=True) as con:
        tables = con.execute(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables ORDER BY 1").fetchall()
        columns = {t: [c[0] for c in con.execute(f"DESCRIBE {t}").fetchall()] for (t,) in tables}
    # the demo publishes all three schemas, finance views among them
    assert {t.split(".")[0] for t in columns} == {"marts", "ops", "finance"}
    assert {"finance.reconciliation_daily", "marts.fct_cost_daily", "ops.quarantine"} <= set(columns)
    sections = tables_page_sections()
    undocumented = sorted(set(columns) - set(sections))
    assert not undocumented, f"published but not in docs/tables.md: {undocumented}"
    missing = {t: [c for c in cols if f"`{c}`" not in sections[t]] for t, cols in columns.items()}
    missing = {t: cols for t, cols in missing.items() if cols}
    assert not missing, f"columns not named under their table in docs/tables.md: {missing}"
    # published by the Spark engine only (its readers' Parquet folder): tests/e2e/test_spark_equal.py reads it
    gone = sorted(set(sections) - set(columns) - {"ops.parquet_roots"})
    assert not gone, f"docs/tables.md describes tables that are not published: {gone}"
