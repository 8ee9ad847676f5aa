"""Sensitivity: impressions for 80% power, team-draft interleaving vs an A/B test on CTR.

For ranker pairs of the sample study (sample_logs/manifest.json: collection and rankers) and
two click-traffic settings, this finds by repeated simulation the smallest number of
impressions (result pages shown) at which a two-sided test at alpha = 0.05 detects the
offline-better ranker (higher NDCG@10) in 80% of experiments.

Traffic settings (onlineeval.simulate.calibrated):
- ``default``: the simulator's defaults (the study's click model, user propensity
  Normal(0, propensity_sd)), i.e. the sample logs' users;
- ``heterogeneous``: HETEROGENEOUS, the default click model with a random propensity per
  topic, shift and spread fitted to the Yandex WSCD 2014 sample's no-click share and
  between-query spread of CTR (heterogeneity alone);
- ``calibrated``: CALIBRATED, fitted to the same sample's rank-CTR curve, no-click share and
  between-query spread: a random click propensity per topic and per user on a flatter, less
  satisfying click model.
Settings with a topic effect run on --worlds draws of which topic gets which effect. The user
propensity sd is not identified by the sample: --user-sd sets it for every setting and refits
the two fitted ones with it held fixed.

Both tests randomise users, as a real experiment does. Users see 1 + Poisson(m - 1) pages
each (m = --pages-per-user, default 3.5: about the sample A/B logs' searches per user), one
propensity per user, each page's topic drawn by popularity.
- A/B on CTR: users split equally between the two rankers' own lists; CTR = pages with a click
  / pages, users as the unit (delta method: onlineeval.stats.moments.ratio +
  onlineeval.stats.tests.compare, as the A/B readout); it must reject in the right direction.
- Interleaving: every page shows the team-draft list of the pair; the readout's sign test
  (scipy.stats.binomtest via onlineeval.interleaving.significance.sign_test) on the pages'
  wins_A vs wins_B must reject in the right direction.
Impressions = users x m for both (the same pages-per-user law on both sides).

How: per setting, a pool of --pool-users simulated users is made per ranker (A/B) and per
pair (interleaving), storing per user (clicked pages, pages) or (wins A, wins B); each
experiment draws its users from the pool with replacement (--reps experiments per power
estimate). The search doubles from a start value, then bisects on log N to a 2% bracket. When
the N found is more than a fifth of the pool, the pool is regenerated 10 x N users large and
the search repeated (a pool must be much larger than an experiment for its own sampling
error not to bias the power).

Run (heavy: take the lock):
    flock /tmp/onlineeval-heavy.lock /work/venv/bin/python bench/sensitivity.py \\
        --json bench/_out/sensitivity.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onlineeval.interleaving.significance import sign_test  # noqa: E402
from onlineeval.progress import Progress  # noqa: E402
from onlineeval.simulate import ndcg_at_k  # noqa: E402
from onlineeval.simulate.calibrated import (  # noqa: E402
    CALIBRATED,
    FIT_MOMENTS,
    FIT_PARAMETERS,
    HETEROGENEOUS,
    YANDEX_WSCD,
    CalibratedTraffic,
    PageLists,
    expected_moments,
    fit,
    simulate_pages,
    study_world,
    wscd_moments,
)
from onlineeval.simulate.interleaving import _click_model  # noqa: E402
from onlineeval.stats.moments import Moments, ratio  # noqa: E402
from onlineeval.stats.tests import compare  # noqa: E402

ALPHA, POWER = 0.05, 0.80
FIT_RANKER = "s100"  # the ranker the calibrated settings were fitted on
_CHUNK_USERS = 100_000


def page_users(n_users: int, pages_mean: float, rng: np.random.Generator) -> np.ndarray:
    """User code of each page: user u has 1 + Poisson(pages_mean - 1) pages."""
    pages = 1 + rng.poisson(pages_mean - 1.0, n_users)
    return np.repeat(np.arange(n_users), pages)


def user_pool(lists: PageLists, popularity: np.ndarray, topic_effect: np.ndarray,
              traffic: CalibratedTraffic, n_users: int, pages_mean: float, interleaved: bool,
              rng: np.random.Generator) -> np.ndarray:
    """Per simulated user: (clicked pages, pages) for a ranker, (wins A, wins B) for a pair.
    Simulated in blocks of users (each block draws its own users' propensities)."""
    out = np.zeros((n_users, 2))
    for lo in range(0, n_users, _CHUNK_USERS):
        m = min(_CHUNK_USERS, n_users - lo)
        users = page_users(m, pages_mean, rng)
        sim = simulate_pages(lists, popularity, topic_effect, users, traffic, rng)
        if interleaved:
            ca, cb = sim["credit_a"], sim["credit_b"]
            out[lo:lo + m, 0] = np.bincount(users, ca > cb, m)
            out[lo:lo + m, 1] = np.bincount(users, cb > ca, m)
        else:
            out[lo:lo + m, 0] = np.bincount(users, sim["clicks"] > 0, m)
            out[lo:lo + m, 1] = np.bincount(users, None, m)
    return out


def power_interleaving(n: int, wins: np.ndarray, better_is_b: bool, reps: int,
                       rng: np.random.Generator) -> float:
    """Power of the sign test with ``n`` users drawn from a pool (rows: wins_a, wins_b)."""
    hits = 0
    step = max(1, 4_000_000 // n)
    for start in range(0, reps, step):
        c = min(reps - start, step)
        idx = rng.integers(0, wins.shape[0], (c, n))
        wa, wb = wins[idx, 0].sum(1), wins[idx, 1].sum(1)
        hits += sum(sign_test(x, y) < ALPHA and (y > x) == better_is_b
                    for x, y in zip(wa, wb, strict=True))
    return hits / reps


def power_ab(n: int, pool_a: np.ndarray, pool_b: np.ndarray, better_is_b: bool, reps: int,
             rng: np.random.Generator) -> float:
    """Power of the user-level CTR comparison (delta method) with ``n`` users per arm drawn
    from each arm's pool (rows: clicked pages, pages)."""
    hits = 0
    step = max(1, 2_000_000 // n)
    for start in range(0, reps, step):
        c = min(reps - start, step)
        est = [ratio(Moments.from_units(pool[rng.integers(0, pool.shape[0], (c, n))]), 0, 1)
               for pool in (pool_a, pool_b)]
        res = compare(est[0], est[1], alpha=ALPHA)
        right = (res.abs_diff > 0) if better_is_b else (res.abs_diff < 0)
        hits += int(np.sum((res.p_value < ALPHA) & right))
    return hits / reps


def aa_rejections(n_il: int, n_ab: int, lists_same: PageLists, pair_same: PageLists,
                  popularity: np.ndarray, topic_effect: np.ndarray, traffic: CalibratedTraffic,
                  args: argparse.Namespace, rng: np.random.Generator) -> dict[str, float]:
    """A/A: the share of experiments where each test rejects (either direction) when both
    sides are the same ranker, at the sizes found for a pair; should be about alpha."""
    pool = max(args.pool_users, 10 * max(n_il, n_ab))
    wins = user_pool(pair_same, popularity, topic_effect, traffic, pool, args.pages_per_user,
                     True, rng)
    arm = [user_pool(lists_same, popularity, topic_effect, traffic, pool, args.pages_per_user,
                     False, rng) for _ in range(2)]
    reps = args.aa_reps
    idx = rng.integers(0, pool, (reps, n_il))
    wa, wb = wins[idx, 0].sum(1), wins[idx, 1].sum(1)
    il = float(np.mean([sign_test(x, y) < ALPHA for x, y in zip(wa, wb, strict=True)]))
    hits = 0
    step = max(1, 2_000_000 // n_ab)
    for start in range(0, reps, step):
        c = min(reps - start, step)
        est = [ratio(Moments.from_units(p[rng.integers(0, pool, (c, n_ab))]), 0, 1)
               for p in arm]
        hits += int(np.sum(compare(est[0], est[1], alpha=ALPHA).p_value < ALPHA))
    return {"aa_interleaving": il, "aa_ab": hits / reps, "aa_reps": reps}


def units_for_power(power_at, start: int, label: str, steps: int = 16,
                    limit: int = 10**7) -> tuple[int | None, float]:
    """Smallest N (to ~2%) with power >= 0.8: halving or doubling from ``start`` to bracket
    it, then bisection on log N. Returns N and the power estimated there during the search;
    (None, power) when even ``limit`` falls short."""
    seen: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in seen:
            seen[n] = power_at(n)
            bar.update()
        return seen[n]

    lo, hi = start, start
    with Progress(label) as bar:
        if at(start) >= POWER:
            while lo > 2 and at(lo // 2) >= POWER:
                lo //= 2
            hi, lo = lo, lo // 2
        else:
            while at(hi) < POWER:
                lo, hi = hi, hi * 2
                if hi > limit:
                    return None, at(limit)
        for _ in range(steps):
            if hi - lo <= 1 or hi / max(lo, 1) < 1.02:
                break
            mid = int(round(math.sqrt(max(lo, 1) * hi)))
            if at(mid) >= POWER:
                hi = mid
            else:
                lo = mid
    return hi, at(hi)


def run_pair(setting: str, traffic: CalibratedTraffic, topic_effect: np.ndarray,
             collection, runs, a: str, b: str, args, rng: np.random.Generator) -> dict:
    t0 = time.perf_counter()
    ndcg_a, ndcg_b = ndcg_at_k(collection, runs[a]), ndcg_at_k(collection, runs[b])
    better_is_b = ndcg_b > ndcg_a
    pop = collection.popularity
    pair_lists = PageLists.team_draft(collection, runs[a], runs[b])
    arm_lists = [PageLists.ranker(collection, runs[r]) for r in (a, b)]
    m = args.pages_per_user

    def search(kind: str, pool_users: int) -> tuple[int | None, float, dict]:
        if kind == "interleaving":
            wins = user_pool(pair_lists, pop, topic_effect, traffic, pool_users, m, True, rng)
            n, pw = units_for_power(
                partial(power_interleaving, wins=wins, better_is_b=better_is_b,
                        reps=args.reps, rng=rng), 50, f"{setting} {a}:{b} interleaving")
            info = {"wins_a_per_user": wins[:, 0].mean(), "wins_b_per_user": wins[:, 1].mean()}
        else:
            pools = [user_pool(lst, pop, topic_effect, traffic, pool_users, m, False, rng)
                     for lst in arm_lists]
            n, pw = units_for_power(
                partial(power_ab, pool_a=pools[0], pool_b=pools[1], better_is_b=better_is_b,
                        reps=args.reps, rng=rng), 500, f"{setting} {a}:{b} A/B")
            info = {"ctr_a_pool": pools[0][:, 0].sum() / pools[0][:, 1].sum(),
                    "ctr_b_pool": pools[1][:, 0].sum() / pools[1][:, 1].sum()}
        return n, pw, info

    out: dict[str, object] = {}
    for kind in ("interleaving", "ab"):
        pool = args.pool_users
        n, pw, info = search(kind, pool)
        if n is not None and n > pool / 5:
            pool = 10 * n
            n, pw, info = search(kind, pool)
        out.update({f"{kind}_units": n, f"{kind}_power": pw, f"{kind}_pool_users": pool,
                    **info})
    n_il, n_ab = out["interleaving_units"], out["ab_units"]
    exact = [1 - expected_moments(traffic, collection, runs[r]).no_click_share for r in (a, b)]
    row = {
        "setting": setting, "pair": f"{a} vs {b}", "ndcg10_a": ndcg_a, "ndcg10_b": ndcg_b,
        "ndcg10_margin": ndcg_b - ndcg_a, "ctr_a_expected": exact[0],
        "ctr_b_expected": exact[1], **out, "pages_per_user": m,
        "impressions_interleaving": n_il * m if n_il else None,
        "impressions_ab": 2 * n_ab * m if n_ab else None,
        "ratio": 2 * n_ab / n_il if n_il and n_ab else None,
        "seconds": time.perf_counter() - t0,
    }
    wa, wb = out["wins_a_per_user"], out["wins_b_per_user"]
    d = (wa - wb) / (wa + wb) / 2 if wa + wb else math.nan
    row["share_a_minus_half"] = d
    print(f"\n[{setting}] {row['pair']}: NDCG@10 {ndcg_a:.4f} vs {ndcg_b:.4f} "
          f"(margin {ndcg_b - ndcg_a:+.4f})")
    print(f"  CTR A / B: pool {out['ctr_a_pool']:.4f} / {out['ctr_b_pool']:.4f} "
          f"(model expectation {exact[0]:.4f} / {exact[1]:.4f}); interleaving wins per page "
          f"A {wa / m:.4f}, B {wb / m:.4f}")
    shown = {k: (f"{v:,}" if v else "> 10,000,000") for k, v in
             (("il", n_il), ("ab", n_ab))}
    print(f"  users for 80% power: interleaving {shown['il']} (power "
          f"{out['interleaving_power']:.3f}), A/B {shown['ab']} per arm (power "
          f"{out['ab_power']:.3f})")
    if row["ratio"]:
        print(f"  impressions: interleaving ~{row['impressions_interleaving']:,.0f}, A/B "
              f"~{row['impressions_ab']:,.0f}; ratio A/B / interleaving {row['ratio']:.1f}x")
    print(f"  ({row['seconds']:.0f} s)")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--study", default=str(ROOT / "sample_logs"))
    ap.add_argument("--pairs", default="s100:s200,s130:s160",
                    help="ranker pairs A:B (default: a large and a small offline margin)")
    ap.add_argument("--settings", default="default,heterogeneous,calibrated",
                    help="traffic settings to run: default, heterogeneous, calibrated")
    ap.add_argument("--worlds", type=int, default=3,
                    help="draws of the topic effects per setting that has them (default 3)")
    ap.add_argument("--user-sd", type=float, default=None,
                    help="user propensity sd of every setting (not identified by the click "
                         "sample; default 0.8, the simulator's); the fitted settings are "
                         "refitted with it")
    ap.add_argument("--reps", type=int, default=1000, help="experiments per power estimate")
    ap.add_argument("--pages-per-user", type=float, default=3.5,
                    help="mean pages per user: 1 + Poisson(m - 1) (default 3.5)")
    ap.add_argument("--pool-users", type=int, default=300_000,
                    help="simulated users per pool (grown when an experiment needs more)")
    ap.add_argument("--aa-reps", type=int, default=2000,
                    help="A/A experiments per setting (first pair's sizes, its ranker A "
                         "against itself); 0 skips")
    ap.add_argument("--wscd", default=None,
                    help="directory holding the Yandex WSCD testSample and trainSample: "
                         "recompute their moments and compare with YANDEX_WSCD first")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()
    if args.pages_per_user < 1:
        ap.error("--pages-per-user must be >= 1")
    if args.wscd:
        got = wscd_moments(Path(args.wscd, f).read_text(encoding="utf-8")
                           for f in ("testSample", "trainSample"))
        diff = max(abs(x - y) for x, y in zip(
            (*got.position_ctr, got.no_click_share, got.between_query_var),
            (*YANDEX_WSCD.position_ctr, YANDEX_WSCD.no_click_share,
             YANDEX_WSCD.between_query_var), strict=True))
        print(f"WSCD moments recomputed from {args.wscd}: {got.pages} pages, {got.queries} "
              f"queries; largest difference from YANDEX_WSCD {diff:.2e}")
        if got.pages != YANDEX_WSCD.pages or diff > 1e-9:
            print("  they differ: the calibration constants do not describe this sample")
            return 1
    manifest = json.loads((Path(args.study) / "manifest.json").read_text())
    collection, runs = study_world(manifest)
    default = CalibratedTraffic(_click_model(manifest["click_model"]), shift=0.0,
                                query_sd=0.0,
                                user_sd=float(manifest["traffic"]["propensity_sd"]))
    settings = {"default": default, "heterogeneous": HETEROGENEOUS, "calibrated": CALIBRATED}
    if args.user_sd is not None:
        # the user sd is not identified by the click sample; the fitted settings are refitted
        # with it held at the new value (it changes the marginal moments through the logit)
        settings["default"] = replace(default, user_sd=args.user_sd)
        for name, free, use in (
                ("heterogeneous", ("shift", "query_sd"), ("no_click_share", "between_query_sd")),
                ("calibrated", FIT_PARAMETERS, FIT_MOMENTS)):
            base = replace(settings[name], user_sd=args.user_sd)
            settings[name], res = fit(YANDEX_WSCD, collection, runs[FIT_RANKER], base, free,
                                      use)
            print(f"{name} refitted with user_sd {args.user_sd}: {settings[name].params()}; "
                  f"largest residual {np.abs(res).max():.4f}")
    rng = np.random.default_rng(args.seed)
    results = []
    for name in args.settings.split(","):
        if name not in settings:
            ap.error(f"unknown setting {name!r}; known: {', '.join(settings)}")
        traffic = settings[name]
        for world in range(args.worlds if traffic.query_sd > 0 else 1):
            topic_effect = traffic.topic_effects(len(collection.qids), rng)
            label = f"{name}/w{world + 1}" if traffic.query_sd > 0 else name
            for pair in args.pairs.split(","):
                a, b = pair.split(":")
                row = run_pair(label, traffic, topic_effect, collection, runs, a, b, args,
                               rng)
                row["world"] = world + 1
                row["traffic"] = traffic.params()
                results.append(row)
                if args.aa_reps and pair == args.pairs.split(",")[0] and world == 0 \
                        and row["interleaving_units"] and row["ab_units"]:
                    aa = aa_rejections(
                        row["interleaving_units"], row["ab_units"],
                        PageLists.ranker(collection, runs[a]),
                        PageLists.team_draft(collection, runs[a], runs[a]),
                        collection.popularity, topic_effect, traffic, args, rng)
                    lo, hi = (stats.binomtest(round(aa[k] * aa["aa_reps"]), aa["aa_reps"])
                              .proportion_ci(0.95) for k in ("aa_interleaving", "aa_ab"))
                    row.update(aa)
                    print(f"  A/A ({a} vs itself, same sizes, {aa['aa_reps']} experiments): "
                          f"rejection rate interleaving {aa['aa_interleaving']:.3f} "
                          f"[{lo.low:.3f}, {lo.high:.3f}], A/B {aa['aa_ab']:.3f} "
                          f"[{hi.low:.3f}, {hi.high:.3f}] (alpha {ALPHA})")
    print("\nsetting         pair            NDCG margin  CTR A / B        users IL  users A/B "
          "(both)  impressions IL  impressions A/B  ratio")
    for r in results:
        il, ab = r["interleaving_units"], r["ab_units"]
        print(f"{r['setting']:<15} {r['pair']:<15} {r['ndcg10_margin']:+.4f}     "
              f"{r['ctr_a_pool']:.3f} / {r['ctr_b_pool']:.3f}  {il or 0:>8,}  "
              f"{2 * (ab or 0):>16,}  {r['impressions_interleaving'] or 0:>14,.0f}  "
              f"{r['impressions_ab'] or 0:>15,.0f}  "
              + (f"{r['ratio']:.1f}x" if r["ratio"] else "n/a"))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
