"""One local Spark session for the whole test session (starting one costs 5-50 s)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark_con():
    pytest.importorskip("pyspark")
    pytest.importorskip("sqlglot")
    from onlineeval.engines import spark

    session = spark.session("local[2]")
    yield spark.SparkConnection(session)
    session.stop()
