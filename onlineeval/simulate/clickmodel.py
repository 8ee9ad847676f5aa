"""A DBN-style cascade click model with position bias and a per-user click propensity."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from onlineeval.errors import InvalidParameterError


class Click(NamedTuple):
    """One simulated click: the 1-based rank clicked and the dwell time on the result (ms)."""

    rank: int
    dwell_ms: float


class PageOutcome(NamedTuple):
    """What the user did on one page: clicks in click order, and whether a click satisfied."""

    clicks: list[Click]
    satisfied: bool


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _check_probs(name: str, values: Sequence[float], open_interval: bool) -> None:
    if len(values) != 5:
        raise InvalidParameterError(
            f"ClickModel.{name} needs one probability per grade 0..4 (5 values); got {len(values)}"
        )
    for v in values:
        bad = not (0.0 < v < 1.0) if open_interval else not (0.0 <= v <= 1.0)
        if bad:
            interval = "(0, 1)" if open_interval else "[0, 1]"
            raise InvalidParameterError(
                f"ClickModel.{name} values must lie in {interval}; got {list(values)}"
            )


@dataclass(frozen=True)
class ClickModel:
    r"""A dynamic-Bayesian-network style cascade (Chapelle & Zhang 2009), simplified.

    The user scans the shown list from rank 1 downward. With grades :math:`g_1..g_n` of the
    shown documents (0..4; unjudged documents count as 0) and the user's propensity :math:`b`
    (a logit shift, 0 for the average user):

    - attractiveness :math:`\alpha_r = \sigma(\operatorname{logit}(A_{g_r}) + b)`, with
      :math:`\sigma(x) = 1/(1+e^{-x})` and ``A = attractiveness`` indexed by grade;
    - satisfaction probability after a click :math:`s_r = S_{g_r}` (``S = satisfaction``);
    - examination: :math:`E_1 = 1`; at an examined rank the user clicks with probability
      :math:`\alpha_r`; after a click she is satisfied with probability :math:`s_r` and stops;
      otherwise (no click, or an unsatisfying click) she examines rank :math:`r+1` with
      probability :math:`\gamma` (``continuation``) and leaves with probability
      :math:`1-\gamma`. The list ends at rank n.

    Hence the exact marginals (:meth:`click_probabilities`):

    .. math::  P(E_r) = \prod_{j<r} \gamma\,(1 - \alpha_j s_j), \qquad
               P(C_r) = \alpha_r\,P(E_r), \qquad
               P(\text{satisfied}) = \sum_r \alpha_r s_r P(E_r).

    Position bias comes from :math:`P(E_r)` falling with r. Each document is clicked at most
    once per page.

    Dwell time of a click (ms) is log-normal:
    ``1000 * exp(log(median_s) + dwell_sigma * Z)``, ``Z ~ Normal(0, 1)``, with
    ``median_s = sat_dwell_median_s`` (default 90 s) for a satisfying click and
    ``unsat_dwell_median_s`` (default 10 s) otherwise, capped at ``max_dwell_s`` (so that a
    click never opens a gap of 30 minutes inside a session). With the defaults about 99% of
    satisfying clicks and about 1.4% of other clicks dwell at least 30 s.

    The per-user propensity ``b`` is the random effect that makes users differ (drawn by the
    traffic generator from ``Normal(0, propensity_sd)``).
    """

    attractiveness: tuple[float, ...] = (0.05, 0.20, 0.40, 0.65, 0.85)
    satisfaction: tuple[float, ...] = (0.0, 0.15, 0.35, 0.60, 0.85)
    continuation: float = 0.8
    sat_dwell_median_s: float = 90.0
    unsat_dwell_median_s: float = 10.0
    dwell_sigma: float = 0.5
    max_dwell_s: float = 1200.0
    _logits: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_probs("attractiveness", self.attractiveness, open_interval=True)
        _check_probs("satisfaction", self.satisfaction, open_interval=False)
        if not 0.0 <= self.continuation <= 1.0:
            raise InvalidParameterError(
                f"ClickModel.continuation must lie in [0, 1]; got {self.continuation}"
            )
        for name in ("sat_dwell_median_s", "unsat_dwell_median_s", "max_dwell_s"):
            if not getattr(self, name) > 0:
                raise InvalidParameterError(f"ClickModel.{name} must be > 0")
        if self.dwell_sigma < 0:
            raise InvalidParameterError("ClickModel.dwell_sigma must be >= 0")
        object.__setattr__(self, "_logits", tuple(_logit(a) for a in self.attractiveness))

    def params(self) -> dict[str, object]:
        """The parameters as plain JSON-ready values (for a manifest)."""
        return {
            "model": "dbn-cascade",
            "attractiveness_by_grade": list(self.attractiveness),
            "satisfaction_by_grade": list(self.satisfaction),
            "continuation": self.continuation,
            "sat_dwell_median_s": self.sat_dwell_median_s,
            "unsat_dwell_median_s": self.unsat_dwell_median_s,
            "dwell_sigma": self.dwell_sigma,
            "max_dwell_s": self.max_dwell_s,
        }

    def _grade_index(self, grades: Sequence[int]) -> np.ndarray:
        g = np.asarray(grades, dtype=np.int64).reshape(-1)
        if g.size and (g.min() < 0 or g.max() > 4):
            raise InvalidParameterError(f"grades must be integers 0..4; got {list(grades)}")
        return g

    def alpha(self, grades: Sequence[int], propensity: float = 0.0) -> np.ndarray:
        """Attractiveness :math:`\\alpha_r` of each shown document for a user."""
        g = self._grade_index(grades)
        logits = np.asarray(self._logits)[g] + float(propensity)
        return 1.0 / (1.0 + np.exp(-logits))

    def click_probabilities(self, grades: Sequence[int], propensity: float = 0.0) -> np.ndarray:
        """Exact marginal click probability at each rank, :math:`\\alpha_r P(E_r)`."""
        a = self.alpha(grades, propensity)
        s = np.asarray(self.satisfaction)[self._grade_index(grades)]
        examine = np.ones(len(a))
        for r in range(1, len(a)):
            examine[r] = examine[r - 1] * self.continuation * (1.0 - a[r - 1] * s[r - 1])
        return a * examine

    def _dwell_ms(self, z: float, satisfied: bool) -> float:
        median = self.sat_dwell_median_s if satisfied else self.unsat_dwell_median_s
        seconds = min(math.exp(math.log(median) + self.dwell_sigma * z), self.max_dwell_s)
        return float(round(seconds * 1000.0))

    def alpha_by_grade(self, propensity: float = 0.0) -> list[float]:
        """Attractiveness of a document of each grade 0..4 for a user with this propensity."""
        return [1.0 / (1.0 + math.exp(-(lg + propensity))) for lg in self._logits]

    def simulate(self, grades: Sequence[int], rng: np.random.Generator,
                 propensity: float = 0.0) -> PageOutcome:
        """Simulate one user on one page whose shown documents have these grades.

        Draws, per examined rank: one uniform for the click; after a click one uniform for
        satisfaction and one normal for the dwell; then, unless satisfied, one uniform for
        continuing. An empty list (a zero-result page) draws nothing and has no clicks.
        """
        for g in grades:
            if g not in (0, 1, 2, 3, 4):
                raise InvalidParameterError(f"grades must be integers 0..4; got {list(grades)}")
        alpha = self.alpha_by_grade(float(propensity))
        sat_p = self.satisfaction
        clicks: list[Click] = []
        for r, g in enumerate(grades):
            if rng.random() < alpha[g]:
                sat = bool(rng.random() < sat_p[g])
                clicks.append(Click(r + 1, self._dwell_ms(float(rng.standard_normal()), sat)))
                if sat:
                    return PageOutcome(clicks, True)
            if rng.random() >= self.continuation:
                break
        return PageOutcome(clicks, False)

    def simulate_batch(
        self, grades: np.ndarray, rng: np.random.Generator,
        propensity: np.ndarray | float = 0.0,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vectorised :meth:`simulate` over many pages (same model, different draw order).

        ``grades`` is an (n_pages, k) integer array; use -1 for empty slots after the end of a
        shorter list. ``propensity`` is a scalar or one value per page. Returns boolean arrays
        ``clicked`` and ``satisfied`` (n_pages, k) and float ``dwell_ms`` (NaN where no click).
        """
        g = np.asarray(grades, dtype=np.int64)
        if g.ndim != 2:
            raise InvalidParameterError(f"grades must be 2-D (pages x ranks); got {g.ndim}-D")
        if g.size and (g.max() > 4 or g.min() < -1):
            raise InvalidParameterError("grades must be 0..4, or -1 for an empty slot")
        n, k = g.shape
        present = g >= 0
        gi = np.where(present, g, 0)
        b = np.broadcast_to(np.asarray(propensity, dtype=float), (n,))
        alpha = 1.0 / (1.0 + np.exp(-(np.asarray(self._logits)[gi] + b[:, None])))
        sat_p = np.asarray(self.satisfaction)[gi]
        u = rng.random((3, n, k))
        z = rng.standard_normal((n, k))
        clicked = np.zeros((n, k), dtype=bool)
        satisfied = np.zeros((n, k), dtype=bool)
        active = np.ones(n, dtype=bool)
        for r in range(k):
            active &= present[:, r]
            c = active & (u[0, :, r] < alpha[:, r])
            sat = c & (u[1, :, r] < sat_p[:, r])
            clicked[:, r] = c
            satisfied[:, r] = sat
            active &= ~sat & (u[2, :, r] < self.continuation)
        median = np.where(satisfied, self.sat_dwell_median_s, self.unsat_dwell_median_s)
        seconds = np.minimum(np.exp(np.log(median) + self.dwell_sigma * z), self.max_dwell_s)
        dwell = np.where(clicked, np.round(seconds * 1000.0), np.nan)
        return clicked, satisfied, dwell


DEFAULT_CLICK_MODEL = ClickModel()


def simulate_clicks(grades: Sequence[int], rng: np.random.Generator, propensity: float = 0.0,
                    model: ClickModel | None = None) -> list[Click]:
    """Clicks ``[(rank, dwell_ms), ...]`` of one user on one page (see :class:`ClickModel`)."""
    return (model or DEFAULT_CLICK_MODEL).simulate(grades, rng, propensity).clicks
