"""Sensitivity: impressions for 80% power, team-draft interleaving vs an A/B test on CTR.

For each ranker pair of the sample study (sample_logs/manifest.json: same collection,
rankers and click model as the sample logs) this finds, by repeated simulation, the smallest
number of impressions (result pages) at which a two-sided test at alpha = 0.05 detects the
better ranker in 80% of experiments:

- interleaving: N pages, each shown the team-draft list of the pair; the sign test
  (scipy.stats.binomtest) on wins_A vs wins_B must reject in the direction of the better ranker;
- A/B on CTR: N pages split equally between the two rankers' own lists; CTR = pages with a
  click / pages per arm; a two-sided two-sample test of the click indicator
  (scipy.stats.ttest_ind_from_stats, unequal variances) must reject in the right direction.

Pages are independent (one page per user), the conservative setting for interleaving: a
user-randomised A/B test with several pages per user only gets noisier.

How the repeated experiments are simulated: every page is an i.i.d. draw (topic by popularity,
user propensity, merged list, clicks), so the counts of an N-page experiment follow exactly a
multinomial (interleaving: win A / win B / tie / no credit) or a binomial (A/B: clicked or not
per arm) law with the per-page probabilities. Those probabilities come from the click model:
for interleaving from a large page-level simulation (onlineeval.simulate.interleaving.
simulate_outcomes, --pages pages per pair), for CTR exactly from the cascade's no-click
probability integrated over topics and the propensity distribution (checked against a
page-level simulation, printed). Each power estimate uses --reps experiments; N is found by
doubling and then bisection on log N. Finally the interleaving N is checked with fully
page-level simulated experiments.

User-randomised scenario (second table): users see 1 + Poisson(--pages-per-user - 1) pages
each, with one click propensity per user. A pool of --pool-users simulated users is made per
ranker (A/B) and per pair (interleaving); each experiment draws its users from the pool with
replacement. A/B: users split between the arms, CTR = clicked pages / pages with users as the
unit (delta method, onlineeval.stats.moments.ratio and onlineeval.stats.tests.compare, as the
A/B readout does); interleaving: the readout's sign test on the pages' wins. The search runs
over users; impressions = users x mean pages per user.

Run (heavy: take the lock):
    flock /tmp/onlineeval-heavy.lock /work/venv/bin/python bench/sensitivity.py
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onlineeval.interleaving.significance import sign_test  # noqa: E402
from onlineeval.progress import Progress  # noqa: E402
from onlineeval.simulate import ClickModel, ndcg_at_k  # noqa: E402
from onlineeval.simulate.interleaving import (  # noqa: E402
    _click_model,
    simulate_outcomes,
    study_rankers,
)
from onlineeval.stats.moments import Moments, ratio  # noqa: E402
from onlineeval.stats.tests import compare  # noqa: E402

ALPHA, POWER = 0.05, 0.80


def no_click_probability(model: ClickModel, grades: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(no click on the page) for each propensity in ``b`` (exact, from the cascade).

    The user examines rank 1; at each examined rank she does not click with probability
    1 - alpha_r and then continues with probability gamma (or the list ends). Hence
    P(no click) = sum_{r<n} prod_{j<=r}(1-alpha_j) gamma^(r-1) (1-gamma)
                 + prod_{j<=n}(1-alpha_j) gamma^(n-1).
    """
    gamma = model.continuation
    logits = np.asarray(model._logits)[grades][None, :] + b[:, None]
    miss = np.cumprod(1.0 - 1.0 / (1.0 + np.exp(-logits)), axis=1)  # prod_{j<=r}(1-alpha_j)
    n = grades.size
    r = np.arange(1, n + 1)
    leave = np.where(r < n, (gamma ** (r - 1)) * (1 - gamma), gamma ** (n - 1))
    return (miss * leave[None, :]).sum(axis=1)


