"""Every table's SQL is laid out one way (pipelines/lib/warehouse/): `<layer>/<table>.sql`, or a folder
of `NN_<step>.sql` with one step named for the table; every macro is in sql/macros/."""

import re

import pytest

from pipelines.lib.warehouse import SQL_ROOT, macro_files, step, table_sql

STEP = re.compile(r"^\d{2}_[a-z0-9_]+\.sql$")


def test_no_sql_file_names_its_step_with_a_dot_and_every_step_is_numbered():
    dotted = [p.relative_to(SQL_ROOT).as_posix() for p in SQL_ROOT.rglob("*.sql") if p.stem.count(".")]
    assert not dotted, dotted
    for folder in [p for p in SQL_ROOT.rglob("*") if p.is_dir()]:
        unnumbered = [p.name for p in folder.glob("*.sql") if not STEP.match(p.name)]
        is_table = any(p.stem.split("_", 1)[-1] == folder.name for p in folder.glob("*.sql"))
        if is_table or folder.name == "macros":  # marts/checks is a folder of checks, no table
            assert not unnumbered, (folder, unnumbered)


@pytest.mark.parametrize("folder", sorted(p.name for p in (SQL_ROOT / "staging").iterdir() if p.is_dir()))
def test_a_staging_folder_has_its_day_rows_and_steps_found_by_name(folder):
    table = f"staging/{folder}"
    assert table_sql(table).query == f"{table}/90_{folder}"
    for path in (SQL_ROOT / table).glob("*.sql"):
        number, what = path.stem.split("_", 1)
        assert step(table, what) == f"{table}/{path.stem}"


def test_a_step_is_one_file_or_none():
    with pytest.raises(RuntimeError, match="exactly one step named NN_nothing.sql"):
        step("staging/stg_dcgm__gpu_minutes", "nothing")


def test_every_macro_is_in_the_macro_folder():
    defined_elsewhere = [p.relative_to(SQL_ROOT).as_posix() for p in SQL_ROOT.rglob("*.sql")
                         if p.parent.name != "macros" and re.search(r"CREATE\s+OR\s+REPLACE\s+MACRO", p.read_text(), re.I)]
    assert not defined_elsewhere, defined_elsewhere
    assert macro_files() == tuple(f"macros/{p.stem}" for p in sorted((SQL_ROOT / "macros").glob("*.sql")))
    assert not list(SQL_ROOT.glob("lib/*.sql")) and not (SQL_ROOT / "macros.sql").exists()
