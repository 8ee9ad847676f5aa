"""Offline evaluation speed: onlineeval against pytrec_eval-terrier and ranx, end to end.

Run by hand (never by the test suite)::

    flock /tmp/onlineeval-heavy.lock /work/venv/bin/python bench/offline_bench.py

For each size it generates (once, seeded, cached under ``bench/_data/``) a TREC qrels file and
a TREC run file with graded judgments, score ties and unjudged documents, then times every tool
in its own child process from reading the two files to having the per-query values of
``map, ndcg_cut_10, P_10, recall_100, recip_rank, ndcg``. Peak memory is the child's
``ru_maxrss`` (from ``os.wait4``). Values are compared per query with pytrec_eval (which runs
trec_eval's own code) and the script prints time and memory ratios against it.

Sizes: ``100k`` = 100,000 queries x 100 documents, ``10k`` = 10,000 queries x 1,000 documents
(10M run lines each); ``small`` (1,000 x 100) is for trying the script out.

``--profile`` instead times onlineeval's stages (read qrels, read run, join + rank, each
measure) and prints a cProfile listing, to see where the time goes.

``--shapes gov2 clueweb msmarco`` times collections shaped like real TREC ones instead
(:func:`generate_trec`: deep judgment pools, long docnos, grades -1..4, qids not ``q<N>``)
through every entry point — paths, DataFrames (``read_qrels``/``read_run`` then ``evaluate``),
pytrec_eval-style dicts — against pytrec_eval-terrier in the same run, contenders alternating,
and against the floor (a pyarrow read of both files). See :func:`bench_shapes`.
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "_data"

SIZES = {"100k": (100_000, 100), "10k": (10_000, 1_000), "small": (1_000, 100)}

# TREC-shaped collections: docno style, qid style, whether query depths vary (see
# generate_trec); the default size is the check: 20,000 queries x 200 retrieved, about
# 100 judged documents per query (35 of them retrieved)
SHAPES = {
    "gov2": ("gov2", "numeric", False),        # GX000-00-0000000, qids 701...
    "clueweb": ("clueweb", "turns", True),     # clueweb12-0000tw-00-00000, qids 31_1...; 15%
    #                                            of queries retrieve fewer than the depth
    "msmarco": ("msmarco", "msmarco", False),  # msmarco_doc_00_123456789, 7-digit qids
}
ENTRIES = ["paths", "frames", "dicts"]
MEASURES = ["map", "ndcg_cut_10", "P_10", "recall_100", "recip_rank", "ndcg"]
TOOLS = ["onlineeval", "pytrec_eval", "ranx-cold", "ranx-warm"]

# ranx metric names for MEASURES (ranx "ndcg" is Jarvelin's linear gain, as trec_eval)
RANX_NAMES = {
    "map": "map", "ndcg_cut_10": "ndcg@10", "P_10": "precision@10",
    "recall_100": "recall@100", "recip_rank": "mrr", "ndcg": "ndcg",
}
PYTREC_NAMES = {
    "map": "map", "ndcg_cut_10": "ndcg_cut.10", "P_10": "P.10",
    "recall_100": "recall.100", "recip_rank": "recip_rank", "ndcg": "ndcg",
}


# --------------------------------------------------------------------------- data generation

def generate(n_queries: int, n_docs: int, seed: int, qrels_path: Path, run_path: Path) -> None:
    """Write a synthetic qrels/run pair.

    Per query: ``n_docs`` retrieved documents with scores rounded to 1/50 (so many ties, which
    trec_eval breaks by docno); about 30% of retrieved documents judged with grades 0..3
    (mostly 0), the rest unjudged; 5 judged but unretrieved documents; 1% of queries have no
    relevant document at all (only grade 0).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    n = n_queries * n_docs
    qidx = np.repeat(np.arange(n_queries), n_docs)
    # distinct docnos within a query, in no relation to the score
    doc_num = np.tile(np.arange(n_docs) * 7, n_queries) + rng.integers(0, 7, size=n)
    qid = np.char.add("q", qidx.astype(str))
    docno = np.char.add("d", doc_num.astype(str))
    score = np.round(rng.random(n) * 50) / 50.0 + rng.integers(0, 3, size=n)
    # rank column is written as the file order (descending score, not tie-broken): tools must
    # not trust it
    order = np.lexsort((-score, qidx))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.tile(np.arange(1, n_docs + 1), n_queries)
    run = pa.table({
        "qid": qid, "q0": np.full(n, "Q0"), "docno": docno, "rank": rank,
        "score": np.round(score, 4), "tag": np.full(n, "bench"),
    })
    _write_space_separated(run, run_path, pacsv)

    judged = rng.random(n) < 0.30
    grade = rng.choice(np.array([0, 0, 0, 0, 1, 1, 2, 3]), size=n)
    no_rel_query = rng.random(n_queries) < 0.01
    grade[no_rel_query[qidx]] = 0
    extra_q = np.repeat(np.arange(n_queries), 5)
    extra_grade = rng.choice(np.array([0, 1, 2]), size=extra_q.size)
    extra_grade[no_rel_query[extra_q]] = 0
    q_all = np.concatenate([qid[judged], np.char.add("q", extra_q.astype(str))])
    d_all = np.concatenate([
        docno[judged], np.char.add("u", np.arange(extra_q.size).astype(str)),
    ])
    g_all = np.concatenate([grade[judged], extra_grade])
    qrels = pa.table({
        "qid": q_all, "iter": np.zeros(q_all.size, dtype=np.int64), "docno": d_all, "rel": g_all,
    })
    _write_space_separated(qrels, qrels_path, pacsv)


