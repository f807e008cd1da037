"""The Spark SQL of a statement is made once and kept (pipelines/engines/spark/sql_cache.py): the kept
text is what transpiling gives, a new process finds it on disk, and another statement is its own."""

import sqlglot

from pipelines.engines.spark import sql_cache, transpile


def test_a_statement_is_transpiled_once_and_found_again_by_a_new_process(tmp_path, monkeypatch):
    monkeypatch.setenv(sql_cache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(sql_cache, "_kept", {})
    statement = sqlglot.parse_one("SELECT a // b AS q, strftime(d, '%Y-%m') AS m FROM intermediate.t", read="duckdb")
    made = sql_cache.spark_sql(statement)
    assert made == transpile.to_spark(statement) and "intermediate__t" in made
    kept = list((tmp_path / "spark-sql").glob("*.sql"))
    assert [p.read_text() for p in kept] == [made]

    def never(_):
        raise AssertionError("transpiled again")

    monkeypatch.setattr(sql_cache, "_kept", {})  # as a new process: nothing in memory
    monkeypatch.setattr(transpile, "to_spark", never)
    assert sql_cache.spark_sql(statement.copy()) == made
    monkeypatch.undo()
    monkeypatch.setenv(sql_cache.CACHE_ENV, str(tmp_path))
    other = sqlglot.parse_one("SELECT a // c AS q FROM intermediate.t", read="duckdb")
    assert sql_cache.spark_sql(other) == transpile.to_spark(other) != made
    assert len(list((tmp_path / "spark-sql").glob("*.sql"))) == 2


def test_a_cache_folder_that_cannot_be_written_is_no_error(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(sql_cache.CACHE_ENV, str(blocked))
    monkeypatch.setattr(sql_cache, "_kept", {})
    statement = sqlglot.parse_one("SELECT 1 AS x", read="duckdb")
    assert sql_cache.spark_sql(statement) == transpile.to_spark(statement)
