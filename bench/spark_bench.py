"""Benchmark: the same pipeline on DuckDB and on Spark local mode, checked to agree.

Usage (heavy; run one at a time):

    flock /tmp/onlineeval-heavy.lock python bench/spark_bench.py --sizes 1m
    flock /tmp/onlineeval-heavy.lock python bench/spark_bench.py --sizes 10m \
        --spark-conf spark.driver.memory=8g

For each size it writes (once) the seeded log of ``bench/_gen_online.py`` under bench/_data/
(``online_<size>``, shared with online_bench.py) and its interleaved copy
(``online_<size>_interleaved``, shared with scale_audit.py: results carry a team, A/B by rank,
the searches one experiment ``il`` with the variants control/treatment), then runs on that
copy, on each engine, the stages:

* load         — ``load_logs`` with every validation rule and exclusion count: DuckDB reads
                 the Parquet files; Spark gets ``spark.read.parquet`` DataFrames and validates
                 them in Spark with the loader's own SQL, translated;
* online       — ``online_metrics(logs, by=("variant",))``;
* unit_sums    — the A/B unit sums (``sql/ab/unit_sums``, one row per user and variant);
* interleaving — the interleaving page outcomes and per-user statistics.

The Spark session is started once, before everything, and its start-up is timed on its own.
Each repetition runs DuckDB, then Spark, in this process; before the ratios are printed,
every result of Spark is compared with DuckDB's as the parity suite compares them (integers,
texts and NULLs identical, floats within 1e-12 relative: ``assert_same`` of
tests/engines/test_spark_parity.py), and the load reports must be equal; a disagreement
stops the bench with exit 1, so it never times a wrong answer. The load average
(``os.getloadavg``, what ``uptime`` prints) is recorded before and after every measurement.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZES = {"100k": 100_000, "1m": 1_000_000, "10m": 10_000_000}
TABLES = ("searches", "results", "clicks")
STAGES = ("load", "online", "unit_sums", "interleaving")
EXPERIMENT = "il"  # the interleaved copy's one experiment (scale_audit.make_interleaved)


def _bench_module(name: str) -> Any:
    sys.path.insert(0, str(HERE))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(HERE))


def assert_same() -> Any:
    """The parity suite's comparison of two result frames (one definition of "agree")."""
    path = ROOT / "tests" / "engines" / "test_spark_parity.py"
    spec = importlib.util.spec_from_file_location("_spark_parity", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.assert_same


def make_log(n: int, label: str, workdir: Path) -> Path:
    """The interleaved copy of the seeded log of ``n`` searches (written once; a copy cut
    short is left under a temporary name, never taken for a complete one)."""
    plain = _bench_module("_gen_online").generate(n, workdir / f"online_{label}")
    out = workdir / f"online_{label}_interleaved"
    if not out.exists():
        tmp = workdir / f"online_{label}_interleaved.tmp"
        if tmp.exists():
            for f in tmp.iterdir():
                f.unlink()
        _bench_module("scale_audit").make_interleaved(plain, tmp, "2GB")
        tmp.rename(out)
    return out


def spark_session(master: str, conf: dict[str, str]) -> Any:
    from onlineeval.engines import spark

    return spark.session(master, conf)


def _load_duckdb(data: Path, memory_limit: str, threads: int) -> Any:
    from onlineeval import load_logs
    from onlineeval.db import connect

    con = connect(memory_limit=memory_limit, threads=threads)
    con.execute("SET enable_progress_bar = false")
    return load_logs(data, con=con)


def _load_spark(data: Path, session: Any) -> Any:
    from onlineeval import load_logs

    session.catalog.clearCache()  # the tables a previous repetition's load cached
    return load_logs(**{t: session.read.parquet(str(data / f"{t}.parquet")) for t in TABLES})


def pipeline(load: Any, label: str = "") -> tuple[dict[str, dict], dict[str, Any]]:
    """Run ``load()`` and the stages on its logs: (times and load averages per stage, results
    per stage). With ``label``, each stage's time is printed when it ends (a long run that
    is stopped still shows what it measured)."""
    from onlineeval.abtest.units import unit_rows
    from onlineeval.interleaving import outcomes
    from onlineeval.online import online_metrics

    def interleaving(logs: Any) -> tuple:
        counts = outcomes.page_outcomes(logs)
        return counts, outcomes.user_stats(logs, by=("variant",))

    logs = None
    steps = {
        "load": lambda: load(),
        "online": lambda: online_metrics(logs, by=("variant",)),
        "unit_sums": lambda: unit_rows(logs, experiment=EXPERIMENT),
        "interleaving": lambda: interleaving(logs),
    }
    times: dict[str, dict] = {}
    results: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded log's exclusions, counted in the report
        for stage in STAGES:
            before = os.getloadavg()[0]
            t0 = time.perf_counter()
            out = steps[stage]()
            seconds = time.perf_counter() - t0
            times[stage] = {"seconds": seconds, "load_avg": (before, os.getloadavg()[0])}
            if label:
                print(f"{label} {stage:12} {seconds:9.2f} s  (load avg "
                      f"{_fmt_load(times[stage]['load_avg'])})", flush=True)
            if stage == "load":
                logs = out
                out = (out.report.rows_read, out.report.excluded, out.report.empty_columns)
            results[stage] = out
    return times, results


def check_agreement(duck: dict[str, Any], spark: dict[str, Any]) -> None:
    """Raise AssertionError (naming the stage) unless every result of Spark is DuckDB's."""
    same = assert_same()
    try:
        stage = "load"
        assert duck["load"] == spark["load"], (duck["load"], spark["load"])
        stage = "online"
        same(duck["online"], spark["online"])
        stage = "unit_sums"
        (a, known_a), (b, known_b) = duck["unit_sums"], spark["unit_sums"]
        assert known_a == known_b, (known_a, known_b)
        same(a, b)
        stage = "interleaving"
        (ca, sa), (cb, sb) = duck["interleaving"], spark["interleaving"]
        assert ca == cb, (ca, cb)
        same(sa, sb)
    except AssertionError as exc:
        raise AssertionError(f"{stage}: Spark and DuckDB disagree: {exc}") from None


def _fmt_load(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.1f}->{pair[1]:.1f}"


def bench_size(label: str, n: int, args: argparse.Namespace, session: Any) -> None:
    t0 = time.perf_counter()
    data = make_log(n, label, args.workdir)
    print(f"\n== {label}: {n:,} searches ({data}, ready in {time.perf_counter() - t0:.1f} s)",
          flush=True)
    runs: dict[str, list[dict]] = {"duckdb": [], "spark": []}
    for rep in range(args.reps):
        duck_t, duck = pipeline(lambda: _load_duckdb(data, args.memory_limit, args.threads),
                                f"rep {rep + 1} duckdb")
        runs["duckdb"].append(duck_t)
        spark_t, spark = pipeline(lambda: _load_spark(data, session), f"rep {rep + 1} spark ")
        runs["spark"].append(spark_t)
        check_agreement(duck, spark)
        print(f"rep {rep + 1}: every stage agrees (load report equal; frames: integers, "
              "texts, NULLs identical, floats within 1e-12 relative)", flush=True)
        del duck, spark
    print(f"{'stage':14} {'duckdb s':>9} {'spark s':>9} {'spark/duckdb':>13}   "
          f"(medians of {args.reps})")
    totals = {e: [sum(r[s]["seconds"] for s in STAGES) for r in runs[e]] for e in runs}
    for stage in (*STAGES, "total"):
        med = {e: statistics.median(totals[e] if stage == "total" else
                                    [r[stage]["seconds"] for r in runs[e]]) for e in runs}
        print(f"{stage:14} {med['duckdb']:9.2f} {med['spark']:9.2f} "
              f"{med['spark'] / med['duckdb']:12.1f}x", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1m", help="comma list of 100k, 1m, 10m (default 1m)")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--memory-limit", default="2GB", help="DuckDB memory_limit (default 2GB)")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (default 2)")
    ap.add_argument("--spark-master", default="local[2]")
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting on top of the engine's (repeatable), e.g. "
                         "spark.driver.memory=8g")
    ap.add_argument("--workdir", type=Path, default=HERE / "_data")
    args = ap.parse_args()
    conf = dict(kv.split("=", 1) for kv in args.spark_conf)
    import duckdb
    import pyspark

    print(f"duckdb {duckdb.__version__}, pyspark {pyspark.__version__}, "
          f"master {args.spark_master}, spark conf {conf or 'engine defaults'}, DuckDB "
          f"memory_limit {args.memory_limit}, {args.threads} threads; "
          f"load avg {os.getloadavg()}", flush=True)
    before = os.getloadavg()[0]
    t0 = time.perf_counter()
    session = spark_session(args.spark_master, conf)
    started = time.perf_counter() - t0
    java = session.sparkContext._jvm.System.getProperty("java.version")
    print(f"spark session start-up {started:.2f} s (load avg "
          f"{_fmt_load((before, os.getloadavg()[0]))}); Spark {session.version}, Java {java}",
          flush=True)
    try:
        for label in args.sizes.split(","):
            bench_size(label, SIZES[label], args, session)
    except AssertionError as exc:
        print(f"spark_bench: {exc}", file=sys.stderr)
        sys.exit(1)
    finally:
        session.stop()


if __name__ == "__main__":
    main()
