"""The estimate, its unit-clustered interval and diagnostics, from the per-unit SQL rows."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from onlineeval.levels import check_level
from onlineeval.registry import Registry
from onlineeval.stats.moments import Moments, ratio

ESTIMATORS: Registry[str] = Registry("counterfactual estimator")
ESTIMATORS.register("ips", "inverse propensity scoring: each logged click weighs "
                    "p(candidate rank) / p(logged rank)")
ESTIMATORS.register("snips", "self-normalised per (query, document): clicks over the "
                    "examination mass they were shown with, times p(candidate rank)")
ESTIMATORS.register("dr", "doubly robust: a pbm click model's predicted clicks of the "
                    "candidate plus the IPS-weighted residuals of the logged clicks")


def interval(y: np.ndarray, pages: np.ndarray, confidence: float) -> dict[str, float]:
    """sum(y) / sum(pages) with the delta-method variance of that ratio over units."""
    confidence = check_level(confidence, "confidence")
    est = ratio(Moments.from_units(np.c_[np.asarray(y, float), np.asarray(pages, float)]),
                0, 1)
    value, var = float(est.value), float(est.var)
    se = math.sqrt(var) if var >= 0 else float("nan")
    z = float(norm.ppf((1 + confidence) / 2))
    return {"value": value, "se": se, "ci_low": value - z * se, "ci_high": value + z * se}


def kish(sum_w: float, sum_w2: float) -> float:
    """(sum w)^2 / sum w^2 over the weighted clicks."""
    return sum_w * sum_w / sum_w2 if sum_w2 > 0 else 0.0


def estimate(rows: pd.DataFrame, estimator: str, confidence: float = 0.95) -> dict[str, Any]:
    """The result fields of ``estimator`` from the rows of its SQL (``sums.per_unit``)."""
    confidence = check_level(confidence, "confidence")
    name = ESTIMATORS.canonical(estimator)
    pages = rows["pages"].to_numpy(float)
    out = interval(rows[name].to_numpy(float), pages, confidence)
    slots = float(rows["slots"].sum())
    if "weighted_sum" in rows.columns:   # pooled per (query, document)
        prefix = "" if name == "snips" else "dr_"
        ess = kish(float(rows[prefix + "weighted_sum"].iloc[0]),
                   float(rows[prefix + "weighted_sum2"].iloc[0]))
    else:
        ess = kish(float(rows["ips"].sum()), float(rows["clicks_w2"].sum()))
    out.update({
        "units": len(rows), "pages": int(pages.sum()),
        "weighted_clicks": int(rows["clicks_used"].sum()),
        "effective_sample_size": ess,
        "clipped_clicks": int(rows["clipped_clicks"].sum()),
        "unsupported_share": 1 - float(rows["supported"].sum()) / slots if slots
        else float("nan"),
        "clicks_without_propensity": int(rows["clicks_without_propensity"].sum()),
        "clicks_beyond_max_rank": int(rows["clicks_beyond_max_rank"].sum()),
        "shown_without_propensity": int(rows["shown_without_propensity"].sum()),
        "pages_without_candidate": int(rows["pages_without_candidate"].iloc[0]),
        "pages_without_unit": int(rows["pages_without_unit"].iloc[0]),
        "repeated_results": int(rows["repeated_results"].iloc[0]),
    })
    return out
