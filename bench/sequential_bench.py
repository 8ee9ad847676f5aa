"""Peeking and duration: fixed-horizon vs the always-valid confidence sequence (issue 17).

Run by hand, never by the test suite::

    python bench/sequential_bench.py                 # 1000 runs per cell, ~10 minutes
    python bench/sequential_bench.py --runs 200      # a quick try
    python bench/sequential_bench.py --aa 500        # also the A/A harness on the sample log
    python bench/sequential_bench.py --runs 0 --aa-calibrated 1000   # the A/A harness alone on
                                                     # the Yandex-calibrated simulator's log

Simulated experiments, seeded, looked at once a day:

- **A/B**: ``--users-per-day`` new users a day split 50/50, each seen on one day with
  1 + Poisson(3) searches clicked with a user's own probability p_u ~ Beta(2, 3) (the
  treatment multiplies it by 1 + lift); metric clicks per user, Welch's z at each look
  (the readout's per-unit mean), the sequence of :mod:`onlineeval.stats.sequential` on the
  same estimate and standard error.
- **interleaving**: ``--users-per-day`` new users a day, each coming back on a later day
  with probability 0.4, 1 to ~8 team-draft pages a visit (70% decided, 15% of those ties),
  each user with a taste p_u ~ Beta(1.5, 1.5) + shift for the treatment; the per-user
  preference test of :func:`onlineeval.interleaving.significance.user_test` at each look and
  its sequence (:func:`onlineeval.interleaving.sequential.preference_sequence`).

Reported per design: under no effect, the share of runs in which each procedure ever
rejects over 14 daily looks (fixed-horizon read every day vs the sequence), with
Clopper–Pearson intervals; with an effect, the fixed-horizon duration for 80% power (the
first day at which the fixed test, read once, rejects in >= 80% of runs) and the sequential
test's mean and median stopping day when it may run up to twice that long (runs that never
stop counted at the cap), with ``rho2`` tuned for the units at the fixed-horizon day; and,
as Kharitonov et al. (SIGIR 2015) frame it, within a plan of 14 days: how often the
sequence stops by then and its mean stopping day (runs that never stop count 14) against
the 14 planned days. The powers are printed beside the durations: a shorter mean duration
at lower power is no gain.

``--aa-calibrated SPLITS`` runs :func:`onlineeval.aa_test` on an A/A log of the
Yandex-calibrated simulator (:func:`onlineeval.simulate.calibrated.calibrated_ab_log`, both
arms serving the sample study's ranker s100, ``--aa-users`` users over 14 days) through the
whole path: load_logs, the SQL per-unit sums by day, the salted splits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onlineeval.abtest.aa import clopper_pearson  # noqa: E402
from onlineeval.interleaving.sequential import preference_sequence  # noqa: E402
from onlineeval.stats.sequential import confidence_sequence, optimal_rho2  # noqa: E402

ALPHA = 0.05


def ab_runs(rng: np.random.Generator, runs: int, days: int, per_day: int,
            lift: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run and look: treatment − control clicks per user, its Welch standard error and
    the users so far (runs x days)."""
    n = per_day // 2
    out = []
    for arm_lift in (0.0, lift):
        p = np.minimum(1.0, rng.beta(2, 3, (runs, days, n)) * (1 + arm_lift))
        clicks = rng.binomial(1 + rng.poisson(3, (runs, days, n)), p).astype(float)
        s1 = np.cumsum(clicks.sum(axis=2), axis=1)
        s2 = np.cumsum((clicks ** 2).sum(axis=2), axis=1)
        m = n * np.arange(1, days + 1)
        mean = s1 / m
        var = (s2 - m * mean ** 2) / (m - 1)
        out.append((mean, var / m))
    (mc, vc), (mt, vt) = out
    users = np.broadcast_to(2 * n * np.arange(1, days + 1, dtype=float), mc.shape)
    return mt - mc, np.sqrt(vc + vt), users


