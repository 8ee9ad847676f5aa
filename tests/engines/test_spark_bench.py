"""bench/spark_bench.py times a pipeline on DuckDB and Spark only after its agreement check
passes. That check, on the bench's own pipeline over a tiny seeded log, must accept equal
results and reject a difference in any stage: a load count, an integer, a float off by more
than the parity suite's 1e-12.

It runs on DuckDB's results only: the same pipeline on Spark took 30-70 s even on 200
searches (a JVM and a few hundred small Spark jobs on a loaded 2-core machine), and each
stage's Spark/DuckDB parity is the parity suite's job (test_spark_parity.py)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("pyspark")  # the check is the parity suite's assert_same
BENCH = Path(__file__).resolve().parents[2] / "bench" / "spark_bench.py"


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory, load_script):
    bench = load_script(BENCH)
    data = bench.make_log(200, "200", tmp_path_factory.mktemp("spark_bench"))
    _, results = bench.pipeline(lambda: bench._load_duckdb(data, "1GB", 2))
    return bench, results


def test_the_tiny_log_reaches_every_stage(bench_run):
    _, duck = bench_run
    rows_read, excluded, _ = duck["load"]
    assert rows_read["searches"] == 200 and sum(excluded.values()) >= 0
    assert sorted(duck["online"]["variant"]) == ["control", "treatment"]
    units, known = duck["unit_sums"]
    assert known == ["control", "treatment"] and len(units) > 10
    counts, stats = duck["interleaving"]
    assert counts.rows > 100 and len(stats) > 10


def _changed(results, stage):
    out = copy.deepcopy(results)
    if stage == "load":
        rows_read, *rest = out["load"]
        out["load"] = ({**rows_read, "clicks": rows_read["clicks"] + 1}, *rest)
    elif stage == "online":
        frame = out["online"]
        frame.loc[0, "ctr"] *= 1 + 1e-11  # above the 1e-12 relative tolerance
    elif stage == "unit_sums":
        frame = out["unit_sums"][0]
        column = next(c for c in frame.columns if frame[c].dtype.kind in "iu")
        frame.loc[frame.index[0], column] += 1
    elif stage == "interleaving":
        counts, stats = out["interleaving"]
        out["interleaving"] = (dataclasses.replace(counts, rows=counts.rows + 1), stats)
    else:  # a per-user statistic of the interleaving stage
        stats = out["interleaving"][1]
        column = next(c for c in stats.columns if stats[c].dtype.kind == "f")
        stats.loc[stats[column].ne(0).idxmax(), column] *= 1 + 1e-11
    return out


@pytest.mark.parametrize("stage", ["load", "online", "unit_sums", "interleaving",
                                   "interleaving stats"])
def test_the_check_accepts_equal_results_and_rejects_any_difference(bench_run, stage):
    bench, duck = bench_run
    bench.check_agreement(duck, copy.deepcopy(duck))
    name = stage.split()[0]
    with pytest.raises(AssertionError, match=f"{name}: Spark and DuckDB disagree"):
        bench.check_agreement(duck, _changed(duck, stage))
