"""Scale audit: run each user-facing path on a large log under a DuckDB memory limit.

Usage (heavy; run one at a time):

    flock /tmp/onlineeval-heavy.lock python bench/scale_audit.py \
        --data bench/_data/online_10m --memory-limit 1GB [--paths load,online_variant,...]

Each path runs in its own child process (so peak RSS is the path's own); the parent records
wall time, the child's peak RSS (``wait4``), whether it completed, the rows of the result it
returned, and, for API paths, the time after imports. CLI paths run ``python -m onlineeval``
with ``ONLINEEVAL_MEMORY_LIMIT`` set (the only memory control a CLI user has). Interleaving
paths need a log with ``results.team``: ``--make-interleaved DIR`` writes one (the log of
``--data`` with a team column added in DuckDB, alternating A/B by rank per search, and the
searches' experiment made one interleaving experiment).

``--check 5m`` / ``--check 50m`` is the memory check of issue 15: it generates (once) the
bench's seeded log with 5M / 50M searches under ``--workdir`` and its interleaved copy, then
runs every CLI command on it (``online``, ``abtest``, ``readout``, ``positions``,
``top-queries``, ``power``, ``interleave``, ``interleave --per-query``) at ``--memory-limit`` 500MB / 2GB
(unless given), and prints for each whether it completed and its peak RSS against the limit
plus the Python overhead (``PYTHON_OVERHEAD_MB``: the interpreter with onlineeval, pandas and
DuckDB imported, before any query, plus DuckDB's allocations outside its buffer pool).

    python bench/scale_audit.py --check 5m --workdir /tmp/oe_scale
    python bench/scale_audit.py --check 50m --workdir /tmp/oe_scale   # hours on 2 cores
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _api(name: str, data: Path, memory_limit: str, threads: int) -> dict:
    from onlineeval import load_logs
    from onlineeval.db import connect

    con = connect(memory_limit=memory_limit, threads=threads)
    t0 = time.perf_counter()
    logs = load_logs(data, con=con)
    t1 = time.perf_counter()
    out = _run_path(name, logs)
    t2 = time.perf_counter()
    rows = len(out) if out is not None else 0
    return {"load_s": t1 - t0, "path_s": t2 - t1, "rows": rows}


def _run_path(name: str, logs: object) -> object:
    import onlineeval as oe

    if name == "load":
        return None
    if name == "online_variant":
        return oe.online_metrics(logs, by="variant")
    if name == "online_day":
        return oe.online_metrics(logs, by="day")
    if name == "online_exp_variant":
        return oe.online_metrics(logs, by=["experiment", "variant"])
    if name == "position_ctr":
        return oe.position_ctr(logs, by="variant")
    if name == "top_queries":
        return oe.top_queries(logs, n=20, by="variant")
    if name == "queries_over_time":
        return oe.queries_over_time(logs, freq="hour", by="variant")
    if name == "abtest":
        return oe.abtest(logs, metrics="ctr,click_mrr,abandonment_rate")
    if name == "abtest_cuped":
        return oe.abtest(logs, metrics="ctr,click_mrr,abandonment_rate",
                         pre_period="2024-03-04,2024-03-07")
    if name == "power":
        return oe.power(logs, metrics="ctr,click_mrr", variant="control")
    if name == "interleaving":
        return oe.interleaving_readout(logs)
    if name == "interleaving_per_query":
        return oe.interleaving_readout(logs, per_query=True)
    raise SystemExit(f"unknown path {name}")


CLI = {
    "cli_online": ["online", "{data}", "--by", "variant"],
    "cli_abtest": ["abtest", "{data}", "--metrics", "ctr,click_mrr,abandonment_rate"],
    "cli_readout": ["readout", "{data}"],
    "cli_positions": ["positions", "{data}"],
    "cli_top_queries": ["top-queries", "{data}"],
    "cli_power": ["power", "{data}", "--metrics", "ctr,click_mrr"],
    "cli_interleave": ["interleave", "{data}"],
    "cli_interleave_per_query": ["interleave", "{data}", "--per-query"],
}
# the commands of the memory check; interleaving ones run on the interleaved copy
CHECK_PATHS = ["cli_online", "cli_abtest", "cli_readout", "cli_positions", "cli_top_queries",
               "cli_power", "cli_interleave", "cli_interleave_per_query"]
CHECKS = {"5m": (5_000_000, "500MB"), "50m": (50_000_000, "2GB")}
#: what a command's peak RSS may exceed DuckDB's memory_limit by: measured 148 MB for the
#: interpreter with onlineeval (pandas, numpy, scipy, DuckDB) imported before any query, plus
#: DuckDB's allocations outside its buffer pool (query plans, Parquet metadata, result sets)
PYTHON_OVERHEAD_MB = 250


def _mb(size: str) -> float:
    units = {"KB": 1e-3, "MB": 1.0, "GB": 1e3, "KIB": 1 / 1024, "MIB": 1.0, "GIB": 1024.0}
    text = size.strip().upper()
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float(text) / 1e6


def memory_check(label: str, workdir: Path, memory_limit: str | None, threads: int) -> None:
    """Generate the check's logs once, then run every command at the limit."""
    sys.path.insert(0, str(HERE))
    from _gen_online import generate

    n, default_limit = CHECKS[label]
    limit = memory_limit or default_limit
    plain = workdir / f"online_{label}"
    inter = workdir / f"online_{label}_interleaved"
    t0 = time.perf_counter()
    generate(n, plain)
    if not (inter / "clicks.parquet").exists():
        make_interleaved(plain, inter, "2GB")
    print(f"data ready in {time.perf_counter() - t0:.0f}s: {plain}, {inter}", flush=True)
    budget = _mb(limit) + PYTHON_OVERHEAD_MB
    print(f"{label}: memory_limit={limit} threads={threads}; peak RSS budget = limit + "
          f"{PYTHON_OVERHEAD_MB} MB Python overhead = {budget:.0f} MB")
    print(f"{'command':26} {'ok':>3} {'wall s':>8} {'peak MB':>8} {'in budget':>9} "
          f"{'load avg (1 min) before/after':>30}")
    for name in CHECK_PATHS:
        before = os.getloadavg()[0]
        data = inter if "interleave" in name else plain
        res = subprocess.run(
            [sys.executable, __file__, "--one", name, "--data", str(data),
             "--memory-limit", limit, "--threads", str(threads)],
            capture_output=True, text=True, cwd=ROOT, check=False,
        )
        rec = json.loads(res.stdout.strip().splitlines()[-1])
        within = rec["peak_rss_mb"] <= budget
        print(f"{name:26} {'yes' if rec['ok'] else 'NO':>3} {rec['wall_s']:>8} "
              f"{rec['peak_rss_mb']:>8} {'yes' if within else 'NO':>9} "
              f"{before:>14.2f} / {os.getloadavg()[0]:<13.2f}"
              + ("" if rec["ok"] else f"  {rec.get('error', [''])[-1][:120]}"), flush=True)
