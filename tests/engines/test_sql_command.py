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