def interleaving_runs(rng: np.random.Generator, runs: int, days: int, per_day: int,
                      shift: float, rho2_at: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per run and look: the fixed-horizon p-value and the sequence's running p-value."""
    fixed, seq = np.empty((runs, days)), np.empty((runs, days))
    users = per_day * days
    for r in range(runs):
        first = np.repeat(np.arange(days), per_day)
        taste = np.clip(rng.beta(1.5, 1.5, users) + shift, 0, 1)
        later = np.arange(days)[None, :] > first[:, None]
        visit = (np.arange(days)[None, :] == first[:, None]) | (
            later & (rng.random((users, days)) < 0.4))
        u, d = np.nonzero(visit)
        decided = rng.binomial(rng.geometric(0.3, u.size), 0.7)
        ties = rng.binomial(decided, 0.15)
        wins_t = rng.binomial(decided - ties, taste[u])
        counts = np.stack([wins_t, decided - ties - wins_t, ties], axis=1).astype(float)
        # the default tuning (users at the last look) unless told the day where the
        # sequence should be narrowest: tuned for the users with a decided page by then
        # (the users arrived by that day, most of whom have one)
        rho2 = None if rho2_at is None else optimal_rho2(float(per_day * rho2_at), ALPHA)
        tests, _, s = preference_sequence(u, d, counts, days, alpha=ALPHA, rho2=rho2)
        fixed[r] = [t.p_value for t in tests]
        seq[r] = s.p_value
    return fixed, seq


def ab_sequence_p(est: np.ndarray, se: np.ndarray, n: np.ndarray,
                  rho2: float | None) -> np.ndarray:
    return np.array([confidence_sequence(e, s, k, alpha=ALPHA, rho2=rho2).p_value
                     for e, s, k in zip(est, se, n, strict=True)])


def rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n)
    return f"{k / n:6.1%} [{lo:.1%}, {hi:.1%}]"