API = ["load", "online_variant", "online_day", "online_exp_variant", "position_ctr",
       "top_queries", "queries_over_time", "abtest", "abtest_cuped", "power"]


def run_child(name: str, data: Path, memory_limit: str, threads: int) -> dict:
    """Run one path in a child process; return its measurements."""
    env = dict(os.environ, ONLINEEVAL_MEMORY_LIMIT=memory_limit, PYTHONWARNINGS="ignore")
    if name in CLI:
        cmd = [sys.executable, "-m", "onlineeval",
               *(a.format(data=data) for a in CLI[name])]
    else:
        cmd = [sys.executable, __file__, "--child", name, "--data", str(data),
               "--memory-limit", memory_limit, "--threads", str(threads)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=ROOT)
    out, err = proc.communicate()
    # wait4 is no longer possible after communicate(); RUSAGE_CHILDREN keeps the maximum
    # over all waited-for children, so each path runs in a fresh parent (see main)
    import resource

    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    rec: dict = {"path": name, "ok": proc.returncode == 0, "wall_s": round(wall, 1),
                 "peak_rss_mb": round(peak)}
    if name in CLI:
        rec["stdout_lines"] = out.decode(errors="replace").count("\n")
    elif proc.returncode == 0:
        rec.update(json.loads(out.decode().strip().splitlines()[-1]))
    if proc.returncode != 0:
        rec["error"] = err.decode(errors="replace").strip().splitlines()[-3:]
    return rec


def make_interleaved(data: Path, out: Path, memory_limit: str) -> None:
    """Write ``data``'s log with results.team (A/B alternating by rank, the first team
    chosen by a hash of the search id) and a single experiment 'il'."""
    from onlineeval.db import connect

    out.mkdir(parents=True, exist_ok=True)
    con = connect(memory_limit=memory_limit)
    s = con.read_parquet(str(data / "searches.parquet"))
    s.project("* REPLACE ('il' AS experiment)").write_parquet(str(out / "searches.parquet"))
    r = con.read_parquet(str(data / "results.parquet"))
    r.project(
        "*, CASE WHEN (rank + hash(search_id)) % 2 = 0 THEN 'A' ELSE 'B' END AS team"
    ).write_parquet(str(out / "results.parquet"))
    con.read_parquet(str(data / "clicks.parquet")).write_parquet(str(out / "clicks.parquet"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE / "_data" / "online_10m")
    ap.add_argument("--memory-limit", default="1GB")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--paths", default=",".join(API + list(CLI)[:2]))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--make-interleaved", type=Path, default=None, metavar="DIR")
    ap.add_argument("--check", choices=sorted(CHECKS), default=None,
                    help="the memory check: every command on a generated log at the limit")
    ap.add_argument("--workdir", type=Path, default=HERE / "_data",
                    help="where --check writes its logs (default bench/_data)")
    args = ap.parse_args()
    if args.check:
        explicit = "--memory-limit" in sys.argv
        memory_check(args.check, args.workdir, args.memory_limit if explicit else None,
                     args.threads)
        return
    if args.child:
        print(json.dumps(_api(args.child, args.data, args.memory_limit, args.threads)))
        return
    if args.one:
        print(json.dumps(run_child(args.one, args.data, args.memory_limit, args.threads)))
        return
    if args.make_interleaved:
        make_interleaved(args.data, args.make_interleaved, args.memory_limit)
        return
    print(f"data={args.data} memory_limit={args.memory_limit} threads={args.threads}")
    print(f"{'path':24} {'ok':>3} {'wall s':>8} {'peak MB':>8}  detail")
    for name in args.paths.split(","):
        # a fresh parent per path, so RUSAGE_CHILDREN's maximum is this path's alone
        res = subprocess.run(
            [sys.executable, __file__, "--one", name, "--data", str(args.data),
             "--memory-limit", args.memory_limit, "--threads", str(args.threads)],
            capture_output=True, text=True, cwd=ROOT, check=False,
        )
        rec = json.loads(res.stdout.strip().splitlines()[-1])
        detail = {k: (round(v, 1) if isinstance(v, float) else v) for k, v in rec.items()
                  if k not in ("path", "ok", "wall_s", "peak_rss_mb")}
        print(f"{name:24} {'yes' if rec['ok'] else 'NO':>3} {rec['wall_s']:>8} "
              f"{rec['peak_rss_mb']:>8}  {json.dumps(detail)}", flush=True)


if __name__ == "__main__":
    main()
