"""One local Spark session for the whole test session (starting one costs 5-50 s).

Under pytest-xdist, every test using it carries ``pytest.mark.xdist_group("spark")``, so that
``--dist loadgroup`` runs them on one worker, which starts one session."""

from __future__ import annotations

import pytest

#: settings that make the many small queries of the tests cheaper without changing what they
#: test. The parity suite checks what the translated SQL means (types, NULLs, division,
#: windows, time zones), which Spark settles when it analyses a query, before any of these
#: apply; the physical plan they change computes the same rows. Adaptive execution re-plans
#: each query after its shuffle stages (more jobs, a second planning) to balance partitions
#: that one shuffle partition over small logs does not need; whole-stage code generation
#: compiles Java (Janino) for each query, and most queries here run once. Measured on the
#: A/B readout queries of one random log (load ~9, one run each, with the serial GC below):
#: Spark jobs 158 -> 80, JVM CPU 73 -> 60 s.
TEST_CONF = {"spark.sql.adaptive.enabled": "false",
             "spark.sql.codegen.wholeStage": "false"}


@pytest.fixture(scope="session")
def spark_session():
    pytest.importorskip("pyspark")
    pytest.importorskip("sqlglot")
    from onlineeval.engines import spark

    # one shuffle partition: the test logs are small, and each task costs time on 2 cores.
    # The JIT stops at its first tier (C1): the tests run many short queries once each, so
    # the optimising compiler spent more CPU compiling than it saved (measured over the two
    # Spark test files, machine load ~16: the JVM's CPU 212 s -> 155 s, their wall +5%, as
    # the queries on the critical path run C1 code; under -n 2 the cores are shared, so the
    # CPU is what counts). The tier changes no result: compiled Java computes exactly what
    # interpreted Java does.
    java_options = spark.DEFAULT_CONF["spark.driver.extraJavaOptions"] + " -XX:TieredStopAtLevel=1"
    # The serial collector: the heap is small and the cores are shared, so G1's concurrent
    # and parallel threads cost more CPU than they save.
    java_options += " -XX:+UseSerialGC"
    session = spark.session("local[2]", {"spark.sql.shuffle.partitions": "1",
                                         "spark.driver.extraJavaOptions": java_options,
                                         **TEST_CONF})
    yield session
    session.stop()


@pytest.fixture
def spark_con(spark_session):
    """A connection of its own for each test (its temp views hold one log)."""
    from onlineeval.engines import spark

    return spark.SparkConnection(spark_session.newSession())


@pytest.fixture(scope="module")
def module_spark(spark_session):
    """A factory of connections, one per log, for module-scoped log fixtures."""
    from onlineeval.engines import spark

    return lambda: spark.SparkConnection(spark_session.newSession())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that use the Spark session (directly or through another fixture) share a group."""
    for item in items:
        if "spark_session" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))
