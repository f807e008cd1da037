"""The Parquet copy Spark reads of a DuckDB table (pipelines/engines/spark/mirror.py): only the days whose
rows changed are written again, a day whose rows are gone is removed, and the copy always reads back as
the table. Pure DuckDB: no Spark needed."""

from datetime import date

import duckdb
import pytest

from pipelines.engines.spark.mirror import FINGERPRINTS, mirror
from pipelines.engines.spark.parquet import read_parquet_sql

TABLE = "staging/stg_x"


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("CREATE SCHEMA staging")
    con.execute("CREATE TABLE staging.stg_x (day DATE, host VARCHAR, cost DECIMAL(38, 18))")
    con.execute("INSERT INTO staging.stg_x VALUES ('2026-11-01', 'a', 1.5), ('2026-11-01', 'b', 2), "
                "('2026-11-02', 'a', 0.000000000000000001)")
    yield con
    con.close()


def _copy(con, root) -> list[tuple]:
    return sorted(con.execute(f"SELECT day, host, cost FROM ({read_parquet_sql(root, TABLE)})").fetchall())


def _table(con) -> list[tuple]:
    return sorted(con.execute("SELECT day, host, cost FROM staging.stg_x").fetchall())


def test_only_changed_days_are_written_again(con, tmp_path):
    assert mirror(con, tmp_path, [TABLE]) == {TABLE: 2}
    assert _copy(con, tmp_path) == _table(con)
    assert mirror(con, tmp_path, [TABLE]) == {TABLE: 0}  # up to date: nothing written

    con.execute("UPDATE staging.stg_x SET cost = 2.000000000000000001 WHERE host = 'b'")  # one digit, one day
    con.execute("INSERT INTO staging.stg_x VALUES ('2026-11-03', 'c', 7)")
    before = (tmp_path / TABLE / "day=2026-11-02" / "data.parquet").stat().st_mtime_ns
    assert mirror(con, tmp_path, [TABLE]) == {TABLE: 2}  # 11-01 changed, 11-03 new
    assert (tmp_path / TABLE / "day=2026-11-02" / "data.parquet").stat().st_mtime_ns == before
    assert _copy(con, tmp_path) == _table(con)

    con.execute("DELETE FROM staging.stg_x WHERE day = '2026-11-02'")  # a bill withdrawn: its day is gone
    assert mirror(con, tmp_path, [TABLE]) == {TABLE: 0}
    assert not (tmp_path / TABLE / "day=2026-11-02").exists()
    assert _copy(con, tmp_path) == _table(con)
    assert date(2026, 11, 2) not in {d for d, *_ in _copy(con, tmp_path)}


def test_a_copy_cut_short_is_written_again(con, tmp_path):
    mirror(con, tmp_path, [TABLE])
    (tmp_path / TABLE / "day=2026-11-01" / "data.parquet").unlink()  # as a crash before the rename would leave it
    fingerprints = tmp_path / TABLE / FINGERPRINTS
    fingerprints.write_text(fingerprints.read_text().replace('"2026-11-01"', '"2026-10-31"'))  # stale, as then
    mirror(con, tmp_path, [TABLE])
    assert _copy(con, tmp_path) == _table(con)


def test_a_table_with_undated_rows_is_one_file(con, tmp_path):
    con.execute("INSERT INTO staging.stg_x VALUES (NULL, 'z', 3)")  # e.g. an unreadable file's quarantine row
    assert mirror(con, tmp_path, [TABLE]) == {TABLE: 1}
    assert (tmp_path / TABLE / "data.parquet").is_file()
    assert sorted(con.execute(f"SELECT host FROM read_parquet('{tmp_path / TABLE / 'data.parquet'}')").fetchall()) == [
        ("a",), ("a",), ("b",), ("z",)]
    con.execute("DELETE FROM staging.stg_x WHERE day IS NULL")  # back to dated rows: the layout changes
    mirror(con, tmp_path, [TABLE])
    assert not (tmp_path / TABLE / "data.parquet").exists()
    assert _copy(con, tmp_path) == _table(con)


def test_a_day_written_by_spark_before_gives_way_to_the_copy(con, tmp_path):
    mirror(con, tmp_path, [TABLE])
    day = tmp_path / TABLE / "day=2026-11-01"
    (day / "data.parquet").rename(day / "part-00000-spark.snappy.parquet")  # as Spark names its files
    con.execute("UPDATE staging.stg_x SET cost = 9 WHERE host = 'a'")
    mirror(con, tmp_path, [TABLE])
    assert sorted(p.name for p in day.glob("*.parquet")) == ["data.parquet"]
    assert _copy(con, tmp_path) == _table(con)


def test_a_hugeint_is_copied_as_a_decimal_exactly(con, tmp_path):
    """DuckDB writes a HUGEINT to Parquet as a DOUBLE: 10^30 + 7 would lose its 7, and Spark refuses a
    DOUBLE file beside its own DECIMAL(38, 0) files of the same column (int_gpu_seconds' share-ms)."""
    con.execute("CREATE TABLE staging.stg_wide (day DATE, share_ms HUGEINT)")
    con.execute("INSERT INTO staging.stg_wide VALUES ('2026-11-01', 1000000000000000000000000000007)")
    mirror(con, tmp_path, ["staging/stg_wide"])
    path = tmp_path / "staging" / "stg_wide" / "day=2026-11-01" / "data.parquet"
    (dtype,) = con.execute(f"SELECT type FROM parquet_schema('{path}') WHERE name = 'share_ms'").fetchone()
    assert dtype == "FIXED_LEN_BYTE_ARRAY"  # a DECIMAL(38, 0), not a DOUBLE
    (value,) = con.execute(f"SELECT share_ms FROM read_parquet('{path}')").fetchone()
    assert value == 10**30 + 7
