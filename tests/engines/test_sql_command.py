"""``onlineeval sql QUERY --dialect D`` prints the translated query under a header of caveats."""

from __future__ import annotations

import pytest

from onlineeval.cli import main

pytest.importorskip("sqlglot")


@pytest.mark.parametrize("dialect", ["spark", "trino", "bigquery", "snowflake"])
def test_prints_translation_with_caveats(dialect, capsys):
    args = ["sql", "online/position_ctr", "--dialect", dialect,
            "--ident", "by=variant", "--ident", "source=searches"]
    assert main(args) == 0
    out = capsys.readouterr().out
    header = [line for line in out.splitlines() if line.startswith("--")]
    assert any("UNVERIFIED" in line for line in header)
    body = "\n".join(line for line in out.splitlines() if not line.startswith("--"))
    # the DOUBLE cast of the portable definition survives the translation
    assert "DOUBLE" in body.upper() or "FLOAT64" in body.upper()
    assert "GROUP BY ALL" not in body.upper()


def test_bigquery_week_is_monday_based(capsys):
    assert main(["sql", "online/time_buckets", "--dialect", "bigquery",
                 "--ident", "source=searches"]) == 0
    out = capsys.readouterr().out
    assert "WEEK(MONDAY)" in out


def test_parameters_stay_markers(capsys):
    assert main(["sql", "ab/variants", "--dialect", "trino"]) == 0
    out = capsys.readouterr().out
    assert ":experiment" in out and "parameters to bind: experiment" in out


@pytest.mark.parametrize("args, says", [
    (["sql", "logs/glob"], "DuckDB-only"),
    (["sql", "online/top_queries"], "--ident"),
    (["sql", "online/search_facts", "--on", "hashed", "--ident", "key=user_id"], "switch"),
    (["sql", "nope/nothing"], "no SQL query named"),
])
def test_errors_are_one_line(args, says, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1


def test_list_marks_duckdb_only(capsys):
    assert main(["sql", "--list"]) == 0
    out = capsys.readouterr().out
    assert "logs/glob  (DuckDB-only)" in out and "\nonline/metrics\n" in out


def test_trino_time_differences_in_whole_milliseconds(capsys):
    """Trino has no microsecond date_diff (sqlglot writes one): the translation counts whole
    milliseconds times 1000, and the header says what that loses."""
    assert main(["sql", "online/attribution", "--dialect", "trino"]) == 0
    out = capsys.readouterr().out
    body = "\n".join(line for line in out.splitlines() if not line.startswith("--"))
    assert "MICROSECOND" not in body.upper()
    assert body.count("DATE_DIFF('millisecond', ") == 2 and "* 1000" in body
    assert "TIMESTAMP(3)" in out


def test_trino_time_difference_means_the_same_on_millisecond_times():
    """The Trino expression (read back by sqlglot, run by DuckDB) equals DuckDB's
    microsecond difference on times of whole milliseconds."""
    import duckdb
    import sqlglot

    from onlineeval.engines.dialects import translate

    sql = ("SELECT date_diff('microsecond', a, b) AS d FROM (SELECT "
           "TIMESTAMP '2026-03-01 23:59:59.998' AS a, TIMESTAMP '2026-03-02 00:00:01.250' AS b)")
    trino = translate(sql, "trino")
    back = sqlglot.transpile(trino, read="trino", write="duckdb")[0]
    assert duckdb.sql(back).fetchall() == duckdb.sql(sql).fetchall() == [(1_252_000,)]