def duration_line(design: str, size: str, fixed_p: np.ndarray, seq_p: np.ndarray,
                  d80: int | None, plan: int) -> str:
    """Two framings of the sequential test's duration: against the fixed-horizon days for
    80% power (it may run up to twice that), and within a fixed plan of ``plan`` days
    (Kharitonov et al.'s: experiments planned for a fixed period; runs that never stop
    count the whole plan)."""
    cells = [design, size]
    if d80 is None or 2 * d80 > seq_p.shape[1]:
        cells += [f"> {seq_p.shape[1] // 2}", "", "", ""]
    else:
        stops = seq_p[:, :2 * d80] < ALPHA
        day = np.where(stops.any(axis=1), np.argmax(stops, axis=1) + 1, 2 * d80)
        cells += [str(d80), f"{day.mean():.2f} (median {np.median(day):.0f})",
                  f"{day.mean() / d80 - 1:+.0%}", f"{stops.any(axis=1).mean():.0%}"]
    stops = seq_p[:, :plan] < ALPHA
    day = np.where(stops.any(axis=1), np.argmax(stops, axis=1) + 1, plan)
    fixed_power = (fixed_p[:, plan - 1] < ALPHA).mean()
    cells += [f"{fixed_power:.0%}", f"{stops.any(axis=1).mean():.0%}", f"{day.mean():.2f}",
              f"{1 - day.mean() / plan:.0%}"]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--users-per-day", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2015)
    parser.add_argument("--aa", type=int, default=0, metavar="SPLITS",
                        help="also run onlineeval.aa_test on sample_logs/ab with SPLITS splits")
    parser.add_argument("--aa-calibrated", type=int, default=0, metavar="SPLITS",
                        help="also run onlineeval.aa_test with SPLITS splits on an A/A log of "
                        "the Yandex-calibrated simulator")
    parser.add_argument("--aa-users", type=int, default=20_000,
                        help="users of that simulated log (default 20,000)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    runs, per_day, looks = args.runs, args.users_per_day, 14
    if runs > 0:
        peeking_and_duration(rng, runs, per_day, looks)
    if args.aa:
        sample_aa(args.aa)
    if args.aa_calibrated:
        calibrated_aa(args.aa_calibrated, args.aa_users, looks, args.seed)
    return 0


def peeking_and_duration(rng: np.random.Generator, runs: int, per_day: int,
                         looks: int) -> None:

    print(f"## Any-look false positives, {looks} daily looks, no effect, alpha {ALPHA}, "
          f"{runs} runs, {per_day} new users a day\n")
    print("| design | fixed-horizon at the last look | fixed-horizon, any look | "
          "sequential, any look |")
    print("| --- | --- | --- | --- |")
    est, se, n = ab_runs(rng, runs, looks, per_day, 0.0)
    fixed = 2 * stats.norm.sf(np.abs(est / se))
    seq = ab_sequence_p(est, se, n, None)
    print(f"| A/B (clicks per user) | {rate(int((fixed[:, -1] < ALPHA).sum()), runs)} | "
          f"{rate(int((fixed < ALPHA).any(axis=1).sum()), runs)} | "
          f"{rate(int((seq < ALPHA).any(axis=1).sum()), runs)} |")
    fixed, seq = interleaving_runs(rng, runs, looks, per_day // 4, 0.0, None)
    print(f"| interleaving (per-user preference) | "
          f"{rate(int((fixed[:, -1] < ALPHA).sum()), runs)} | "
          f"{rate(int((fixed < ALPHA).any(axis=1).sum()), runs)} | "
          f"{rate(int((seq < ALPHA).any(axis=1).sum()), runs)} |")

    horizon, plan = 28, 14
    print(f"\n## Duration: days to a decision ({runs} A/B, {runs // 2} interleaving runs per "
          "row)\n")
    print("| design | effect | fixed-horizon days for 80% power | sequential stop day, up to "
          "2x | vs fixed days | sequential power by 2x | fixed power at day 14 | sequential "
          "stops by day 14 | mean stop day (no stop = 14) | shorter than 14 days by |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")

    def day80(fixed: np.ndarray) -> int | None:
        power = (fixed < ALPHA).mean(axis=0)
        return int(np.argmax(power >= 0.8)) + 1 if (power >= 0.8).any() else None

    ab_per_day = per_day * 2
    for lift in (0.04, 0.06, 0.10):
        est, se, n = ab_runs(rng, runs, horizon, ab_per_day, lift)
        fixed = 2 * stats.norm.sf(np.abs(est / se))
        d80 = day80(fixed)
        seq = ab_sequence_p(est, se, n, optimal_rho2(float((d80 or horizon) * ab_per_day),
                                                     ALPHA))
        print(duration_line("A/B", f"+{lift:.0%} clicks/user", fixed, seq, d80, plan))
    for shift in (0.03, 0.05, 0.08):
        fixed, _ = interleaving_runs(rng, runs // 2, horizon, per_day // 4, shift, None)
        d80 = day80(fixed)
        fixed, seq = interleaving_runs(rng, runs // 2, horizon, per_day // 4, shift,
                                       d80 or horizon)
        print(duration_line("interleaving", f"taste +{shift:.2f}", fixed, seq, d80, plan))


def sample_aa(splits: int) -> None:
    import warnings

    import onlineeval

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logs = onlineeval.load_logs(str(ROOT / "sample_logs" / "ab"))
        res = onlineeval.aa_test(logs, "ctr", splits=splits, looks="day",
                                 experiment="s130_vs_s080")
    print(f"\n## A/A on sample_logs/ab (s130_vs_s080, ctr, {splits} salted splits)\n")
    print(res.to_string(index=False))


def calibrated_aa(splits: int, users: int, days: int, seed: int) -> None:
    import json
    import time

    import onlineeval
    from onlineeval.simulate.calibrated import CALIBRATED, calibrated_ab_log, study_world

    t0 = time.perf_counter()
    collection, runs = study_world(json.loads((ROOT / "sample_logs" / "manifest.json")
                                              .read_text()))
    log = calibrated_ab_log(collection, {"control": runs["s100"], "treatment": runs["s100"]},
                            CALIBRATED, users, days, np.random.default_rng(seed))
    logs = onlineeval.load_logs(searches=log.searches, results=log.results, clicks=log.clicks)
    res = onlineeval.aa_test(logs, ["ctr", "clicks_per_unit"], splits=splits, looks="day",
                             seed=seed)
    print(f"\n## A/A on the Yandex-calibrated simulator ({users:,} users, "
          f"{len(log.searches):,} searches over {days} days, both arms s100; {splits} salted "
          f"splits; {time.perf_counter() - t0:.0f} s)\n")
    print(res.to_string(index=False))
    print(f"units at the last look: {res.attrs['units']}")


if __name__ == "__main__":
    raise SystemExit(main())
