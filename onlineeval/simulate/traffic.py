"""Simulated users: hash assignment, sessions, tasks, reformulations, clicks and timestamps."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime

import numpy as np
import pandas as pd

from onlineeval.errors import InvalidParameterError
from onlineeval.logs.convert.parquet import LogTables
from onlineeval.progress import Progress
from onlineeval.simulate.clickmodel import DEFAULT_CLICK_MODEL, ClickModel
from onlineeval.simulate.collection import Collection, Run

#: ``(variant, qid, rng) -> (docnos in rank order, team of each position or None)``
PageBuilder = Callable[[str, str, np.random.Generator], tuple[list[str], list[str] | None]]


def assign_variant(user_id: str, salt: str, treatment_share: float = 0.5) -> str:
    """Deterministic arm of ``user_id``: ``"treatment"`` or ``"control"``.

    ``h`` = the first 8 bytes of SHA-256 of the UTF-8 text ``f"{salt}:{user_id}"`` read as a
    big-endian unsigned integer; the user is in treatment when ``h / 2**64 < treatment_share``.
    The same user and salt always get the same arm (any machine, any Python); a different salt
    per experiment makes assignments of different experiments independent.
    """
    if not 0.0 <= treatment_share <= 1.0:
        raise InvalidParameterError(f"treatment_share must lie in [0, 1]; got {treatment_share}")
    digest = hashlib.sha256(f"{salt}:{user_id}".encode()).digest()
    h = int.from_bytes(digest[:8], "big")
    return "treatment" if h / 2.0**64 < treatment_share else "control"


@dataclass(frozen=True)
class ExperimentSpec:
    """One experiment: a name (the ``experiment`` column), its users and their split."""

    name: str
    n_users: int
    treatment_share: float = 0.5
    salt: str | None = None  # hash salt; defaults to the experiment name

    @property
    def hash_salt(self) -> str:
        return self.salt if self.salt is not None else self.name


@dataclass(frozen=True)
class TrafficConfig:
    """How simulated users search. Times are UTC; durations in seconds unless named otherwise.

    Per user: a propensity ``b ~ Normal(0, propensity_sd)`` (the click model's logit shift);
    ``1 + Poisson(sessions_per_user - 1)`` sessions whose planned starts are uniform over
    ``days`` days from ``start``. A session never starts less than ``session_gap_s`` after the
    previous one ended (so sessions derived with a 30-minute gap match ``session_id``): one
    planned too early is moved to ``session_gap_s`` plus ``Uniform(0, 1 h)`` after it.
    Sessions run to their end, so a few events fall after ``start + days`` (sessions that
    start near the end, or are moved past it). Per session:
    ``1 + Poisson(tasks_per_session - 1)`` tasks; each task picks a topic by the collection's
    popularity. A task's first search is, with probability ``p_zero_result``, the topic's
    misspelling (no results; then reformulated with probability ``p_reformulate_after_zero``,
    with the topic's second text), else the usual text (its first). After a page without a
    satisfying click the user reformulates (the topic's next text; the ranker serves the
    topic's list) with probability ``p_reformulate``; a task has at most
    ``max_reformulations`` reformulations (the one after a misspelling included).
    Timing: first click ``reaction_s`` (uniform range) + ``scan_s`` per rank down to the click
    after the page; later clicks add the previous click's dwell and ``scan_s`` per rank
    further down; the next search comes ``think_s`` (uniform range) after the last click's
    dwell ends, or, when nothing was clicked, after ``reaction_s`` plus ``scan_s`` for each
    of the first three results (a zero-result page: ``reaction_s`` only).

    Pre-period (for CUPED): with ``pre_days > 0`` each user also has
    ``Poisson(sessions_per_user * pre_days / days)`` sessions uniform over the ``pre_days``
    before ``start``; a session that starts before ``start`` is served as
    ``pre_period_variant`` (the control experience) whatever the user's arm, and its searches
    carry no ``experiment`` and no ``variant`` (NULL): the user is not in the experiment yet,
    and a search carrying them would be an exposure (see :mod:`onlineeval.abtest.units`).
    With ``pre_days = 0`` nothing changes (no extra random draws).
    """

    start: datetime = datetime(2026, 1, 5)
    days: float = 14.0
    sessions_per_user: float = 2.0
    tasks_per_session: float = 1.5
    propensity_sd: float = 0.8
    p_zero_result: float = 0.04
    p_reformulate_after_zero: float = 0.9
    p_reformulate: float = 0.5
    max_reformulations: int = 3
    k: int = 10
    reaction_s: tuple[float, float] = (1.0, 3.0)
    scan_s: float = 1.5
    think_s: tuple[float, float] = (5.0, 40.0)
    session_gap_s: float = 35 * 60.0
    pre_days: float = 0.0
    pre_period_variant: str = "control"

    def __post_init__(self) -> None:
        if self.sessions_per_user < 1 or self.tasks_per_session < 1:
            raise InvalidParameterError("sessions_per_user and tasks_per_session must be >= 1")
        if self.k < 1 or self.days <= 0 or self.propensity_sd < 0 or self.pre_days < 0:
            raise InvalidParameterError(
                "need k >= 1, days > 0, pre_days >= 0 and propensity_sd >= 0")
        for name in ("p_zero_result", "p_reformulate_after_zero", "p_reformulate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InvalidParameterError(f"TrafficConfig.{name} must lie in [0, 1]")

    def params(self) -> dict[str, object]:
        """The parameters as plain JSON-ready values (for a manifest)."""
        out = asdict(self)
        out["start"] = self.start.isoformat()
        out["reaction_s"] = list(self.reaction_s)
        out["think_s"] = list(self.think_s)
        return out


SEARCH_COLUMNS = ["search_id", "user_id", "ts", "session_id", "query", "qid", "experiment",
                  "variant", "n_results"]
RESULT_COLUMNS = ["search_id", "rank", "doc_id", "team"]
CLICK_COLUMNS = ["search_id", "rank", "doc_id", "ts", "dwell_ms"]


def ab_page_builder(runs: Mapping[str, Run], control: str, treatment: str,
                    k: int = 10) -> PageBuilder:
    """Serve the top ``k`` of the control ranker's run to control, of the treatment's to
    treatment (teams are None). Raises for a ranker name not in ``runs``."""
    for name in (control, treatment):
        if name not in runs:
            raise InvalidParameterError(
                f"unknown ranker {name!r}; known rankers: {', '.join(sorted(runs))}"
            )
    by_variant = {"control": runs[control], "treatment": runs[treatment]}

    def build(variant: str, qid: str, rng: np.random.Generator) -> tuple[list[str], None]:
        run = by_variant.get(variant)
        if run is None:
            raise InvalidParameterError(
                f"an A/B page builder serves the variants control and treatment; got {variant!r}"
            )
        return run.ranking(qid)[:k], None

    return build


def _ms(seconds: float) -> int:
    return round(seconds * 1000.0)


def simulate_experiment(
    collection: Collection, experiment: ExperimentSpec, page_builder: PageBuilder,
    rng: np.random.Generator, *, click_model: ClickModel | None = None,
    traffic: TrafficConfig | None = None, assign: Callable[[str], str] | None = None,
    id_prefix: str = "", progress: Progress | None = None,
    propensity_shift: Mapping[str, float] | None = None,
) -> LogTables:
    """Simulate ``experiment.n_users`` users searching, served by ``page_builder``.

    Users are ``f"{id_prefix}u{n:05d}"``; searches and sessions are numbered the same way
    (``s``, ``x``). ``assign(user_id) -> variant`` defaults to :func:`assign_variant` with the
    experiment's salt and share. Searches are written in time order per user; times have
    millisecond resolution. See :class:`TrafficConfig` for the behaviour and
    :class:`ClickModel` for the clicks.

    ``propensity_shift`` maps a served variant to a number added to the user's propensity on
    its pages (a known treatment effect on the logit of every click probability; the exact
    per-page click probabilities follow from :meth:`ClickModel.click_probabilities`).
    """
    model = click_model or DEFAULT_CLICK_MODEL
    cfg = traffic or TrafficConfig()
    if experiment.n_users < 0:
        raise InvalidParameterError(f"n_users must be >= 0; got {experiment.n_users}")
    if assign is None:
        salt, share = experiment.hash_salt, experiment.treatment_share

        def assign(user_id: str) -> str:
            return assign_variant(user_id, salt, share)

    shifts = dict(propensity_shift or {})
    searches: list[tuple] = []
    results: list[tuple] = []
    clicks: list[tuple] = []
    n_search = n_session = 0
    qids = collection.qids
    cdf = np.cumsum(collection.popularity)
    cdf[-1] = 1.0
    span_s = cfg.days * 86400.0
    gap_ms = _ms(cfg.session_gap_s)
    scan_ms = cfg.scan_s * 1000.0
    for u in range(experiment.n_users):
        user_id = f"{id_prefix}u{u:05d}"
        variant = assign(user_id)
        propensity = float(rng.normal(0.0, cfg.propensity_sd))
        n_sessions = 1 + int(rng.poisson(cfg.sessions_per_user - 1.0))
        planned = np.sort(rng.uniform(0.0, span_s, size=n_sessions))
        if cfg.pre_days > 0:
            n_pre = int(rng.poisson(cfg.sessions_per_user * cfg.pre_days / cfg.days))
            pre = np.sort(rng.uniform(-cfg.pre_days * 86400.0, 0.0, size=n_pre))
            planned = np.concatenate([pre, planned])
        last_end: int | None = None
        for start_s in planned:
            # clock: integer milliseconds since cfg.start
            t = _ms(float(start_s))
            if last_end is not None and t < last_end + gap_ms:
                t = last_end + gap_ms + _ms(float(rng.uniform(0.0, 3600.0)))
            served = variant if t >= 0 else cfg.pre_period_variant
            # what the log says: pre-period pages are not exposures of the experiment
            exp_name, logged = (experiment.name, variant) if t >= 0 else (None, None)
            user_b = propensity + shifts.get(served, 0.0)
            n_session += 1
            session_id = f"{id_prefix}x{n_session:06d}"
            n_tasks = 1 + int(rng.poisson(cfg.tasks_per_session - 1.0))
            for _ in range(n_tasks):
                qid = qids[min(int(np.searchsorted(cdf, rng.random(), side="right")),
                               len(qids) - 1)]
                texts = collection.texts[qid]
                zero = bool(rng.random() < cfg.p_zero_result)
                attempt = 0
                while True:
                    n_search += 1
                    search_id = f"{id_prefix}s{n_search:06d}"
                    if zero:
                        searches.append((search_id, user_id, t, session_id,
                                         collection.misspelling[qid], qid, exp_name,
                                         logged, 0))
                        end = t + _ms(float(rng.uniform(*cfg.reaction_s)))
                        zero = False
                        again = bool(rng.random() < cfg.p_reformulate_after_zero)
                    else:
                        text = texts[attempt % len(texts)]
                        docs, teams = page_builder(served, qid, rng)
                        searches.append((search_id, user_id, t, session_id, text, qid,
                                         exp_name, logged, len(docs)))
                        for r, d in enumerate(docs):
                            results.append((search_id, r + 1, d,
                                            teams[r] if teams is not None else None))
                        outcome = model.simulate(collection.grades(qid, docs), rng, user_b)
                        clock = t + _ms(float(rng.uniform(*cfg.reaction_s)))
                        seen = 0
                        for c in outcome.clicks:
                            clock += round(scan_ms * (c.rank - seen))
                            seen = c.rank
                            dwell = int(c.dwell_ms)
                            clicks.append((search_id, c.rank, docs[c.rank - 1], clock, dwell))
                            clock += dwell
                        if not outcome.clicks:
                            clock += round(scan_ms * min(len(docs), 3))
                        end = clock
                        again = (not outcome.satisfied
                                 and rng.random() < cfg.p_reformulate)
                    attempt += 1
                    t = end + _ms(float(rng.uniform(*cfg.think_s)))
                    if not again or attempt > cfg.max_reformulations:
                        break
                last_end = t
        if progress is not None:
            progress.update()
    origin = pd.Timestamp(cfg.start)
    search_df = pd.DataFrame(searches, columns=SEARCH_COLUMNS)
    click_df = pd.DataFrame(clicks, columns=CLICK_COLUMNS)
    for df in (search_df, click_df):
        df["ts"] = (origin + pd.to_timedelta(df["ts"].astype("int64"), unit="ms")).astype(
            "datetime64[ms]")
    return LogTables(search_df, pd.DataFrame(results, columns=RESULT_COLUMNS), click_df)
