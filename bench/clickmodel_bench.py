"""Click models: quality on the real Yandex WSCD sample, and fitting speed.

    python bench/clickmodel_bench.py yandex [--reference DIR]
    python bench/clickmodel_bench.py speed [--searches 10000000]

``yandex`` converts ``trainSample`` and ``testSample`` of the Yandex WSCD 2014 sample (as in
PyClick's example; default ``/work/shared/reference/yandex_wscd``), fits every model on the
first and prints log-likelihood and perplexity on the second: on all test pages, and on the
test pages whose query occurs in training (PyClick's example keeps only those).

``speed`` simulates a log of N searches (a DBN user on top-10 lists of 1,000 queries x 20
documents, each query served by one of 4 fixed rankings, written as Parquet in a temp
directory), then times our PBM and DBN
fits (SQL pass + EM) against a pure-Python EM written the textbook way (a loop over every
search and rank per iteration, the way PyClick-style code trains), run on a sample of the
searches and scaled per search and iteration.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

import onlineeval
from onlineeval.clickmodels import ORDER, fit_patterns, read_patterns

REFERENCE = Path("/work/shared/reference/yandex_wscd")


def yandex(reference: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {}
        for part in ("trainSample", "testSample"):
            dirs[part] = Path(tmp) / part
            onlineeval.convert(reference / part, dirs[part], "yandex-wscd")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            train_logs = onlineeval.load_logs(dirs["trainSample"])
            train = read_patterns(train_logs)
            test_logs = onlineeval.load_logs(dirs["testSample"])
            test = read_patterns(test_logs)
        known = set(train.pairs["query"])
        keep = np.array([test.pairs["query"].iloc[row[0]] in known for row in test.pair])
        test_known = _subset(test, keep)
        print(f"train: {train.pages} pages ({train.n_patterns} patterns); test: {test.pages} "
              f"pages, {test_known.pages} of them with a query seen in training")
        rows = []
        for model in ORDER:
            t0 = time.perf_counter()
            f = fit_patterns(train, model)
            secs = time.perf_counter() - t0
            a, b = f.evaluate(test), f.evaluate(test_known)
            rows.append({"model": model, "fit_s": round(secs, 2),
                         "iterations": f.trace.iterations, "converged": f.trace.converged,
                         "train_ll_per_page": f.log_likelihood / f.pages,
                         "test_ll_per_page": a.log_likelihood_per_page,
                         "perplexity": a.perplexity,
                         "ll_per_page_known": b.log_likelihood_per_page,
                         "perplexity_known": b.perplexity,
                         "impossible_test_pages": a.impossible_pages})
            per_rank = b.perplexity_by_rank["perplexity"].round(4).tolist()
            print(f"  {model}: perplexity by rank (known queries) {per_rank}", file=sys.stderr)
        print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4f}"))


def _subset(pat, keep):
    from onlineeval.clickmodels.patterns import Patterns

    return Patterns(pat.pair[keep], pat.rank[keep], pat.click[keep], pat.mask[keep],
                    pat.weight[keep], pat.pairs, pat.counts)


def simulate_log(outdir: Path, n: int, seed: int = 0) -> None:
    """N searches of a DBN user on random top-10 lists, written through DuckDB."""
    rng = np.random.default_rng(seed)
    n_q, n_d, k = 1000, 20, 10
    alpha = rng.uniform(0.05, 0.9, (n_q, n_d))
    sigma = rng.uniform(0.1, 0.9, (n_q, n_d))
    rankings = np.argsort(rng.random((n_q, 4, n_d)), axis=2)[:, :, :k]
    con = duckdb.connect()
    chunk = 1_000_000
    for part, start in enumerate(range(0, n, chunk)):
        m = min(chunk, n - start)
        q = rng.integers(n_q, size=m)
        docs = rankings[q, rng.integers(4, size=m)]
        a = alpha[q[:, None], docs]
        s = sigma[q[:, None], docs]
        u = rng.random((3, m, k))
        clicked = np.zeros((m, k), dtype=bool)
        active = np.ones(m, dtype=bool)
        for r in range(k):
            c = active & (u[0, :, r] < a[:, r])
            clicked[:, r] = c
            active &= ~(c & (u[1, :, r] < s[:, r])) & (u[2, :, r] < 0.8)
        sid = np.arange(start, start + m, dtype=np.int64)
        tables = {
            "searches": pd.DataFrame({"search_id": sid, "user_id": sid, "query": q}),
            "results": pd.DataFrame({"search_id": np.repeat(sid, k),
                                     "rank": np.tile(np.arange(1, k + 1, dtype=np.int32), m),
                                     "doc_id": (q[:, None] * n_d + docs).ravel()}),
        }
        rr, cc = np.nonzero(clicked)
        tables["clicks"] = pd.DataFrame({"search_id": sid[rr], "rank": (cc + 1).astype(np.int32)})
        for name, df in tables.items():
            (outdir / name).mkdir(exist_ok=True)
            con.register("df", df)
            con.execute(f"COPY df TO '{outdir / name / f'part{part:03d}.parquet'}' "
                        "(FORMAT parquet)")
            con.unregister("df")


def python_em(pages: list[tuple[int, list[int], list[int]]], model: str, iterations: int
              ) -> None:
    """Textbook EM over every search and rank (PBM, or DBN with forward-backward)."""
    alpha: dict = {}
    sigma: dict = {}
    gamma = [0.5] * 11
    g = 0.9
    for _ in range(iterations):
        num_a: dict = {}
        den_a: dict = {}
        num_s: dict = {}
        den_s: dict = {}
        num_g = [0.0] * 11
        den_g = [0.0] * 11
        g_num = g_den = 0.0
        for q, docs, clicks in pages:
            if model == "pbm":
                for r, (d, c) in enumerate(zip(docs, clicks, strict=True)):
                    a = alpha.get((q, d), 0.5)
                    e = gamma[r + 1]
                    pa = 1.0 if c else a * (1 - e) / (1 - a * e)
                    pe = 1.0 if c else e * (1 - a) / (1 - a * e)
                    num_a[q, d] = num_a.get((q, d), 0.0) + pa
                    den_a[q, d] = den_a.get((q, d), 0.0) + 1
                    num_g[r + 1] += pe
                    den_g[r + 1] += 1
            else:
                n = len(docs)
                a_ = [alpha.get((q, d), 0.5) for d in docs]
                s_ = [sigma.get((q, d), 0.5) for d in docs]
                last = max((r for r in range(n) if clicks[r]), default=-1)
                z = [1.0] * (n + 1)
                for r in range(n - 1, -1, -1):
                    z[r] = (1 - a_[r]) * ((1 - g) + g * z[r + 1])
                if last >= 0 and last + 1 < n:
                    tail = s_[last] + (1 - s_[last]) * ((1 - g) + g * z[last + 1])
                    ps = s_[last] / tail
                    e = (1 - s_[last]) * g * z[last + 1] / tail
                else:
                    ps, e = None, (1.0 if last < 0 else 0.0)
                for r in range(n):
                    key = (q, docs[r])
                    if r <= last:
                        pa = float(clicks[r])
                    else:
                        pa = a_[r] * (1 - e)
                        if r + 1 < n:
                            nxt = e * g * z[r + 1] / ((1 - g) + g * z[r + 1])
                            g_num += nxt
                            g_den += e
                            e = nxt
                    num_a[key] = num_a.get(key, 0.0) + pa
                    den_a[key] = den_a.get(key, 0.0) + 1
                    if clicks[r] and (r < last or ps is not None):
                        num_s[key] = num_s.get(key, 0.0) + (ps if r == last else 0.0)
                        den_s[key] = den_s.get(key, 0.0) + 1
                    if r < last:
                        g_num += 1
                        g_den += 1
        alpha = {k: (num_a[k] + 1) / (den_a[k] + 2) for k in num_a}
        sigma = {k: (num_s[k] + 1) / (den_s[k] + 2) for k in num_s}
        gamma = [(num_g[r] + 1) / (den_g[r] + 2) for r in range(11)]
        g = g_num / g_den if g_den else g


def speed(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        simulate_log(Path(tmp), n)
        print(f"simulated {n:,} searches in {time.perf_counter() - t0:.0f} s")
        logs = onlineeval.load_logs(tmp)
        t0 = time.perf_counter()
        pat = read_patterns(logs)
        t_sql = time.perf_counter() - t0
        print(f"SQL pass: {t_sql:.1f} s -> {pat.n_patterns:,} patterns for {pat.pages:,} pages")
        for model in ("pbm", "dbn"):
            t0 = time.perf_counter()
            fit_patterns(pat, model, max_iter=50, tol=0.0)
            t_em = time.perf_counter() - t0
            print(f"{model}: 50 EM iterations in {t_em:.1f} s "
                  f"({t_em / 50 * 1000:.0f} ms per iteration); total with SQL "
                  f"{t_sql + t_em:.1f} s")
        sample = logs.con.execute(
            "SELECT s.query, list(r.doc_id ORDER BY r.rank), "
            "list(CASE WHEN c.rank IS NULL THEN 0 ELSE 1 END ORDER BY r.rank) "
            "FROM searches s JOIN results r USING (search_id) "
            "LEFT JOIN (SELECT DISTINCT search_id, rank FROM clicks) c "
            "ON c.search_id = r.search_id AND c.rank = r.rank "
            "WHERE s.search_id < 100000 GROUP BY s.search_id, s.query").fetchall()
        for model in ("pbm", "dbn"):
            t0 = time.perf_counter()
            python_em(sample, model, 2)
            per = (time.perf_counter() - t0) / 2 / len(sample)
            print(f"pure-Python {model} EM: {per * 1e6:.1f} us per search per iteration -> "
                  f"{per * n:.0f} s per iteration on {n:,} searches, "
                  f"{per * n * 50 / 3600:.1f} h for 50")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    y = sub.add_parser("yandex")
    y.add_argument("--reference", type=Path, default=REFERENCE)
    s = sub.add_parser("speed")
    s.add_argument("--searches", type=int, default=10_000_000)
    args = ap.parse_args()
    if args.what == "yandex":
        yandex(args.reference)
    else:
        speed(args.searches)


if __name__ == "__main__":
    main()
