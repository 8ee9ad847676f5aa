"""Fixtures of the report tests: a readout's parts with hostile names and known numbers."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from onlineeval.report.readout_page import ReadoutParts

#: a metric name longer than any label line: it has to wrap, in tables and plots
LONG = "time_to_first_click_seconds_of_the_first_result_page_with_a_very_long_name"


def make_parts(name: str = "exp<1> & $5_vs_$10", metrics: int = 4, treatments: int = 1,
               long: str = LONG) -> ReadoutParts:
    """A readout of ``metrics`` metrics (one primary, one guardrail, the rest secondary) and
    ``treatments`` treatment arms, every table filled."""
    base = [("ctr", "primary", 0.41, 0.423), ("abandonment_rate", "guardrail", 0.2, 0.199),
            (long, "secondary", 3.2, 3.1), ("click_mrr", "secondary", 0.3, 0.30013)]
    base += [(f"metric_{i}_{'x' * (i % 30)}", "secondary", 1.0 + i, 1.0 + i * 1.01)
             for i in range(metrics - len(base))]
    variants = ["treatment"] if treatments == 1 else [f"arm <{k}>" for k in range(treatments)]
    rows = []
    for k, variant in enumerate(variants):
        for metric, role, c, t in base[:metrics]:
            t = t + 0.001 * k
            d = t - c
            primary = role == "primary"
            rows.append(dict(
                metric=metric, variant=variant, role=role, control_value=c, treatment_value=t,
                estimate=d, ci_low=d - 0.004, ci_high=d + 0.004,
                ci_level=0.975 if primary else 0.95, p_value=0.0123 if primary else 0.4,
                p_adjusted=0.0246 if primary else np.nan,
                correction="bonferroni" if primary else None,
                family_size=2 if primary else None, test="Welch t", n=20000,
                units_control=10000, units_treatment=10000, unit="user_id",
                lift=t / c - 1, lift_ci_low=(d - 0.004) / c, lift_ci_high=(d + 0.004) / c,
                decision=("significantly better" if primary else
                          "pass (non-inferior)" if role == "guardrail" else
                          "no significant change"),
                margin=-0.02 if role == "guardrail" else np.nan,
                ni_p_value=1.2e-6 if role == "guardrail" else np.nan))
    comp = pd.DataFrame(rows)
    days = pd.date_range("2026-10-01", periods=30, freq="D")
    ot = []
    for axis, xs in (("calendar day", list(days)), ("days since first exposure", range(30))):
        for i, x in enumerate(xs):
            e = 0.013 + 0.01 / (i + 1)
            half = 0.02 / np.sqrt(i + 1)
            ot.append(dict(axis=axis, metric="ctr", variant="treatment", x=x, estimate=e,
                           ci_low=e - half, ci_high=e + half, ci_level=0.95))
    seg = pd.DataFrame([
        dict(segment=s, metric="ctr", variant="treatment", estimate=e, ci_low=e - 0.01,
             ci_high=e + 0.01, units=u, heterogeneity_p=0.03)
        for s, e, u in [("desktop", 0.02, 6000), ("mobile <zz>", 0.005, 3500),
                        ("tablet_" + "x" * 60, -0.01, 500)]])
    q = pd.DataFrame([
        dict(metric="time_to_first_click", quantile=qq, control_value=c, treatment_value=t,
             estimate=t - c, ci_low=t - c - 0.1, ci_high=t - c + 0.1,
             method="unit-level bootstrap")
        for qq, c, t in (("p50", 3.2, 3.0), ("p90", 12.5, 12.0))])
    pc = pd.DataFrame([dict(variant=v, rank=r, ctr=0.4 / r + (0.01 if v != "control" else 0))
                       for v in ("control", *variants) for r in range(1, 11)])
    il = dict(estimate=0.0351, ci_low=0.01, ci_high=0.06, ci_level=0.95, p_value=3e-5,
              wins=1200, losses=1000, ties=300, queries=450, n=2500, unit="user_id",
              test="per-user t test", sensitivity=81234,
              sensitivity_note="from the observed variances")
    pq = pd.DataFrame(dict(query=["q1", "a very long query <zz>" * 4, "q3"],
                           pages=[120, 80, 40], delta=[0.1, -0.05, 0.0]))
    off = pd.DataFrame(dict(measure=["ndcg_cut_10", "map"], estimate=[0.0412, 0.03],
                            ci_low=[0.02, 0.01], ci_high=[0.06, 0.05], p_value=[0.001, 0.02],
                            n=[50, 50]))
    power = comp[["metric", "variant"]].assign(mde=0.021, power=0.55, units_needed=25000)
    return ReadoutParts(
        experiment=name, control="control <c>", verdict="ship",
        rule="ship when every primary metric improves significantly (Bonferroni within the "
             "primary family) and no guardrail fails its non-inferiority test",
        comparisons=comp, units={"control": 10000, **{v: 10000 for v in variants}},
        window=dict(start=pd.Timestamp("2026-10-01 00:03"),
                    end=pd.Timestamp("2026-10-30 23:50"), days=30),
        srm=dict(p_value=0.61, mismatch=False, statistic=0.26), power=power,
        over_time=pd.DataFrame(ot), segments=seg, segment_column="device", quantiles=q,
        position_ctr=pc, interleaving=il, interleaving_queries=pq, offline=off)


@pytest.fixture
def readout_parts() -> Callable[..., ReadoutParts]:
    """Call it with :func:`make_parts`' arguments for a readout's parts."""
    return make_parts
