"""Every file of sql/ is in the portable subset (docs/sql-portability.md), or says in its
header that it is DuckDB-only and why; the subset check itself fails on each construct it
exists for (so it cannot pass vacuously)."""

from __future__ import annotations

import itertools

import pytest

from onlineeval import queries

sqlglot = pytest.importorskip("sqlglot")
dialects = pytest.importorskip("onlineeval.engines.dialects")

NAMES = queries.available()


def portable_renders(q: queries.Query) -> list[str]:
    """The query under every combination of its switches (the DuckDB-only optimisation
    switches off), each identifier a list of two names, or of (name, name) pairs when its
    template uses @2."""
    off = set(q.duckdb_only)
    free = [s for s in q.switches if s not in off]
    names: dict[str, list] = {}
    for ident in q.identifiers:
        pairs = f"{{{{{ident}:" in q.text and "@2" in q.text
        names[ident] = [("a1", "a2")] if pairs else ["a1"]
    out = []
    for values in itertools.product((False, True), repeat=len(free)):
        chosen = {**names, **dict.fromkeys(off, False), **dict(zip(free, values, strict=True))}
        out.append(q.render(**chosen))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_file_is_portable_or_says_why_not(name):
    q = queries.load(name)
    if not q.portable:
        reason = q.meta["engines"].split(" ", 1)[1:]
        assert reason and len(reason[0]) > 10, f"{name}: say why it is DuckDB-only"
        return
    for sql in portable_renders(q):
        assert dialects.violations(sql) == [], name
        for dialect in dialects.DIALECTS:
            assert dialects.translate(sql, dialect)


@pytest.mark.parametrize("sql", [
    "SELECT COLUMNS(*) FROM t",
    "SELECT a FROM t UNION ALL BY NAME SELECT a FROM u",
    "WITH x AS MATERIALIZED (SELECT 1 AS a) SELECT a FROM x",
    "SELECT a / b FROM t",
    "SELECT 1.0 / CAST(b AS DOUBLE) FROM t",
    "SELECT CAST(a AS DOUBLE) / b + 0.5 FROM t",
    "SELECT hash(a) FROM t",
    "SELECT epoch_us(ts) FROM t",
    "SELECT getvariable('x')",
    "SELECT a FROM t ANTI JOIN u USING (a)",
    "SELECT a, count(*) FROM t GROUP BY ALL",
    "SELECT a FROM t ORDER BY ALL",
    "SELECT * EXCLUDE (a) FROM t",
    "SELECT CAST(a AS UBIGINT) FROM t",
    "SELECT a // b FROM t",
    "SELECT list(a) FROM t",
    "SELECT a FROM read_csv('x.csv')",
])
def test_each_rule_fails_its_construct(sql):
    assert dialects.violations(sql)


@pytest.mark.parametrize("sql", [
    "SELECT CAST(a AS DOUBLE) / b, CAST(1.5 AS DOUBLE), a FROM t GROUP BY 3 ORDER BY 3",
    "SELECT a FROM t ANTI JOIN u ON t.a = u.a",
    "SELECT count(*) FILTER (WHERE a > 1), date_diff('microsecond', b, c) FROM t",
])
def test_the_subset_allows(sql):
    assert dialects.violations(sql) == []


def test_bigquery_weeks_start_on_monday():
    # DuckDB's date_trunc('week') is Monday-based; BigQuery's bare WEEK is Sunday-based
    out = dialects.translate("SELECT date_trunc('week', ts) FROM t", "bigquery")
    assert "WEEK(MONDAY)" in out


def test_every_file_is_checked():
    portable = [n for n in NAMES if queries.load(n).portable]
    assert len(NAMES) >= 60 and len(portable) >= 25
