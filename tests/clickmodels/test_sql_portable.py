"""The click-model and counterfactual SQL stays in the portable subset (issue 16): every
file translates to Spark, Trino, BigQuery and Snowflake without an unsupported construct."""

from __future__ import annotations

import pytest

from onlineeval import queries

NAMES = [n for n in queries.available() if n.split("/")[0] in ("clickmodels", "counterfactual")]


@pytest.mark.parametrize("name", NAMES)
def test_translates_to_every_dialect(name):
    sqlglot = pytest.importorskip("sqlglot")
    q = queries.load(name)
    sql = q.render(**{i: ["x"] for i in q.identifiers})
    for dialect in ("spark", "trino", "bigquery", "snowflake"):
        sqlglot.transpile(sql, read="duckdb", write=dialect,
                          unsupported_level=sqlglot.ErrorLevel.RAISE)
    assert "COLUMNS(" not in sql.upper() and "BY NAME" not in sql.upper()
    assert "MATERIALIZED" not in sql.upper()


def test_every_file_is_found():
    assert len(NAMES) == 9
