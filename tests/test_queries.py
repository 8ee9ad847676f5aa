"""The SQL loader: header parsing, parameter and identifier checks, quoting, discovery."""

from pathlib import Path

import duckdb
import pytest

from onlineeval import queries
from onlineeval.errors import InvalidParameterError, UnknownNameError

SQL = """-- computes: clicks per group
-- grain: one row per group
-- params: min_rank
-- identifiers: by
with kept as (
    select * from t where rank >= $min_rank
)
select {{by,}} count(*) as n from kept group by all order by all
"""


def make(text: str = SQL) -> queries.Query:
    return queries.parse("t/q", Path("q.sql"), text)


def test_header_is_parsed():
    q = make()
    assert q.params == ("min_rank",)
    assert q.identifiers == ("by",)
    assert q.meta["grain"] == "one row per group"
    assert q.doc.splitlines()[0] == "computes: clicks per group"


def test_undeclared_parameter_is_an_error():
    with pytest.raises(InvalidParameterError, match=r"declares parameters \[\] but the query uses \['x'\]"):
        queries.parse("t/q", Path("q.sql"), "-- grain: one\nselect $x")


def test_unused_declared_identifier_is_an_error():
    with pytest.raises(InvalidParameterError, match="identifiers"):
        queries.parse("t/q", Path("q.sql"), "-- identifiers: by\nselect 1")


def test_render_quotes_every_identifier_and_runs():
    con = duckdb.connect()
    con.execute('create table t ("we""ird; drop table t; --" varchar, rank int)')
    con.execute("insert into t values ('a', 1), ('a', 2), ('b', 3)")
    q = make()
    sql = q.render(by=['we"ird; drop table t; --'])
    assert '"we""ird; drop table t; --", count(*)' in sql
    rows = con.execute(sql, q.bind(min_rank=2)).fetchall()
    assert rows == [("a", 1), ("b", 1)]
    # the table survived: the name was data, not SQL
    assert con.execute("select count(*) from t").fetchone() == (3,)


def test_render_with_empty_identifier_list_and_prefix():
    q = queries.parse("t/q", Path("q.sql"), "-- identifiers: by\nselect {{by:s.,}} 1 from t s")
    assert q.render(by=[]) == "select  1 from t s"
    assert q.render(by=["a", "b"]).endswith('select s."a", s."b", 1 from t s')


def test_bind_checks_names():
    q = make()
    with pytest.raises(InvalidParameterError, match="takes parameters"):
        q.bind(min_rank=1, extra=2)
    with pytest.raises(InvalidParameterError, match="takes identifiers"):
        q.render()


@pytest.mark.parametrize("bad", ["", None, "a\x00b"])
def test_quote_ident_rejects_non_names(bad):
    with pytest.raises(InvalidParameterError):
        queries.quote_ident(bad)


def test_unknown_query_lists_known_ones():
    with pytest.raises(UnknownNameError, match="no SQL query named"):
        queries.load("no/such/query")
    with pytest.raises(UnknownNameError):
        queries.load("../pyproject")


def test_every_shipped_query_loads():
    names = queries.available()
    for name in names:
        q = queries.load(name)
        assert q.meta, f"{name} has no header"


def test_rendered_sql_has_no_comment_a_name_could_escape():
    text = "-- grain: one row per {{by}}\n-- identifiers: by\nselect {{by}} from t"
    q = queries.parse("t/q", Path("q.sql"), text)
    sql = q.render(by=["a\nselect 1; --"])
    assert "--" not in sql.split('"')[0] and sql.startswith('select "a\nselect 1; --"')
    with pytest.raises(InvalidParameterError, match="trailing comment"):
        queries.parse("t/q", Path("q.sql"), "-- identifiers: by\nselect 1 -- {{by}}\n, {{by}}")
