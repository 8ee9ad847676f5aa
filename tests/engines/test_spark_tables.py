"""A table made by ``SparkConnection.create(..., table=True)`` (the loader's helper tables, the
A/B per-unit rows): the rows of its query, computed once, behind a plan that later queries
see as one relation (not the chain of views below it); replacing or dropping the name frees
its cached rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

SOURCE = pa.table({"k": pa.array(["a", "b", "a", None, "c"]),
                   "x": pa.array([1.5, None, 2.25, 4.0, -1.0]),
                   "n": pa.array([1, 2, 3, 4, None], pa.int64())})
#: a chain of views over the registered source: the table reads the last one twice
CHAIN = [("v1", "SELECT k, x, n FROM src WHERE n IS NULL OR n > 0"),
         ("v2", "SELECT k, sum(x) AS sx, count(n) AS cn FROM v1 GROUP BY k"),
         ("v3", "SELECT a.k, a.sx, b.cn FROM v2 AS a JOIN v2 AS b ON a.k = b.k")]
QUERY = "SELECT k, sx / 2 AS half, cn FROM v3"


def _leaves(con, name: str) -> list[str]:
    plan = con.spark.table(name)._jdf.queryExecution().analyzed()
    leaves = plan.collectLeaves()
    return [leaves.apply(i).nodeName() for i in range(leaves.size())]


def _cached(con, sql: str) -> bool:
    manager = con.spark._jsparkSession.sharedState().cacheManager()
    return manager.lookupCachedData(con.frame(sql)._jdf).isDefined()


@pytest.fixture
def chain(spark_con):
    spark_con.register("src", SOURCE)
    for name, sql in CHAIN:
        spark_con.create(name, sql)
    return spark_con


def test_a_table_has_its_querys_rows_behind_one_relation(chain):
    chain.create("as_view", QUERY)
    chain.create("as_table", QUERY, table=True)
    assert sorted(chain.table("as_table").fetchall(), key=repr) == \
        sorted(chain.table("as_view").fetchall(), key=repr) == \
        [("a", 1.875, 2), ("b", None, 1), ("c", -0.5, 0)]  # a NULL key joins nothing
    assert chain.spark.table("as_table").schema == chain.spark.table("as_view").schema
    # the view's plan reaches down to the registered file (twice: v2 is joined to itself)
    assert _leaves(chain, "as_view") == ["LogicalRelation", "LogicalRelation"]
    assert _leaves(chain, "as_table") == ["InMemoryRelation"]


def test_a_table_joins_itself_and_feeds_further_tables(chain):
    chain.create("t", QUERY, table=True)
    chain.create("u", "SELECT a.k, a.half + b.half AS y FROM t AS a JOIN t AS b "
                      "ON a.k = b.k AND a.cn = b.cn", table=True)
    assert sorted(chain.table("u").fetchall(), key=repr) == [("a", 3.75), ("b", None), ("c", -1.0)]
    assert _leaves(chain, "u") == ["InMemoryRelation"]


def test_replacing_or_dropping_a_table_frees_its_rows(chain):
    chain.create("t", QUERY, table=True)
    assert _cached(chain, QUERY)
    chain.create("t", "SELECT 1 AS one")
    assert not _cached(chain, QUERY)
    chain.create("t", QUERY, table=True)
    chain.unregister("t")
    assert not _cached(chain, QUERY)
    assert not chain.spark.catalog.tableExists("t")