def _docnos(style: str, nums: np.ndarray) -> np.ndarray:
    """Docnos in the style of a real collection, from non-negative integers."""
    def z(values: np.ndarray, width: int) -> np.ndarray:
        return np.char.zfill(values.astype(str), width)

    if style == "clueweb":   # clueweb12-0000tw-00-00000 (25 bytes)
        seg, rest = nums // 10_000_000 % 10_000, nums % 10_000_000
        kind = np.where(seg % 3 == 0, "wb", "tw")
        out = np.char.add(np.char.add("clueweb12-", z(seg, 4)), kind)
        out = np.char.add(np.char.add(out, "-"), z(rest // 100_000, 2))
        return np.char.add(np.char.add(out, "-"), z(rest % 100_000, 5))
    if style == "gov2":      # GX000-00-0000000 (16 bytes)
        out = np.char.add(np.char.add("GX", z(nums // 10_000_000 % 1000, 3)), "-")
        rest = nums % 10_000_000
        out = np.char.add(np.char.add(out, z(rest // 100_000, 2)), "-")
        return np.char.add(out, z(rest % 100_000, 7))
    # MS MARCO v2 documents: msmarco_doc_<shard 00-59>_<byte offset> (16 to 26 bytes)
    out = np.char.add(np.char.add("msmarco_doc_", z(nums % 60, 2)), "_")
    return np.char.add(out, (nums // 60 % 5_000_000_000).astype(str))


def _qids(style: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if style == "numeric":   # TREC topic numbers (byte order differs from numeric order)
        return (np.arange(n) + 701).astype(str)
    if style == "turns":     # conversational topic_turn (TREC CAsT)
        i = np.arange(n)
        return np.char.add(np.char.add((i // 9 + 31).astype(str), "_"), (i % 9 + 1).astype(str))
    return np.sort(rng.choice(np.arange(1_000_000, 10_000_000), n, replace=False)).astype(str)


def generate_trec(shape: str, n_queries: int, depth: int, pool: int, seed: int,
                  qrels_path: Path, run_path: Path) -> None:
    """Write a qrels/run pair shaped like a real TREC collection.

    Run: ``depth`` documents per query (with ``ragged`` shapes, 15% of queries fewer), in
    score order with BM25-like scores to 4 decimals (some ties), ranks 1..n, queries in
    numeric qid order. Docnos are drawn from billions, so nearly all are distinct. Qrels: a
    pool of ``pool`` judged documents per query, about 35% of them retrieved (more often near
    the top), the rest not retrieved; grades -1..4 (-1 = in the pool, unjudged; mostly 0),
    sorted by qid then docno as NIST distributes them.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    docno_style, qid_style, ragged = SHAPES[shape]
    rng = np.random.default_rng(seed)
    qids = _qids(qid_style, n_queries, rng)
    lens = np.full(n_queries, depth, dtype=np.int64)
    if ragged:
        short = rng.random(n_queries) < 0.15
        lens[short] = rng.integers(1, depth, int(short.sum()))
    n = int(lens.sum())
    qi = np.repeat(np.arange(n_queries), lens)
    unretrieved = pool - pool * 35 // 100
    nums = rng.integers(0, 2**62, size=n + n_queries * unretrieved)
    docs = _docnos(docno_style, nums)
    run_docs, other_docs = docs[:n], docs[n:]
    starts = np.concatenate(([0], np.cumsum(lens)))[:-1]
    rank = np.arange(n) - np.repeat(starts, lens) + 1
    gaps = rng.exponential(0.05, n)
    drop = np.cumsum(gaps)
    drop -= np.repeat(drop[starts] - gaps[starts], lens)
    score = np.round(30.0 - drop + np.repeat(rng.normal(0, 2, n_queries), lens), 4)
    run = pa.table({"qid": qids[qi], "q0": np.full(n, "Q0"), "docno": run_docs, "rank": rank,
                    "score": score, "tag": np.full(n, "bm25")})
    # judged retrieved documents: about pool * 35% per query, weighted towards the top
    weight = 1.0 / np.sqrt(rank)
    want = np.minimum(pool * 35 // 100, lens)
    pick = rng.random(n) < weight * (want / np.bincount(qi, weights=weight))[qi]
    jq = np.concatenate([qi[pick], np.repeat(np.arange(n_queries), unretrieved)])
    jd = np.concatenate([run_docs[pick], other_docs])
    grade = rng.choice(np.arange(-1, 5), size=len(jq), p=[0.02, 0.60, 0.18, 0.10, 0.06, 0.04])
    order = np.lexsort((jd, jq))
    qrels = pa.table({"qid": qids[jq[order]], "iter": np.zeros(len(jq), dtype=np.int64),
                      "docno": jd[order], "rel": grade[order]})
    _write_space_separated(qrels, qrels_path, pacsv)
    _write_space_separated(run, run_path, pacsv)


def _write_space_separated(table, path: Path, pacsv) -> None:
    tmp = path.with_suffix(".tmp")
    opts = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(table, tmp, write_options=opts)
    tmp.replace(path)


def dataset(size: str) -> tuple[Path, Path]:
    n_queries, n_docs = SIZES[size]
    DATA.mkdir(parents=True, exist_ok=True)
    qrels = DATA / f"qrels_{size}.txt"
    run = DATA / f"run_{size}.txt"
    if not (qrels.exists() and run.exists()):
        t = time.perf_counter()
        generate(n_queries, n_docs, seed=20261122, qrels_path=qrels, run_path=run)
        print(f"[{size}] generated {run.name} and {qrels.name} in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
    return qrels, run


# --------------------------------------------------------------------------- workers
# Each worker reads both files, evaluates, and returns {measure: {qid: value}}. Only that part
# is timed; writing the values for the agreement check happens afterwards.

def work_onlineeval(qrels_path: str, run_path: str) -> dict[str, dict[str, float]]:
    from onlineeval.offline import evaluate

    # paths go straight to the engine's file loaders (pyarrow's CSV reader on clean files)
    df = evaluate(qrels_path, run_path, MEASURES, per_query=True)
    return {"__df__": df}  # converted after timing


def work_pytrec_eval(qrels_path: str, run_path: str) -> dict[str, dict[str, float]]:
    import pytrec_eval

    qrels, run = read_dicts(qrels_path, run_path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_NAMES.values()))
    return {"__pytrec__": evaluator.evaluate(run)}


def work_ranx(qrels_path: str, run_path: str) -> dict[str, dict[str, float]]:
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    evaluate(qrels, run, [RANX_NAMES[m] for m in MEASURES], save_results_in_run=True)
    return {"__ranx__": run}


def _to_values(result: dict) -> dict[str, dict[str, float]]:
    if "__df__" in result:
        df = result["__df__"]
        qids = df["qid"].astype(str).tolist()
        return {m: dict(zip(qids, df[m].astype(float).tolist(), strict=True)) for m in MEASURES}
    if "__pytrec__" in result:
        per_q = result["__pytrec__"]
        out: dict[str, dict[str, float]] = {m: {} for m in MEASURES}
        for q, vals in per_q.items():
            for m in MEASURES:
                out[m][q] = vals[PYTREC_NAMES[m].replace(".", "_")]
        return out
    run = result["__ranx__"]
    return {m: {q: float(v) for q, v in run.scores[RANX_NAMES[m]].items()} for m in MEASURES}


def worker(tool: str, qrels_path: str, run_path: str, out_path: str) -> None:
    fn = {"onlineeval": work_onlineeval, "pytrec_eval": work_pytrec_eval,
          "ranx": work_ranx}[tool]
    t = time.perf_counter()
    result = fn(qrels_path, run_path)
    elapsed = time.perf_counter() - t
    values = _to_values(result)
    # pickle, not JSON: writing 600,000 floats as JSON text took ~0.6 s of every child's time
    # (the same for every tool, but not part of any tool's work)
    with open(out_path, "wb") as f:
        pickle.dump({"seconds": elapsed, "values": values, "vm_peak_mb": _vm_peak_mb()}, f,
                    protocol=pickle.HIGHEST_PROTOCOL)


# --------------------------------------------------------------------------- driver

def run_child(tool: str, qrels: Path, run: Path, env_extra: dict[str, str]) -> dict:
    out = DATA / f"result_{tool}.pkl"
    out.unlink(missing_ok=True)
    worker_tool = "ranx" if tool.startswith("ranx") else tool
    env = {**os.environ, **env_extra}
    wall = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--worker", worker_tool,
         str(qrels), str(run), str(out)],
        env=env,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - wall
    if proc.returncode != 0:
        raise SystemExit(f"{tool} worker failed with exit code {proc.returncode}")
    with open(out, "rb") as f:
        res = pickle.load(f)  # written by our own child process just now
    out.unlink()
    # the child's own VmHWM: wait4's ru_maxrss also counts the parent's resident size at the
    # fork (Linux keeps the pre-exec peak), which overstated small children
    res["peak_mb"] = res["vm_peak_mb"]
    res["process_s"] = wall
    res["user_s"], res["sys_s"] = usage.ru_utime, usage.ru_stime
    return res


def differing_queries(ref: dict, other: dict, tol: float = 1e-9) -> int:
    """Queries on which any measure differs by more than ``tol`` (or that one tool lacks)."""
    bad: set[str] = set()
    for m in MEASURES:
        a, b = ref["values"][m], other["values"][m]
        bad |= set(a) ^ set(b)
        bad |= {q for q in set(a) & set(b) if abs(a[q] - b[q]) > tol}
    return len(bad)


def compare(ref: dict, other: dict) -> dict[str, float]:
    """Largest absolute per-query difference for each measure (inf if qid sets differ)."""
    diffs = {}
    for m in MEASURES:
        a, b = ref["values"][m], other["values"][m]
        if set(a) != set(b):
            diffs[m] = float("inf")
            continue
        keys = list(a)
        diffs[m] = float(np.max(np.abs(np.array([a[k] for k in keys])
                                       - np.array([b[k] for k in keys])), initial=0.0))
    return diffs


def bench(size: str, tools: list[str], repeat: int = 1) -> dict[str, dict]:
    """Time every tool ``repeat`` times, rounds interleaved (tool order within each round).

    Each tool's result is its median run (by process seconds), with ``runs_s`` listing all of
    them and ``peak_mb`` the largest peak; on a shared machine the median of a few rounds is
    steadier than one run, and interleaving gives every tool the same drifts of load.
    """
    qrels, run = dataset(size)
    cache = DATA / "numba_cache"
    runs: dict[str, list[dict]] = {tool: [] for tool in tools}
    for round_no in range(1, repeat + 1):
        for tool in tools:
            env: dict[str, str] = {}
            if tool == "ranx-cold":
                shutil.rmtree(cache, ignore_errors=True)
            if tool.startswith("ranx"):
                # a cache directory of our own: "cold" starts empty, "warm" reuses what cold
                # wrote
                env["NUMBA_CACHE_DIR"] = str(cache)
            tag = f" (round {round_no}/{repeat})" if repeat > 1 else ""
            print(f"[{size}] running {tool}{tag} ...", flush=True)
            res = run_child(tool, qrels, run, env)
            runs[tool].append(res)
            print(f"[{size}] {tool}: {res['seconds']:.2f} s in-process, "
                  f"{res['process_s']:.2f} s process ({res['user_s']:.1f} s "
                  f"user, {res['sys_s']:.1f} s system), "
                  f"{res['peak_mb']:.0f} MB peak", flush=True)
    results: dict[str, dict] = {}
    for tool, done in runs.items():
        ordered = sorted(done, key=lambda r: r["process_s"])
        median = dict(ordered[(len(ordered) - 1) // 2])   # the lower median: a real run
        median["runs_s"] = [r["process_s"] for r in done]
        median["peak_mb"] = max(r["peak_mb"] for r in done)
        median["all_values"] = [r["values"] for r in done]
        results[tool] = median
    return results


def report(size: str, results: dict[str, dict]) -> str:
    n_queries, n_docs = SIZES[size]
    base = results.get("pytrec_eval")
    lines = [f"\n=== {size}: {n_queries:,} queries x {n_docs:,} documents "
             f"({n_queries * n_docs:,} run lines) ==="]
    lines.append(f"{'tool':<12} {'seconds':>9} {'peak MB':>9} {'speed-up':>15} "
                 f"{'memory ratio':>14}  max |diff| vs pytrec_eval per measure")
    lines.append("  (seconds: child process wall time, start to exit; speed-up = pytrec_eval "
                 "seconds / tool seconds; memory ratio = tool peak / pytrec_eval peak)")
    for tool, res in results.items():
        if base is not None:
            speed = f"{base['process_s'] / res['process_s']:.2f}x"
            mem = f"{res['peak_mb'] / base['peak_mb']:.2f}x"
            diffs = compare(base, res)
            diff_txt = ", ".join(f"{m}={d:.1e}" for m, d in diffs.items())
        else:
            speed = mem = diff_txt = "-"
        lines.append(f"{tool:<12} {res['process_s']:>9.2f} {res['peak_mb']:>9.0f} "
                     f"{speed:>15} {mem:>14}  {diff_txt}")
    if any(len(res.get("runs_s", [])) > 1 for res in results.values()):
        lines.append("  (seconds = median of the rounds; peak = largest; every round:)")
        for tool, res in results.items():
            lines.append(f"  {tool:<12} " + ", ".join(f"{t:.2f}" for t in res["runs_s"]))
    if base is not None:
        n_q = len(base["values"][MEASURES[0]])
        for tool, res in results.items():
            if tool == "pytrec_eval":
                continue
            # every round's values are checked, not only the median one's
            n_bad = max(differing_queries(base, {"values": v})
                        for v in res.get("all_values", [res["values"]]))
            verdict = "values agree" if n_bad == 0 else "VALUES DIFFER"
            lines.append(f"  {tool}: {verdict} with pytrec_eval: equal on {n_q - n_bad:,} of "
                         f"{n_q:,} queries, different on {n_bad:,} (equal: |diff| <= 1e-9 on "
                         f"every measure, in every round)")
        if any(t.startswith("ranx") for t in results):
            lines.append("  (ranx orders tied scores differently from trec_eval, so it differs "
                         "on queries with ties in the top ranks)")
    return "\n".join(lines)


def stages(size: str, qrels: Path, run: Path) -> None:
    """Wall and CPU time of each stage of onlineeval's pipeline (uses engine internals)."""
    import resource

    from onlineeval.offline import reading
    from onlineeval.offline.hugepages import no_hugepage_advice
    from onlineeval.offline.measures.names import parse_measure
    from onlineeval.offline.ranking.layout import Options
    from onlineeval.offline.ranking.preparation import prepare_columns

    def now() -> tuple[float, float, float, int]:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return time.perf_counter(), r.ru_utime, r.ru_stime, r.ru_minflt

    marks = [("start", now())]
    with no_hugepage_advice():  # as evaluate() runs
        q = reading.load_qrels(str(qrels))
        marks.append(("read qrels file", now()))
        r = reading.load_run(str(run))
        marks.append(("read run file", now()))
        ranked = prepare_columns(q, r, Options())
        del r
        marks.append(("join + rank (prepare)", now()))
        for name in MEASURES:
            parse_measure(name).compute(ranked)
            marks.append((f"measure {name}", now()))
    print(f"\n=== stages {size} (seconds; page faults in thousands) ===")
    print(f"  {'stage':<26} {'wall':>7} {'user':>7} {'system':>7} {'faults':>7}")
    for (_, m0), (label, m1) in zip(marks, marks[1:], strict=False):
        print(f"  {label:<26} {m1[0] - m0[0]:7.2f} {m1[1] - m0[1]:7.2f} {m1[2] - m0[2]:7.2f} "
              f"{(m1[3] - m0[3]) // 1000:7d}")
    m0, m1 = marks[0][1], marks[-1][1]
    print(f"  {'total':<26} {m1[0] - m0[0]:7.2f} {m1[1] - m0[1]:7.2f} {m1[2] - m0[2]:7.2f} "
          f"{(m1[3] - m0[3]) // 1000:7d}")


def profile(size: str) -> None:
    """Where onlineeval's time goes on one size: cumulative time of the heaviest calls."""
    import cProfile
    import pstats

    qrels, run = dataset(size)
    stages(size, qrels, run)
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    work_onlineeval(str(qrels), str(run))
    prof.disable()
    print(f"\n=== profile {size}: {time.perf_counter() - t:.2f} s under cProfile ===")
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats(r"onlineeval|duckdb|pyarrow|numpy|\{", 35)


# --------------------------------------------------------------------------- TREC-shaped runs

def trec_dataset(shape: str, n_queries: int, depth: int = 200,
                 pool: int = 100) -> tuple[Path, Path]:
    DATA.mkdir(parents=True, exist_ok=True)
    stem = f"trec_{shape}_{n_queries}x{depth}p{pool}"
    qrels, run = DATA / f"{stem}.qrels", DATA / f"{stem}.run"
    if not (qrels.exists() and run.exists()):
        t = time.perf_counter()
        generate_trec(shape, n_queries, depth, pool, seed=20261127, qrels_path=qrels,
                      run_path=run)
        print(f"[{shape}] generated {run.name} and {qrels.name} in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
    return qrels, run


def read_dicts(qrels_path: str, run_path: str) -> tuple[dict, dict]:
    """The pytrec_eval-style dicts of two TREC files, by the usual Python loop."""
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as f:
        for line in f:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    run: dict[str, dict[str, float]] = {}
    with open(run_path) as f:
        for line in f:
            q, _, d, _, sc, _ = line.split()
            run.setdefault(q, {})[d] = float(sc)
    return qrels, run


def _vm_peak_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def shape_worker(tool: str, entry: str, qrels_path: str, run_path: str, out_path: str) -> None:
    """One contender on one entry point; writes seconds, peak and per-query values."""
    extra: dict[str, float] = {}
    if entry == "dicts":
        # the objects exist before the clock starts (as in a user's session); the peak is
        # reset after building them (Linux clear_refs), so it is the evaluation's peak with
        # the dicts in memory, the same for both tools
        import pandas  # noqa: F401  (imported in a user's session already)
        import pytrec_eval  # noqa: F401

        import onlineeval.offline  # noqa: F401

        qrels, run = read_dicts(qrels_path, run_path)
        extra["inputs_mb"] = _vm_peak_mb()
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    cpu0 = _cpu_s()
    t = time.perf_counter()
    if tool == "floor" and entry == "dicts":
        # the least any evaluator of dicts does: walk both once into flat arrays (the keys
        # of every inner dict into one list, the values into float64; np.fromiter with the
        # count known is the fastest walk of the values we found, 2x array("d"))
        from itertools import chain

        for d in (qrels, run):
            inner = list(d.values())
            docnos = list(chain.from_iterable(inner))
            values = np.fromiter(chain.from_iterable(x.values() for x in inner),
                                 dtype=np.float64, count=len(docnos))
            assert len(docnos) == len(values)
        result = {"__floor__": True}
    elif tool == "floor":
        import pyarrow as pa
        import pyarrow.csv as pcsv

        def read(path: str, names: list[str], value: str, kind: object) -> object:
            return pcsv.read_csv(
                path, read_options=pcsv.ReadOptions(column_names=names, block_size=8 << 20),
                parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False,
                                                escape_char=False),
                convert_options=pcsv.ConvertOptions(
                    column_types={"qid": pa.string(), "docno": pa.string(), value: kind},
                    include_columns=["qid", "docno", value]))

        read(qrels_path, ["qid", "iter", "docno", "rel"], "rel", pa.int64())
        read(run_path, ["qid", "iter", "docno", "rank", "score", "tag"], "score", pa.float64())
        result: dict = {"__floor__": True}
    elif tool == "onlineeval":
        from onlineeval.offline import evaluate, read_qrels, read_run

        if entry == "paths":
            df = evaluate(qrels_path, run_path, MEASURES, per_query=True)
        elif entry == "frames":
            df = evaluate(read_qrels(qrels_path), read_run(run_path), MEASURES, per_query=True)
        else:
            df = evaluate(qrels, run, MEASURES, per_query=True)
        result = {"__df__": df}
    else:
        import pytrec_eval

        if entry != "dicts":
            qrels, run = read_dicts(qrels_path, run_path)
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_NAMES.values()))
        result = {"__pytrec__": evaluator.evaluate(run)}
    elapsed = time.perf_counter() - t
    extra["call_cpu_s"] = _cpu_s() - cpu0
    values = {} if tool == "floor" else _to_values(result)
    with open(out_path, "wb") as f:
        pickle.dump({"seconds": elapsed, "values": values, "vm_peak_mb": _vm_peak_mb(), **extra},
                    f, protocol=pickle.HIGHEST_PROTOCOL)


def _cpu_s() -> float:
    """User + system seconds of this process so far, all threads."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_shape_child(tool: str, entry: str, qrels: Path, run: Path) -> dict:
    out = DATA / f"result_{tool}_{entry}.pkl"
    out.unlink(missing_ok=True)
    wall = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--shape-worker",
                             tool, entry, str(qrels), str(run), str(out)])
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - wall
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{tool} ({entry}) worker failed")
    with open(out, "rb") as f:
        res = pickle.load(f)  # written by our own child process just now
    out.unlink()
    res["process_s"] = wall
    # CPU: the whole child's for paths and frames, the evaluation call's for dicts
    res["cpu_s"] = res["call_cpu_s"] if entry == "dicts" else usage.ru_utime + usage.ru_stime
    # paths and frames: the whole child (start to exit) and its peak; dicts: the evaluation
    # call (inputs built before) and the peak while it ran, the dicts included
    res["time_s"] = res["seconds"] if entry == "dicts" else wall
    res["peak_mb"] = res["vm_peak_mb"]     # the child's VmHWM (reset after building dicts)
    return res


def bench_shapes(shapes: list[str], n_queries: int, entries: list[str], repeat: int) -> str:
    """Every entry point of onlineeval against pytrec_eval, alternating, on each shape.

    Rounds: pytrec_eval, then onlineeval on each entry point (the order of the pair alternates
    from round to round), then the floor. Each contender's figure is its median round; its
    values are compared with pytrec_eval's on every query, in every round. pytrec_eval's
    DataFrame path is its file path: the issue's DataFrame path starts from the files too.
    """
    lines = []
    for shape in shapes:
        qrels, run = trec_dataset(shape, n_queries)
        load_before = os.getloadavg()
        runs: dict[tuple[str, str], list[dict]] = {}
        for round_no in range(repeat):
            plan = [("floor", "paths")] + ([("floor", "dicts")] if "dicts" in entries else [])
            for entry in entries:
                pair = [("pytrec_eval", "dicts" if entry == "dicts" else "paths"),
                        ("onlineeval", entry)]
                plan += pair if round_no % 2 == 0 else pair[::-1]
            for tool, entry in dict.fromkeys(plan):
                res = run_shape_child(tool, entry, qrels, run)
                runs.setdefault((tool, entry), []).append(res)
                print(f"[{shape} round {round_no + 1}/{repeat}] {tool:<11} {entry:<6} "
                      f"{res['time_s']:6.2f} s  {res['peak_mb']:6.0f} MB peak  "
                      f"(cpu {res['cpu_s']:.2f} s)", flush=True)
        load_after = os.getloadavg()
        lines.append(_shape_report(shape, qrels, run, runs, entries, load_before, load_after))
        print(lines[-1], flush=True)
    return "\n".join(lines)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def _shape_report(shape: str, qrels: Path, run: Path, runs: dict, entries: list[str],
                  load_before: tuple, load_after: tuple) -> str:
    n_run = sum(1 for _ in open(run, "rb"))
    n_qrels = sum(1 for _ in open(qrels, "rb"))
    med = {key: _median([r["time_s"] for r in rs]) for key, rs in runs.items()}
    peak = {key: max(r["peak_mb"] for r in rs) for key, rs in runs.items()}
    out = [f"\n=== {shape}: {n_run:,} run lines, {n_qrels:,} judgments "
           f"({run.stat().st_size / 1e6:.0f} + {qrels.stat().st_size / 1e6:.0f} MB); load "
           f"average {load_before[0]:.1f} before, {load_after[0]:.1f} after (2 cores) ==="]
    out.append(f"{'entry':<7} {'onlineeval s':>12} {'pytrec_eval s':>13} {'speed-up':>9} "
               f"{'CPU x':>8} {'peak MB':>8} {'pytrec MB':>9} {'mem ratio':>9}  agreement with pytrec_eval")
    for entry in entries:
        ours = ("onlineeval", entry)
        theirs = ("pytrec_eval", "dicts" if entry == "dicts" else "paths")
        if ours not in med or theirs not in med:
            continue
        ref = runs[theirs][0]
        n_q = len(ref["values"][MEASURES[0]])
        n_bad = max(differing_queries(ref, r) for r in runs[ours])
        agree = (f"equal on all {n_q:,} queries" if n_bad == 0
                 else f"DIFFERENT on {n_bad:,} of {n_q:,} queries")
        cpu_ratio = _median([r["cpu_s"] for r in runs[theirs]]) / \
            _median([r["cpu_s"] for r in runs[ours]])
        out.append(f"{entry:<7} {med[ours]:>12.2f} {med[theirs]:>13.2f} "
                   f"{med[theirs] / med[ours]:>8.2f}x {cpu_ratio:>7.2f}x {peak[ours]:>8.0f} "
                   f"{peak[theirs]:>9.0f} {peak[ours] / peak[theirs]:>8.2f}x  {agree}")
    if ("onlineeval", "paths") in med:
        paths = med[("onlineeval", "paths")]
        floor = med.get(("floor", "paths"))
        if ("onlineeval", "frames") in med:
            out.append(f"  DataFrame path / path path: "
                       f"{med[('onlineeval', 'frames')] / paths:.2f}x")
        if floor:
            out.append(f"  floor (pyarrow read of both files, 3 columns each, child process "
                       f"start to exit): {floor:.2f} s; onlineeval paths = "
                       f"{paths / floor:.2f}x the floor")
    dict_floor = med.get(("floor", "dicts"))
    if dict_floor and ("onlineeval", "dicts") in med:
        out.append(f"  dicts floor (walking both dicts once into flat arrays): {dict_floor:.2f} s; "
                   f"onlineeval dicts = {med[('onlineeval', 'dicts')] / dict_floor:.2f}x, "
                   f"pytrec_eval dicts = {med[('pytrec_eval', 'dicts')] / dict_floor:.2f}x the "
                   f"floor")
    cpu = {key: _median([r["cpu_s"] for r in rs]) for key, rs in runs.items()}
    out.append("  CPU s (user + system, median; paths/frames: the whole child; dicts: the "
               "evaluation call, its threads included): "
               + ", ".join(f"{k[0]} {k[1]} {v:.2f}" for k, v in cpu.items()))
    out.append("  (seconds: median of the rounds; paths/frames = child process start to exit, "
               "dicts = the evaluation call with the dicts built; peak = largest of the rounds)")
    for key, rs in runs.items():
        out.append(f"  {key[0]:<11} {key[1]:<6} rounds: "
                   + ", ".join(f"{r['time_s']:.2f} (cpu {r['cpu_s']:.2f})" for r in rs))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=4, metavar=("TOOL", "QRELS", "RUN", "OUT"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--shape-worker", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--shapes", nargs="+", choices=list(SHAPES),
                        help="time TREC-shaped collections through every entry point instead")
    parser.add_argument("--queries", type=int, default=20_000,
                        help="queries per TREC-shaped collection (200 retrieved each)")
    parser.add_argument("--entries", nargs="+", default=ENTRIES, choices=ENTRIES)
    parser.add_argument("--sizes", nargs="+", default=["100k", "10k"], choices=list(SIZES))
    parser.add_argument("--tools", nargs="+", default=TOOLS, choices=TOOLS)
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="time every tool N times, rounds interleaved; report medians")
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--profile", action="store_true",
                        help="profile onlineeval (cProfile, in this process) instead of timing")
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    if args.shape_worker:
        shape_worker(*args.shape_worker)
        return 0
    if args.shapes:
        if args.generate_only:
            for shape in args.shapes:
                trec_dataset(shape, args.queries)
            return 0
        print(bench_shapes(args.shapes, args.queries, args.entries, max(args.repeat, 1)))
        return 0
    if args.profile:
        for size in args.sizes:
            profile(size)
        return 0
    if args.generate_only:
        for size in args.sizes:
            dataset(size)
        return 0
    tools = list(args.tools)
    if "pytrec_eval" in tools:  # the baseline first, so ratios can be printed as we go
        tools.remove("pytrec_eval")
        tools.insert(0, "pytrec_eval")
    texts = []
    for size in args.sizes:
        texts.append(report(size, bench(size, tools, max(args.repeat, 1))))
        print(texts[-1], flush=True)
    print("\n".join(texts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
