"""The engines that run the SQL of ``sql/``: DuckDB (the default) and Spark (optional).

Every module of the pipeline runs its queries on ``logs.con``. That is a DuckDB connection,
or a :class:`onlineeval.engines.spark.SparkConnection`, which answers the few calls the
pipeline makes (``execute``, ``sql``, ``table``) by translating the same rendered query to
Spark SQL (:mod:`onlineeval.engines.dialects`). Nothing of Spark (nor sqlglot) is imported
unless a Spark connection is asked for.

The files of ``sql/`` are the definitions, in the portable subset; a switch a file's header
lists as ``duckdb_only`` turns on a DuckDB-only optimisation, which :func:`optimisations`
enables on DuckDB only.
"""

from __future__ import annotations

from typing import Any

from onlineeval.namespace import lazy_submodules

# onlineeval.engines.spark / .dialects on first access (importing pyspark or sqlglot then)
__getattr__ = lazy_submodules(__name__)

#: the engines a command or load_logs may run on
ENGINES: tuple[str, ...] = ("duckdb", "spark")


def name(con: Any) -> str:
    """The engine of a connection: ``"duckdb"`` unless it says otherwise."""
    return getattr(con, "engine", "duckdb")


def is_duckdb(con: Any) -> bool:
    return name(con) == "duckdb"


def optimisations(con: Any, query: Any) -> dict[str, bool]:
    """The ``duckdb_only`` switches of ``query`` (a :class:`onlineeval.queries.Query`): on
    for DuckDB, off (the portable definition) on any other engine."""
    return dict.fromkeys(query.duckdb_only, is_duckdb(con))


#: environment variables the CLI's global --engine, --spark-master and --spark-conf set for one
#: command (load_logs reads them when no engine is given)
ENGINE_ENV = "ONLINEEVAL_ENGINE"
SPARK_MASTER_ENV = "ONLINEEVAL_SPARK_MASTER"
SPARK_CONF_ENV = "ONLINEEVAL_SPARK_CONF"


def resolve(engine: Any) -> Any:
    """``engine`` as load_logs takes it: None (the environment's, else DuckDB), ``"duckdb"``,
    ``"spark"`` (a session from the environment's master and conf), a SparkSession, or a
    :class:`onlineeval.engines.spark.SparkConnection`. Returns ``"duckdb"`` or a
    SparkConnection."""
    import os

    from onlineeval.errors import InvalidParameterError

    if engine is None:
        engine = os.environ.get(ENGINE_ENV) or "duckdb"
    if engine == "duckdb":
        return engine
    if isinstance(engine, str):
        if engine != "spark":
            raise InvalidParameterError(
                f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
        from onlineeval.engines import spark

        conf = dict(line.split("=", 1) for line in
                    os.environ.get(SPARK_CONF_ENV, "").splitlines() if "=" in line)
        # a session of its own: temp views of two loaded logs must not replace each other
        return spark.SparkConnection(spark.session(
            os.environ.get(SPARK_MASTER_ENV) or "local[2]", conf).newSession())
    if name(engine) == "spark":
        return engine
    if type(engine).__name__ == "SparkSession":
        from onlineeval.engines import spark

        return spark.SparkConnection(engine)
    raise InvalidParameterError(
        f"engine must be 'duckdb', 'spark', a SparkSession or a SparkConnection; got "
        f"{type(engine).__name__}")
