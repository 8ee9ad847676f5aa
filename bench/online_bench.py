"""Benchmark: the online-metrics suite against a one-pass floor and a pandas implementation.

Usage (heavy; run one at a time):

    flock /tmp/onlineeval-heavy.lock python bench/online_bench.py --sizes 1m,10m

For each size it generates seeded Parquet logs under bench/_data/ (10 results per search), in
two cases (``--sessions``): derived sessions (no session_id) and given ones (the same log whose
searches carry a session_id; every contender then takes its sessions from that column), then
runs, alternating, each contender in its own subprocess (so peak memory is per contender);
times are measured inside the subprocess after imports:

* suite  — ``online_metrics(logs, by=("variant",))`` on logs loaded with ``load_logs`` (the
           load, which validates every row, is timed separately and reported too);
* floor  — one DuckDB pass reading every column of the three tables once
           (``max(c) FILTER (WHERE c IS NOT NULL)`` per column: plain ``max``/``count`` are
           answered from Parquet statistics and read nothing);
* pandas — the same metrics in pandas (sessions, dwell, reformulation included), reading the
           Parquet files with ``pd.read_parquet``;
* polars — the same metrics, step for step as pandas, in polars lazy frames (optional: runs
           when polars is installed, ``pip install -e ".[bench]"``).

It checks that pandas, polars and SQL agree on every metric (and exits non-zero if not),
and prints medians, ratios and peak RSS.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = {"100k": 100_000, "1m": 1_000_000, "10m": 10_000_000}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ----------------------------------------------------------------------------- contenders


def run_suite(data: Path, memory_limit: str, threads: int) -> dict:
    from onlineeval import load_logs
    from onlineeval.db import connect
    from onlineeval.online import online_metrics

    con = connect(memory_limit=memory_limit, threads=threads)
    con.execute("SET enable_progress_bar = false")
    t0 = time.perf_counter()
    logs = load_logs(data, con=con)
    t1 = time.perf_counter()
    df = online_metrics(logs, by=("variant",))
    t2 = time.perf_counter()
    return {"seconds": t2 - t1, "load_seconds": t1 - t0,
            "result": json.loads(df.to_json(orient="records"))}


def run_floor(data: Path, memory_limit: str, threads: int) -> dict:
    from onlineeval.db import connect
    from onlineeval.queries import quote_ident

    con = connect(memory_limit=memory_limit, threads=threads)
    con.execute("SET enable_progress_bar = false")
    t0 = time.perf_counter()
    for table in ("searches", "results", "clicks"):
        rel = con.read_parquet(str(data / f"{table}.parquet"))
        exprs = ", ".join(
            f"max({quote_ident(c)}) FILTER (WHERE {quote_ident(c)} IS NOT NULL)"
            for c in rel.columns
        )
        rel.aggregate(exprs).fetchall()
    return {"seconds": time.perf_counter() - t0}


def pandas_metrics(s, c, sat_dwell_s: float = 30.0, gap_min: float = 30.0):
    """The online metrics by variant, in pandas, following the same definitions. Sessions
    are the given (user_id, session_id) pairs when the searches have a session_id, else
    derived per user by the gap."""
    import numpy as np
    import pandas as pd

    gap = pd.Timedelta(minutes=gap_min)
    given = "session_id" in s.columns
    key = ["user_id", "session_id"] if given else ["user_id"]
    c = c.merge(s[["search_id", *key]], on="search_id", how="inner")
    ev = pd.concat([
        s[["search_id", *key, "ts", "query"]].assign(kind=0, rank=np.nan, dwell_ms=np.nan),
        c.loc[c["ts"].notna(), ["search_id", *key, "ts", "rank", "dwell_ms"]].assign(
            kind=1, query=None),
    ], ignore_index=True)
    ev = ev.sort_values([*key, "ts", "kind", "search_id", "rank", "dwell_ms"],
                        na_position="last", kind="stable", ignore_index=True)
    same_next = pd.Series(True, index=ev.index)
    same_prev = pd.Series(True, index=ev.index)
    for k in key:  # the same stream: the same user (and the same given session)
        same_next &= ev[k].shift(-1) == ev[k]
        same_prev &= ev[k].shift(1) == ev[k]
    next_ts = ev["ts"].shift(-1).where(same_next)
    prev_ts = ev["ts"].shift(1).where(same_prev)
    if given:  # the next event of the session, however late
        next_in = next_ts.notna()
        ev["session_no"] = ev["session_id"]
    else:
        next_in = next_ts.notna() & ((next_ts - ev["ts"]) <= gap)
        start = prev_ts.isna() | ((ev["ts"] - prev_ts) > gap)
        ev["session_no"] = start.astype("int64").groupby(ev["user_id"]).cumsum()

    is_click = ev["kind"] == 1
    derived = (next_ts - ev["ts"]).dt.total_seconds() * 1000.0
    dwell = ev["dwell_ms"].fillna(derived.where(next_in))
    ev["sat"] = is_click & ((dwell >= sat_dwell_s * 1000.0)
                            | (ev["dwell_ms"].isna() & ~next_in))
    next_kind = ev["kind"].shift(-1)
    next_query = ev["query"].shift(-1)
    ev["new_query"] = (next_in & (next_kind == 0) & ev["query"].notna() & next_query.notna()
                       & (next_query != ev["query"]))

    per_click = c.assign(untimed=c["ts"].isna()).groupby("search_id").agg(
        n_clicks=("search_id", "size"), untimed=("untimed", "sum"),
        min_rank=("rank", "min"), first_ts=("ts", "min"))
    untimed_sat = c.loc[c["ts"].isna(), ["search_id"]].assign(
        sat=c.loc[c["ts"].isna(), "dwell_ms"] >= sat_dwell_s * 1000.0)
    n_sat = pd.concat([ev.loc[is_click, ["search_id", "sat"]], untimed_sat]).groupby(
        "search_id")["sat"].sum().rename("n_sat")
    sr = ev.loc[~is_click, ["search_id", "session_no", "new_query"]]
    f = s.merge(sr[["search_id", "session_no", "new_query"]], on="search_id")
    f = f.merge(per_click, on="search_id", how="left").merge(n_sat, on="search_id", how="left")
    f["n_clicks"] = f["n_clicks"].fillna(0)
    f["n_sat"] = f["n_sat"].fillna(0)
    f["untimed"] = f["untimed"].fillna(0)
    f["has_click"] = f["n_clicks"] > 0
    f["reformulated"] = f["new_query"] & (f["untimed"] == 0)
    f["rr"] = np.where(f["has_click"], 1.0 / f["min_rank"], 0.0)
    f["ttfc"] = (f["first_ts"] - f["ts"]).dt.total_seconds()

    # sessions: first search by (ts, search_id); outcomes over the session's searches
    f = f.sort_values(["user_id", "session_no", "ts", "search_id"], ignore_index=True)
    g = f.groupby(["user_id", "session_no"], sort=False)
    sessions = pd.DataFrame({
        "variant": g["variant"].first(),
        "has_click": g["has_click"].any(),
        "success": g["n_sat"].sum() > 0,
    })
    sv = sessions.groupby("variant")
    n_sessions = sv.size()
    by = f.groupby("variant")
    nonzero = f["n_results"] > 0
    out = pd.DataFrame({
        "searches": by.size(),
        "sessions": n_sessions,
        "users": by["user_id"].nunique(),
        "ctr": by["has_click"].mean(),
        "clicks_per_search": by["n_clicks"].mean(),
        "abandonment_rate": (nonzero & ~f["has_click"]).groupby(f["variant"]).sum()
        / nonzero.groupby(f["variant"]).sum(),
        "zero_result_rate": (f["n_results"] == 0).groupby(f["variant"]).mean(),
        "session_abandonment_rate": 1.0 - sv["has_click"].mean(),
        "session_success_rate": sv["success"].mean(),
        "mean_time_to_first_click_s": by["ttfc"].mean(),
        "click_mrr": by["rr"].mean(),
        "reformulation_rate": f.loc[f["query"].notna()].groupby("variant")["reformulated"]
        .mean(),
        "queries_per_session": by.size() / n_sessions,
    })
    return out.reset_index()


def run_pandas(data: Path, memory_limit: str, threads: int) -> dict:
    import pandas as pd

    t0 = time.perf_counter()
    s = pd.read_parquet(data / "searches.parquet")
    c = pd.read_parquet(data / "clicks.parquet")
    t1 = time.perf_counter()
    df = pandas_metrics(s, c)
    t2 = time.perf_counter()
    return {"seconds": t2 - t0, "read_seconds": t1 - t0,
            "result": json.loads(df.to_json(orient="records"))}


def polars_metrics(s, c, sat_dwell_s: float = 30.0, gap_min: float = 30.0):
    """The same metrics as :func:`pandas_metrics`, step for step, in polars (lazy frames)."""
    import polars as pl

    gap_us = int(gap_min * 60 * 1_000_000)
    sat_ms = sat_dwell_s * 1000.0
    given = "session_id" in s.collect_schema().names()
    key = ["user_id", "session_id"] if given else ["user_id"]
    c = c.join(s.select("search_id", *key), on="search_id", how="inner")
    ev = pl.concat([
        s.select("search_id", *key, "ts", "query",
                 pl.lit(0).alias("kind"), pl.lit(None, pl.Float64).alias("rank"),
                 pl.lit(None, pl.Float64).alias("dwell_ms")),
        c.filter(pl.col("ts").is_not_null()).select(
            "search_id", *key, "ts", pl.lit(None, pl.String).alias("query"),
            pl.lit(1).alias("kind"), pl.col("rank").cast(pl.Float64),
            pl.col("dwell_ms").cast(pl.Float64)),
    ], how="vertical_relaxed")
    ev = ev.sort([*key, "ts", "kind", "search_id", "rank", "dwell_ms"], nulls_last=True,
                 maintain_order=True)
    same_next = pl.all_horizontal([pl.col(k).shift(-1) == pl.col(k) for k in key])
    same_prev = pl.all_horizontal([pl.col(k).shift(1) == pl.col(k) for k in key])
    gap_next = (pl.col("ts").shift(-1) - pl.col("ts")).dt.total_microseconds()
    gap_prev = (pl.col("ts") - pl.col("ts").shift(1)).dt.total_microseconds()
    within = gap_next.is_not_null() if given else gap_next <= gap_us  # given: however late
    ev = ev.with_columns(
        next_in=(same_next.fill_null(False) & within).fill_null(False),
        start=(~same_prev.fill_null(False)) | (gap_prev > gap_us).fill_null(True),
        derived=gap_next / 1000.0,
        next_kind=pl.col("kind").shift(-1),
        next_query=pl.col("query").shift(-1),
    ).with_columns(
        session_no=(pl.col("session_id") if given
                    else pl.col("start").cast(pl.Int64).cum_sum().over("user_id")),
        dwell=pl.col("dwell_ms").fill_null(
            pl.when(pl.col("next_in")).then(pl.col("derived"))),
    ).with_columns(
        sat=(pl.col("kind") == 1) & ((pl.col("dwell") >= sat_ms).fill_null(False)
                                     | (pl.col("dwell_ms").is_null() & ~pl.col("next_in"))),
        new_query=(pl.col("next_in") & (pl.col("next_kind") == 0)
                   & pl.col("query").is_not_null() & pl.col("next_query").is_not_null()
                   & (pl.col("next_query") != pl.col("query"))).fill_null(False),
    )
    per_click = c.group_by("search_id").agg(
        n_clicks=pl.len(), untimed=pl.col("ts").is_null().sum(),
        min_rank=pl.col("rank").min(), first_ts=pl.col("ts").min())
    untimed_sat = c.filter(pl.col("ts").is_null()).select(
        "search_id", sat=(pl.col("dwell_ms") >= sat_ms).fill_null(False))
    n_sat = pl.concat([ev.filter(pl.col("kind") == 1).select("search_id", "sat"),
                       untimed_sat]).group_by("search_id").agg(
        n_sat=pl.col("sat").cast(pl.Int64).sum())
    sr = ev.filter(pl.col("kind") == 0).select("search_id", "session_no", "new_query")
    f = (s.join(sr, on="search_id", how="inner")
         .join(per_click, on="search_id", how="left")
         .join(n_sat, on="search_id", how="left")
         .with_columns(pl.col("n_clicks").fill_null(0), pl.col("n_sat").fill_null(0),
                       pl.col("untimed").fill_null(0))
         .with_columns(has_click=pl.col("n_clicks") > 0)
         .with_columns(
             reformulated=pl.col("new_query") & (pl.col("untimed") == 0),
             rr=pl.when(pl.col("has_click")).then(1.0 / pl.col("min_rank")).otherwise(0.0),
             ttfc=(pl.col("first_ts") - pl.col("ts")).dt.total_microseconds() / 1e6,
             nonzero=pl.col("n_results") > 0))
    sessions = (f.sort(["user_id", "session_no", "ts", "search_id"])
                .group_by(["user_id", "session_no"], maintain_order=True)
                .agg(variant=pl.col("variant").first(), has_click=pl.col("has_click").any(),
                     success=pl.col("n_sat").sum() > 0)
                .group_by("variant")
                .agg(sessions=pl.len(),
                     session_abandonment_rate=1.0 - pl.col("has_click").cast(pl.Float64).mean(),
                     session_success_rate=pl.col("success").cast(pl.Float64).mean()))
    per = f.group_by("variant").agg(
        searches=pl.len(),
        users=pl.col("user_id").n_unique(),
        ctr=pl.col("has_click").cast(pl.Float64).mean(),
        clicks_per_search=pl.col("n_clicks").cast(pl.Float64).mean(),
        abandonment_rate=(pl.col("nonzero") & ~pl.col("has_click")).sum()
        / pl.col("nonzero").sum(),
        zero_result_rate=(pl.col("n_results") == 0).cast(pl.Float64).mean(),
        mean_time_to_first_click_s=pl.col("ttfc").mean(),
        click_mrr=pl.col("rr").mean(),
        reformulation_rate=pl.col("reformulated").filter(pl.col("query").is_not_null())
        .cast(pl.Float64).mean(),
    )
    out = (per.join(sessions, on="variant")
           .with_columns(queries_per_session=pl.col("searches") / pl.col("sessions"))
           .sort("variant"))
    return out.collect()


def run_polars(data: Path, memory_limit: str, threads: int) -> dict:
    import polars as pl

    t0 = time.perf_counter()
    s = pl.scan_parquet(data / "searches.parquet")
    c = pl.scan_parquet(data / "clicks.parquet")
    df = polars_metrics(s, c)
    t1 = time.perf_counter()
    rows = [{k: (float(v) if isinstance(v, int | float) else v) for k, v in r.items()}
            for r in df.to_dicts()]
    return {"seconds": t1 - t0, "result": rows}


CONTENDERS = {"suite": run_suite, "floor": run_floor, "pandas": run_pandas,
              "polars": run_polars}


# ----------------------------------------------------------------------------- driver


def child(kind: str, data: Path, memory_limit: str, threads: int) -> None:
    out = CONTENDERS[kind](data, memory_limit, threads)
    out["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(out))


def spawn(kind: str, data: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--data", str(data),
           "--memory-limit", args.memory_limit, "--threads", str(args.threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def agree(a: list[dict], b: list[dict]) -> list[str]:
    problems = []
    if [r["variant"] for r in a] != [r["variant"] for r in b]:
        return [f"variants differ: {a} vs {b}"]
    for ra, rb in zip(a, b, strict=True):
        for key, va in ra.items():
            vb = rb[key]
            if isinstance(va, str):
                ok = va == vb
            else:
                ok = abs(va - vb) <= 1e-9 * max(1.0, abs(va), abs(vb))
            if not ok:
                problems.append(f"{ra['variant']} {key}: sql {va} pandas {vb}")
    return problems


def bench_data(size: str, n: int, sessions: str) -> Path:
    """The seeded log of ``n`` searches; ``sessions`` "given": the same log whose searches
    carry a session_id (its results and clicks are the derived case's files, linked)."""
    sys.path.insert(0, str(HERE))
    from _gen_online import generate

    data = generate(n, HERE / "_data" / f"online_{size}")
    if sessions == "derived":
        return data
    given = HERE / "_data" / f"online_{size}_given"
    given.mkdir(parents=True, exist_ok=True)
    for name in ("results", "clicks"):
        if not (given / f"{name}.parquet").exists():
            os.link(data / f"{name}.parquet", given / f"{name}.parquet")
    return generate(n, given, sessions=True)


def bench_size(size: str, n: int, sessions: str, args: argparse.Namespace) -> dict:
    label = f"{size} {sessions} sessions"
    t0 = time.perf_counter()
    data = bench_data(size, n, sessions)
    print(f"[{label}] data ready in {time.perf_counter() - t0:.1f}s: {data}", flush=True)
    kinds = ["suite", "floor"] + ([] if n > args.pandas_max else ["pandas"])
    if n <= args.polars_max and importlib.util.find_spec("polars") is not None:
        kinds.append("polars")  # optional: pip install -e ".[bench]"
    runs: dict[str, list[dict]] = {k: [] for k in kinds}
    for rep in range(args.reps):
        order = kinds[rep % len(kinds):] + kinds[:rep % len(kinds)]
        for kind in order:
            r = spawn(kind, data, args)
            runs[kind].append(r)
            print(f"[{label}] rep {rep + 1} {kind}: {r['seconds']:.2f}s, "
                  f"peak {r['peak_rss_mb']:.0f} MB", flush=True)
    med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    peak = {k: max(r["peak_rss_mb"] for r in v) for k, v in runs.items()}
    load = statistics.median(r["load_seconds"] for r in runs["suite"])
    summary = {"size": label, "sessions": sessions, "searches": n, "median_s": med,
               "peak_mb": peak,
               "load_s": load, "suite_over_floor": med["suite"] / med["floor"],
               "end_to_end_over_floor": (med["suite"] + load) / med["floor"]}
    if "pandas" in runs:
        problems = agree(runs["suite"][0]["result"], runs["pandas"][0]["result"])
        summary["pandas_over_suite"] = med["pandas"] / med["suite"]
        summary["suite_peak_over_pandas_peak"] = peak["suite"] / peak["pandas"]
        summary["pandas_read_s"] = statistics.median(r["read_seconds"] for r in runs["pandas"])
        summary["agree"] = not problems
        for p in problems:
            print(f"[{label}] DISAGREE {p}", flush=True)
    if "polars" in runs:
        rows = sorted(runs["polars"][0]["result"], key=lambda r: r["variant"])
        ours = sorted(runs["suite"][0]["result"], key=lambda r: r["variant"])
        problems_pl = [p.replace("pandas", "polars") for p in agree(ours, rows)]
        summary["polars_over_suite"] = med["polars"] / med["suite"]
        summary["suite_peak_over_polars_peak"] = peak["suite"] / peak["polars"]
        summary["polars_agree"] = not problems_pl
        for p in problems_pl:
            print(f"[{label}] DISAGREE {p}", flush=True)
    return summary


def report(summary: dict) -> None:
    m, p = summary["median_s"], summary["peak_mb"]
    print(f"\n== {summary['size']} ({summary['searches']:,} searches), median of reps ==")
    print(f"floor  {m['floor']:8.2f}s  peak {p['floor']:7.0f} MB")
    print(f"suite  {m['suite']:8.2f}s  peak {p['suite']:7.0f} MB  "
          f"= {summary['suite_over_floor']:.2f}x floor (target <= 3)")
    print(f"load   {summary['load_s']:8.2f}s  (load_logs validation; load + suite = "
          f"{summary['load_s'] + m['suite']:.2f}s = {summary['end_to_end_over_floor']:.2f}x "
          f"floor, target <= 5)")
    if "pandas" in m:
        print(f"pandas {m['pandas']:8.2f}s  peak {p['pandas']:7.0f} MB  "
              f"(of which read {summary['pandas_read_s']:.2f}s)")
        print(f"pandas / suite time = {summary['pandas_over_suite']:.2f}x (target >= 5); "
              f"suite / pandas peak = {summary['suite_peak_over_pandas_peak']:.2f} "
              f"(target < 0.5); results agree: {summary['agree']}")
    if "polars" in m:
        print(f"polars {m['polars']:8.2f}s  peak {p['polars']:7.0f} MB")
        print(f"polars / suite time = {summary['polars_over_suite']:.2f}x (target > 1); "
              f"suite / polars peak = {summary['suite_peak_over_polars_peak']:.2f} "
              f"(target < 0.5); results agree: {summary['polars_agree']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1m", help="comma list of 100k, 1m, 10m (default 1m)")
    ap.add_argument("--sessions", default="derived,given",
                    help="comma list of derived (no session_id: sessions by the 30-minute gap) "
                         "and given (searches carry a session_id); default both")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--memory-limit", default="2GB", help="DuckDB memory_limit (default 2GB)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--pandas-max", type=int, default=10_000_000,
                    help="skip pandas above this many searches")
    ap.add_argument("--polars-max", type=int, default=10_000_000,
                    help="skip polars above this many searches")
    ap.add_argument("--child", choices=list(CONTENDERS), help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.data, args.memory_limit, args.threads)
        return
    results = []
    for size in args.sizes.split(","):
        for sessions in args.sessions.split(","):
            if sessions not in ("derived", "given"):
                raise SystemExit(f"--sessions: derived or given, not {sessions!r}")
            results.append(bench_size(size, SIZES[size], sessions, args))
            report(results[-1])
    out = HERE / "_out"
    out.mkdir(exist_ok=True)
    (out / "online_bench.json").write_text(json.dumps(results, indent=2))
    if any(r.get(k) is False for r in results for k in ("agree", "polars_agree")):
        raise SystemExit("contenders disagree with onlineeval on some metric (see above)")


if __name__ == "__main__":
    main()