def exact_ctr(collection, run, model: ClickModel, propensity_sd: float, k: int = 10) -> float:
    """CTR of a ranker: P(a page has a click), over topic popularity and propensity."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)  # E over Normal(0, 1)
    weights = weights / weights.sum()
    b = nodes * propensity_sd
    total = 0.0
    for qid, p in zip(collection.qids, collection.popularity, strict=True):
        grades = np.asarray(collection.grades(qid, run.ranking(qid)[:k]))
        total += p * float(weights @ (1.0 - no_click_probability(model, grades, b)))
    return total


def ab_page_clicks(collection, run, model, propensity_sd, users, rng, k=10) -> np.ndarray:
    """Clicked-or-not of each page served by ``run``; page i belongs to user ``users[i]``."""
    n = users.size
    topic = rng.choice(len(collection.qids), size=n, p=collection.popularity)
    grades = np.full((n, k), -1)
    for q in np.unique(topic):
        rows = np.flatnonzero(topic == q)
        g = collection.grades(collection.qids[q], run.ranking(collection.qids[q])[:k])
        grades[rows, : len(g)] = g
    propensity = rng.normal(0, propensity_sd, int(users.max()) + 1)
    clicked, _, _ = model.simulate_batch(grades, rng, propensity[users])
    return clicked.any(axis=1)


def simulated_ctr(collection, run, model, propensity_sd, n, rng, k=10) -> float:
    return float(ab_page_clicks(collection, run, model, propensity_sd, np.arange(n), rng,
                                k).mean())


def page_users(n_users: int, pages_mean: float, rng: np.random.Generator) -> np.ndarray:
    """User code of each page: user u has 1 + Poisson(pages_mean - 1) pages."""
    pages = 1 + rng.poisson(pages_mean - 1.0, n_users)
    return np.repeat(np.arange(n_users), pages)


def _power_il_users(n: int, wins: np.ndarray, better_is_b: bool, reps: int,
                    rng: np.random.Generator) -> float:
    """Power of the sign test with ``n`` users drawn from a pool (rows: wins_a, wins_b)."""
    hits = 0
    for start in range(0, reps, max(1, 4_000_000 // n)):
        c = min(reps - start, max(1, 4_000_000 // n))
        idx = rng.integers(0, wins.shape[0], (c, n))
        wa, wb = wins[idx, 0].sum(1), wins[idx, 1].sum(1)
        hits += sum(sign_test(x, y) < ALPHA and (y > x) == better_is_b
                    for x, y in zip(wa, wb, strict=True))
    return hits / reps


def _power_ab_users(n: int, pool_a: np.ndarray, pool_b: np.ndarray, reps: int,
                    rng: np.random.Generator) -> float:
    """Power of the user-level CTR comparison (delta method) with ``n`` users per arm drawn
    from each arm's pool (rows: clicked pages, pages)."""
    b_better = pool_b[:, 0].sum() / pool_b[:, 1].sum() > pool_a[:, 0].sum() / pool_a[:, 1].sum()
    hits = 0
    step = max(1, 2_000_000 // n)
    for start in range(0, reps, step):
        c = min(reps - start, step)
        est = [ratio(Moments.from_units(pool[rng.integers(0, pool.shape[0], (c, n))]), 0, 1)
               for pool in (pool_a, pool_b)]
        res = compare(est[0], est[1], alpha=ALPHA)
        right = (res.abs_diff > 0) if b_better else (res.abs_diff < 0)
        hits += int(np.sum((res.p_value < ALPHA) & right))
    return hits / reps


def _power_il(n: int, probs: np.ndarray, better_is_b: bool, reps: int,
                       rng: np.random.Generator) -> float:
    counts = rng.multinomial(n, probs, size=reps)
    hits = 0
    for wa, wb in counts[:, :2]:
        if sign_test(wa, wb) < ALPHA and (wb > wa) == better_is_b:
            hits += 1
    return hits / reps


def _power_ab(n: int, ctr_a: float, ctr_b: float, reps: int, rng: np.random.Generator) -> float:
    half = n // 2
    ka, kb = rng.binomial(half, ctr_a, reps), rng.binomial(half, ctr_b, reps)
    ma, mb = ka / half, kb / half
    sa = np.sqrt(ma * (1 - ma) * half / (half - 1))
    sb = np.sqrt(mb * (1 - mb) * half / (half - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = stats.ttest_ind_from_stats(mb, sb, half, ma, sa, half, equal_var=False).pvalue
    right = (mb > ma) if ctr_b > ctr_a else (ma > mb)
    return float(np.mean((p < ALPHA) & right))


def impressions_for_power(power_at, start: int, label: str, steps: int = 16,
                          limit: int = 10**8) -> tuple[int | None, float]:
    """Smallest N (to ~2%) with power >= 0.8: halving or doubling from ``start`` to bracket
    it, then bisection on log N. (None, power) when even ``limit`` impressions fall short
    (e.g. the click model prefers the offline-worse ranker, or not at all)."""
    lo, hi = start, start
    with Progress(label) as bar:
        if power_at(start) >= POWER:
            while lo > 2 and power_at(lo // 2) >= POWER:
                lo //= 2
                bar.update()
            hi, lo = lo, lo // 2
        else:
            while power_at(hi) < POWER:
                lo, hi = hi, hi * 2
                bar.update()
                if hi > limit:
                    return None, power_at(limit)
        for _ in range(steps):
            if hi - lo <= 1 or hi / max(lo, 1) < 1.02:
                break
            mid = int(round(math.sqrt(max(lo, 1) * hi)))
            if power_at(mid) >= POWER:
                hi = mid
            else:
                lo = mid
            bar.update()
    return hi, power_at(hi)


def _n(n: int | None) -> str:
    return f"{n:,}" if n is not None else "> 100,000,000"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--study", default=str(ROOT / "sample_logs"))
    ap.add_argument("--pairs", default="s100:s200,s130:s160",
                    help="ranker pairs A:B (default: a large and a small offline margin)")
    ap.add_argument("--pages", type=int, default=2_000_000,
                    help="pages simulated per pair for the interleaving outcome probabilities")
    ap.add_argument("--reps", type=int, default=2000, help="experiments per power estimate")
    ap.add_argument("--check-reps", type=int, default=300,
                    help="page-level experiments for the final interleaving check")
    ap.add_argument("--pages-per-user", type=float, default=3.5,
                    help="mean pages per user in the user-randomised scenario (default 3.5, "
                         "about the sample A/B logs'); 0 skips that scenario")
    ap.add_argument("--pool-users", type=int, default=300_000,
                    help="simulated users per pool in the user-randomised scenario")
    ap.add_argument("--user-reps", type=int, default=1000,
                    help="experiments per power estimate in the user-randomised scenario")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()
    ab_pools: dict[str, np.ndarray] = {}

    def ab_pool(name: str) -> np.ndarray:
        """Per user (clicked pages, pages) of users served by ranker ``name``."""
        if name not in ab_pools:
            users = page_users(args.pool_users, args.pages_per_user, rng)
            clicked = ab_page_clicks(collection, runs[name], model, sd, users, rng)
            ab_pools[name] = np.column_stack([
                np.bincount(users, clicked, args.pool_users),
                np.bincount(users, None, args.pool_users)])
        return ab_pools[name]

    manifest = json.loads((Path(args.study) / "manifest.json").read_text())
    collection, runs = study_rankers(manifest)
    model = _click_model(manifest["click_model"])
    sd = float(manifest["traffic"]["propensity_sd"])
    rng = np.random.default_rng(args.seed)
    results = []
    for pair in args.pairs.split(","):
        a, b = pair.split(":")
        t0 = time.perf_counter()
        ndcg_a, ndcg_b = ndcg_at_k(collection, runs[a]), ndcg_at_k(collection, runs[b])
        sim = simulate_outcomes(collection, runs[a], runs[b], args.pages, rng,
                                click_model=model, propensity_sd=sd)
        ca, cb = sim["credit_a"], sim["credit_b"]
        probs = np.array([np.mean(ca > cb), np.mean(cb > ca), np.mean((ca == cb) & (ca > 0))])
        probs = np.append(probs, 1 - probs.sum())
        better_is_b = ndcg_b > ndcg_a
        ctr_a, ctr_b = (exact_ctr(collection, runs[r], model, sd) for r in (a, b))
        mc_a = simulated_ctr(collection, runs[a], model, sd, 1_000_000, rng)
        n_il, pw_il = impressions_for_power(
            partial(_power_il, probs=probs, better_is_b=better_is_b, reps=args.reps, rng=rng),
            100,
            f"{a}:{b} interleaving")
        n_ab, pw_ab = impressions_for_power(
            partial(_power_ab, ctr_a=ctr_a, ctr_b=ctr_b, reps=args.reps * 4, rng=rng), 1000,
            f"{a}:{b} A/B")
        # page-level check of the interleaving figure: fully simulated experiments
        pw_check = math.nan
        if n_il is not None:
            check = simulate_outcomes(collection, runs[a], runs[b], n_il * args.check_reps,
                                      rng, click_model=model, propensity_sd=sd)
            xa = check["credit_a"].reshape(args.check_reps, n_il)
            xb = check["credit_b"].reshape(args.check_reps, n_il)
            wa, wb = (xa > xb).sum(1), (xb > xa).sum(1)
            pw_check = float(np.mean([sign_test(x, y) < ALPHA and (y > x) == better_is_b
                                      for x, y in zip(wa, wb, strict=True)]))
        if args.pages_per_user >= 1:
            users = page_users(args.pool_users, args.pages_per_user, rng)
            sim_u = simulate_outcomes(collection, runs[a], runs[b], users.size, rng,
                                      click_model=model, propensity_sd=sd, users=users)
            xa, xb = sim_u["credit_a"], sim_u["credit_b"]
            wins = np.column_stack([np.bincount(users, xa > xb, args.pool_users),
                                    np.bincount(users, xb > xa, args.pool_users)])
            u_il, upw_il = impressions_for_power(
                partial(_power_il_users, wins=wins, better_is_b=better_is_b,
                        reps=args.user_reps, rng=rng), 50, f"{a}:{b} interleaving, users")
            u_ab, upw_ab = impressions_for_power(
                partial(_power_ab_users, pool_a=ab_pool(a), pool_b=ab_pool(b),
                        reps=args.user_reps, rng=rng), 500, f"{a}:{b} A/B, users")
        else:
            u_il = u_ab = None
            upw_il = upw_ab = math.nan
        d = (probs[0] + probs[2] / 2) / probs[:3].sum() - 0.5
        row = {
            "pair": f"{a} vs {b}", "ndcg10_a": ndcg_a, "ndcg10_b": ndcg_b,
            "ndcg10_margin": ndcg_b - ndcg_a, "delta_ab": d, "p_win_a": probs[0],
            "p_win_b": probs[1], "p_tie": probs[2], "ctr_a": ctr_a, "ctr_b": ctr_b,
            "ctr_a_simulated_1M": mc_a, "impressions_interleaving": n_il,
            "power_interleaving": pw_il, "power_interleaving_page_level_check": pw_check,
            "impressions_ab": n_ab, "power_ab": pw_ab,
            "ratio_ab_over_interleaving": n_ab / n_il if n_ab and n_il else None,
            "users_interleaving_user_level": u_il, "power_interleaving_user_level": upw_il,
            "users_per_arm_ab_user_level": u_ab, "power_ab_user_level": upw_ab,
            "pages_per_user": args.pages_per_user,
            "seconds": time.perf_counter() - t0,
        }
        if u_il and u_ab:
            row["impressions_interleaving_user_level"] = u_il * args.pages_per_user
            row["impressions_ab_user_level"] = 2 * u_ab * args.pages_per_user
            row["ratio_user_level"] = 2 * u_ab / u_il
        results.append(row)
        print(f"\n{row['pair']}: NDCG@10 {ndcg_a:.4f} vs {ndcg_b:.4f} (margin "
              f"{ndcg_b - ndcg_a:+.4f})")
        print(f"  interleaving: P(win A, win B, tie) = {probs[0]:.4f}, {probs[1]:.4f}, "
              f"{probs[2]:.4f}; delta_AB = {d:+.4f}")
        print(f"  A/B: CTR {ctr_a:.5f} vs {ctr_b:.5f} (exact; page-level simulation of A: "
              f"{mc_a:.5f})")
        print(f"  impressions for 80% power: interleaving {_n(n_il)} (power {pw_il:.3f}; "
              f"page-level check {pw_check:.3f} over {args.check_reps} experiments), "
              f"A/B {_n(n_ab)} (power {pw_ab:.3f})")
        ratio = row["ratio_ab_over_interleaving"]
        shown = f"{ratio:.1f}x" if ratio else "n/a (a method never reached 80% power)"
        print(f"  ratio A/B / interleaving: {shown}")
        if u_il and u_ab:
            print(f"  user-randomised ({args.pages_per_user} pages per user): interleaving "
                  f"{u_il:,} users (~{u_il * args.pages_per_user:,.0f} impressions, power "
                  f"{upw_il:.3f}), A/B {u_ab:,} users per arm (~"
                  f"{2 * u_ab * args.pages_per_user:,.0f} impressions, power {upw_ab:.3f}); "
                  f"ratio {2 * u_ab / u_il:.1f}x")
        print(f"  ({row['seconds']:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
