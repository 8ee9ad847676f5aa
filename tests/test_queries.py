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


# --- templates, switches, documented columns (issue 13 §2) ---------------------------------

def test_item_template_repeats_per_name_and_quotes_it():
    q = queries.parse("t/q", Path("q.sql"),
                      "-- identifiers: stats\nselect {{stats:sum(@) AS @}} from t")
    assert q.render(stats=["a", 'b"c']) == 'select sum("a") AS "a", sum("b""c") AS "b""c" from t'
    assert q.render(stats=[]) == "select  from t"


def test_tuple_items_and_separator():
    q = queries.parse("t/q", Path("q.sql"),
                      "-- identifiers: pairs, nulls\n"
                      "select {{pairs:covar_samp(@1, @2),}} ({{nulls:@ IS NULL OR |}} false)")
    sql = q.render(pairs=[("a", "b"), ("b", "b")], nulls=["x", "y"])
    assert sql == ('select covar_samp("a", "b"), covar_samp("b", "b"), '
                   '("x" IS NULL OR "y" IS NULL OR  false)')
    with pytest.raises(InvalidParameterError, match="uses @2"):
        q.render(pairs=[("a",)], nulls=[])
    with pytest.raises(InvalidParameterError, match="list of names"):
        q.render(pairs="ab", nulls=[])


def test_the_template_runs_and_names_are_data():
    con = duckdb.connect()
    con.execute('create table t ("a;b" int, "x" int)')
    con.execute("insert into t values (1, 2), (3, 4)")
    q = queries.parse("t/q", Path("q.sql"),
                      "-- identifiers: stats\nselect {{stats:sum(@) AS @}} from t")
    assert con.execute(q.render(stats=["a;b", "x"])).fetchall() == [(4, 6)]


def test_switches_keep_or_drop_sections():
    text = ("-- switches: dup, fill\nselect 1{{#dup}} + 2{{^fill}} + 4{{/fill}}{{/dup}}"
            "{{^dup}} + 8{{/dup}}")
    q = queries.parse("t/q", Path("q.sql"), text)
    assert q.switches == ("dup", "fill")
    assert q.render(dup=True, fill=False) == "select 1 + 2 + 4"
    assert q.render(dup=True, fill=True) == "select 1 + 2"
    assert q.render(dup=False, fill=True) == "select 1 + 8"
    with pytest.raises(InvalidParameterError, match="True or False"):
        q.render(dup=1, fill=True)
    with pytest.raises(InvalidParameterError, match="switches"):
        q.render(dup=True)


def test_switch_declarations_are_checked():
    with pytest.raises(InvalidParameterError, match="declares switches"):
        queries.parse("t/q", Path("q.sql"), "-- switches: a\nselect 1")
    with pytest.raises(InvalidParameterError, match="not closed"):
        queries.parse("t/q", Path("q.sql"), "-- switches: a\nselect 1 {{#a}} + 1")


def test_bind_keeps_the_parameters_the_rendered_text_uses():
    q = queries.parse("t/q", Path("q.sql"),
                      "-- params: a, b\n-- switches: s\nselect $a{{#s}} + $b{{/s}}")
    assert q.bind(q.render(s=False), a=1, b=2) == {"a": 1}
    assert q.bind(q.render(s=True), a=1, b=2) == {"a": 1, "b": 2}
    con = duckdb.connect()
    sql = q.render(s=False)
    assert con.execute(sql, q.bind(sql, a=5, b=2)).fetchall() == [(5,)]


def test_documented_output_columns_are_read_from_the_header():
    text = ("-- outputs: two columns:\n"
            "--   * has_click INTEGER, summed: 1 when the search\n"
            "--     has a click\n"
            "--   * first_ts TIMESTAMP: the earliest click\n"
            "-- grain: one row\nselect 1")
    q = queries.parse("t/q", Path("q.sql"), text)
    assert [(c.name, c.type, sorted(c.tags)) for c in q.columns] == [
        ("has_click", "INTEGER", ["summed"]), ("first_ts", "TIMESTAMP", [])]
    assert q.columns[0].doc == "1 when the search has a click"
    assert q.tagged("summed") == ("has_click",)


def test_create_makes_temporary_views_that_keep_bound_values(tmp_path):
    """A view over bound parameters used to be made from a DuckDB relation, which creates a
    persistent view: online_metrics on a file-backed connection wrote one into the user's
    database file. create() makes temporary views; the values stay bound (session
    variables), and a quote in a value is data."""
    con = duckdb.connect(str(tmp_path / "user.duckdb"))
    con.execute("create temp table t as select range AS a from range(10)")
    name = queries.create(con, "v'1", "select a from t where a >= $lo and $s = 'it''s'",
                          params={"lo": 7, "s": "it's"})
    assert con.execute(f"select * from {queries.quote_ident(name)}").fetchall() == [
        (7,), (8,), (9,)]
    queries.create(con, "v2", "select a from t where a < $hi", params={"hi": 2})
    assert con.execute("select count(*) from v2").fetchall() == [(2,)]
    assert con.execute(f"select count(*) from {queries.quote_ident(name)}").fetchall() == [(3,)]
    persistent = con.execute("select view_name from duckdb_views() "
                             "where not temporary and not internal").fetchall()
    assert persistent == []


def test_online_metrics_leave_nothing_in_a_file_backed_database(tmp_path):
    import warnings

    import onlineeval

    root = Path(__file__).resolve().parents[1]
    db = tmp_path / "user.duckdb"
    con = duckdb.connect(str(db))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logs = onlineeval.load_logs(root / "sample_logs" / "ab", con=con)
        onlineeval.online_metrics(logs)
        onlineeval.top_queries(logs, n=3)
        il = onlineeval.load_logs(root / "sample_logs" / "interleaving", con=con)
        onlineeval.interleaving_readout(il, n_resamples=10)
    con.close()
    con = duckdb.connect(str(db))
    assert con.execute("select view_name from duckdb_views() where not internal "
                       "union all select table_name from duckdb_tables()").fetchall() == []


def test_a_render_is_reused_and_its_checks_still_apply(monkeypatch):
    """The rendered text is kept per query and choices (a small log's load renders the same
    queries each time); a cached text answers only the choices it was made for."""
    q = queries.parse("t/cached", Path("q.sql"), "-- identifiers: by\n-- switches: dup\n"
                      "select {{by,}} 1 {{#dup}}+ 1{{/dup}} from t")
    calls = []
    original = queries.Query._render
    monkeypatch.setattr(queries.Query, "_render",
                        lambda self, chosen: calls.append(dict(chosen)) or original(self, chosen))
    names = ["a"]
    first = q.render(by=names, dup=True)
    assert q.render(by=["a"], dup=True) == first == 'select "a", 1 + 1 from t'
    assert len(calls) == 1
    names.append("b")  # the cache holds a copy of the choices, not the caller's list
    assert q.render(by=names, dup=True) == 'select "a", "b", 1 + 1 from t'
    assert q.render(by=["a"], dup=False) == 'select "a", 1  from t'
    assert len(calls) == 3
    for bad in ({"by": "a", "dup": True}, {"by": ["a"], "dup": 1}, {"by": ["a"]}):
        with pytest.raises(InvalidParameterError):
            q.render(**bad)
