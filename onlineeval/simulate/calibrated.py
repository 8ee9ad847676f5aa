"""A click-traffic configuration calibrated to real search clicks (Yandex WSCD 2014 sample).

The default simulator (:class:`~onlineeval.simulate.clickmodel.ClickModel` with one user
propensity ``Normal(0, 0.8)``) makes every topic about equally clicky: its pages get a click
86% of the time and topics differ only through their judgments. Real traffic is more
heterogeneous. Measured on the 56,477 pages of the Yandex WSCD 2014 sample
(``testSample`` + ``trainSample``; 20 distinct ``query_region`` ids, each seen 197 to 23,885
times) by :func:`wscd_moments`:

- share of pages without any click: 0.3169;
- click-through rate by rank 1..10 (distinct shown results clicked / pages):
  0.3074, 0.2510, 0.1769, 0.1497, 0.1078, 0.0811, 0.0733, 0.0538, 0.0565, 0.0518
  (1.31 clicks per page, 1.9 per page with a click; the default simulator's curve is
  0.664, 0.226, 0.088, 0.049, ... with ranker s100 — far steeper);
- between-query variance of the page CTR (P(page has a click)), the variance of the 20
  per-query CTRs minus their mean binomial noise ``p(1-p)/(n-1)``: 0.02434 (sd 0.156;
  per-query CTRs range from 0.28 to 0.90; unweighted mean over queries 0.720; the default
  simulator's between-topic sd is 0.106).

What the sample cannot tell: it has no users, sessions or times, so the spread of click
propensity between users (and how strongly pages of one user are correlated) is not
identified and stays at the default simulator's ``Normal(0, 0.8)``; it has no relevance
judgments, so how fast clicks move with ranking quality is identified only indirectly (see
the caveat below). Its 20 queries are all frequent ones; the tail is not represented. Each
query was shown with 31 to 296 different result lists, so the per-query CTRs mix rankings.

The calibrated traffic (:class:`CalibratedTraffic`) keeps the cascade of
:class:`ClickModel` and gives each page the logit shift (the click model's propensity)

    b = shift + u_topic + v_user,   u_topic ~ Normal(0, query_sd),  v_user ~ Normal(0, user_sd)

Fitted (:func:`fit`: unweighted least squares, exact model moments by Gauss–Hermite
quadrature over ``u`` and ``v``) on the sample study's collection served by its ranker
``s100`` (NDCG@10 0.848) to 12 moments: the rank-CTR curve and the no-click share
(page-weighted, i.e. topics weighted by popularity, as the data's pages are) and the
between-query sd of page CTR (unweighted over topics, as over the data's queries). Five free
parameters: ``shift``, ``query_sd``, the continuation probability, a common factor ``c`` on
the default attractiveness logits (``A'_g = sigma(c * logit(A_g))``) and a common scale of
the default satisfaction probabilities. With only ``shift``, ``query_sd`` and continuation the
fit cannot make the rank curve as flat as the data's (residuals up to 0.08). The result
(:data:`CALIBRATED`): ``shift = -1.3494``, ``query_sd = 0.6684``, continuation 0.9240,
``c = 0.4483`` (attractiveness by grade 0.2108, 0.3494, 0.4547, 0.5689, 0.6852),
satisfaction by grade 0, 0.0431, 0.1006, 0.1725, 0.2443; ``user_sd = 0.8`` (default, not
identified). Residuals are all within 0.012 (:func:`expected_moments`): rank CTR 0.317,
0.239, 0.178, 0.141, 0.114, 0.081, 0.081, 0.064, 0.052, 0.051; no-click share 0.320;
between-topic sd 0.155. Caveat: the flatter attractiveness (``c < 1``) is identified only
through our collection's grades at each rank, so it is a property of this collection and
ranker as much as of Yandex users; with it, page CTR moves less with ranking quality
(s100 vs s200: 0.680 vs 0.637, default 0.861 vs 0.762).

:data:`HETEROGENEOUS` isolates the heterogeneity alone: the default click model with only
``shift`` and ``query_sd`` fitted to the no-click share and the between-query sd (exact fit:
``shift = -1.1545``, ``query_sd = 0.3276``); its rank curve stays the default's steep one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
from scipy import optimize, stats

from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.interleaving import team_draft_distribution
from onlineeval.simulate.clickmodel import ClickModel
from onlineeval.simulate.collection import Collection, Run

if TYPE_CHECKING:
    from onlineeval.logs.convert.parquet import LogTables

K = 10
_GH_NODES = 32


@dataclass(frozen=True)
class ClickMoments:
    """Click moments of a result-page sample (see :func:`wscd_moments`)."""

    pages: int
    queries: int
    no_click_share: float
    position_ctr: tuple[float, ...]
    query_ctr_mean: float
    between_query_var: float

    @property
    def between_query_sd(self) -> float:
        return float(np.sqrt(max(self.between_query_var, 0.0)))


#: :func:`wscd_moments` of the Yandex WSCD 2014 sample (testSample + trainSample, as in
#: PyClick's examples; the reference copy in tests/data/yandex_wscd is a slice of it), 56,477 pages, 20 queries.
YANDEX_WSCD = ClickMoments(
    pages=56477, queries=20, no_click_share=0.3169077677,
    position_ctr=(0.3073817660, 0.2510048338, 0.1769392850, 0.1496892540, 0.1077606813,
                  0.0810772527, 0.0733395896, 0.0538095154, 0.0565008765, 0.0518087009),
    query_ctr_mean=0.7198755538, between_query_var=0.0243404438,
)

_RECORD = re.compile(r"^(\S+)\t([^:]*?)\s*:(.*)$", re.S)


def parse_wscd(text: str, source: str = "<text>") -> list[tuple[str, list[str], list[str]]]:
    """Records ``(query_id, shown docs in rank order, clicked ids in click order)``.

    Format (Yandex WSCD sample): records separated by ``;``, each
    ``<query_id>\\t<doc1>,...,<docN> : <click>, <click>, ...``; empty records are skipped.
    """
    out = []
    for i, raw in enumerate(text.split(";")):
        rec = raw.strip()
        if not rec:
            continue
        m = _RECORD.match(rec)
        if m is None:
            raise InputError(
                f"{source}: record {i + 1} is not '<query>\\t<docs> : <clicks>': {rec[:60]!r}"
            )
        docs = [d.strip() for d in m.group(2).split(",") if d.strip()]
        clicks = [c.strip() for c in m.group(3).split(",") if c.strip()]
        out.append((m.group(1), docs, clicks))
    return out


def wscd_moments(texts: Iterable[str], k: int = K) -> ClickMoments:
    """Click moments of WSCD-format texts (concatenated).

    - ``no_click_share``: pages whose click list is empty / pages (a click on an id that is
      not among the shown documents counts as a click: it is a click on the page);
    - ``position_ctr[r]``: pages where the document shown at rank r+1 was clicked at least
      once / pages (repeat clicks count once);
    - per query q with n_q pages, ``p_q`` = pages with a click / n_q; ``query_ctr_mean`` is the
      unweighted mean of ``p_q``; ``between_query_var`` = sample variance (ddof=1) of the
      ``p_q`` minus the mean of ``p_q (1 - p_q) / (n_q - 1)`` (the unbiased estimate of each
      ``p_q``'s binomial variance), i.e. the spread of true per-query click probability.
      Queries with a single page are left out of this term (no noise estimate); needs >= 2
      such queries.
    """
    records = [r for t in texts for r in parse_wscd(t)]
    if not records:
        raise InputError("no WSCD records to measure")
    pos = np.zeros(k)
    clicked_pages: dict[str, list[int]] = {}
    for q, docs, clicks in records:
        hit = set(clicks)
        for r, d in enumerate(docs[:k]):
            if d in hit:
                pos[r] += 1
        c = clicked_pages.setdefault(q, [0, 0])
        c[0] += bool(clicks)
        c[1] += 1
    n = len(records)
    counts = np.array([v for v in clicked_pages.values() if v[1] >= 2], dtype=float)
    if len(counts) < 2:
        raise InputError("between-query variance needs at least two queries with >= 2 pages")
    p = counts[:, 0] / counts[:, 1]
    noise = np.mean(p * (1 - p) / (counts[:, 1] - 1))
    return ClickMoments(
        pages=n, queries=len(clicked_pages),
        no_click_share=sum(1 for _, _, c in records if not c) / n,
        position_ctr=tuple(float(x) for x in pos / n),
        query_ctr_mean=float(p.mean()),
        between_query_var=float(p.var(ddof=1) - noise),
    )


@dataclass(frozen=True)
class CalibratedTraffic:
    """Page propensity ``shift + u_topic + v_user`` on a :class:`ClickModel` (module doc).

    ``query_sd = 0`` and ``shift = 0`` with the default click model is the default simulator
    (:data:`DEFAULT_TRAFFIC`).
    """

    click_model: ClickModel = field(default_factory=ClickModel)
    shift: float = 0.0
    query_sd: float = 0.0
    user_sd: float = 0.8

    def __post_init__(self) -> None:
        if not (self.query_sd >= 0 and self.user_sd >= 0 and np.isfinite(self.shift)):
            raise InvalidParameterError(
                "CalibratedTraffic needs query_sd >= 0, user_sd >= 0 and a finite shift; got "
                f"{self.query_sd}, {self.user_sd}, {self.shift}")

    def params(self) -> dict[str, object]:
        """JSON-ready parameters."""
        return {"click_model": self.click_model.params(), "shift": self.shift,
                "query_sd": self.query_sd, "user_sd": self.user_sd}

    def topic_effects(self, n_topics: int, rng: np.random.Generator) -> np.ndarray:
        """One ``u_topic`` per topic: the ``Normal(0, query_sd)`` quantiles at
        ``(i + 0.5) / n`` in a random order (stratified, so the realised spread is the
        model's whatever the seed; only which topic gets which effect is random)."""
        q = stats.norm.ppf((np.arange(n_topics) + 0.5) / n_topics) * self.query_sd
        return rng.permutation(q)


#: the fitted configuration (see the module docstring and :func:`fit`)
CALIBRATED = CalibratedTraffic(
    ClickModel(attractiveness=(0.2108, 0.3494, 0.4547, 0.5689, 0.6852),
               satisfaction=(0.0, 0.0431, 0.1006, 0.1725, 0.2443), continuation=0.9240),
    shift=-1.3494, query_sd=0.6684, user_sd=0.8,
)
#: the default click model with only the heterogeneity fitted: ``fit(YANDEX_WSCD, ...,
#: free=("shift", "query_sd"), use=("no_click_share", "between_query_sd"))`` (exact fit;
#: its rank-CTR curve stays the default's steep one: 0.452, 0.176, 0.073, 0.043, ...)
HETEROGENEOUS = CalibratedTraffic(ClickModel(), shift=-1.1545, query_sd=0.3276, user_sd=0.8)
#: the default simulator expressed as a CalibratedTraffic
DEFAULT_TRAFFIC = CalibratedTraffic()


# -- exact model moments --------------------------------------------------------------------

def _cascade(model: ClickModel, grades: np.ndarray, b: np.ndarray) -> tuple[np.ndarray,
                                                                                 np.ndarray]:
    """Exact P(click at rank r) (..., k) and P(no click) (...) for full lists ``grades``
    (k,) and propensities ``b`` (any shape).

    P(C_r) is :meth:`ClickModel.click_probabilities`; without a click the user never stops
    satisfied, so P(no click) = sum_{r<k} prod_{j<=r}(1 - a_j) g^(r-1)(1 - g)
    + prod_{j<=k}(1 - a_j) g^(k-1).
    """
    g = model.continuation
    with np.errstate(over="ignore"):  # exp overflow -> a = 0, the right limit
        a = 1.0 / (1.0 + np.exp(-(np.asarray(model._logits)[grades] + b[..., None])))
    s = np.asarray(model.satisfaction)[grades]
    k = grades.size
    stay = g * (1.0 - a * s)
    exam = np.concatenate([np.ones(b.shape + (1,)), np.cumprod(stay, axis=-1)[..., :-1]], -1)
    miss = np.cumprod(1.0 - a, axis=-1)
    r = np.arange(1, k + 1)
    leave = np.where(r < k, g ** (r - 1) * (1 - g), g ** (k - 1))
    return a * exam, (miss * leave).sum(-1)


def expected_moments(traffic: CalibratedTraffic, collection: Collection, run: Run,
                     k: int = K) -> ClickMoments:
    """Exact moments of ``traffic`` on ``collection`` served by ``run`` (expectation over the
    topic and user effects, Gauss–Hermite quadrature): rank CTR and no-click share weighted
    by topic popularity; ``query_ctr_mean`` and ``between_query_var`` unweighted over topics
    (variance of the topic's page CTR over topics and ``u_topic``)."""
    z, w = np.polynomial.hermite_e.hermegauss(_GH_NODES)
    w = w / w.sum()
    b = traffic.shift + traffic.query_sd * z[:, None] + traffic.user_sd * z[None, :]
    pos = np.zeros(k)
    ctr_u = np.zeros((len(collection.qids), z.size))  # topic CTR given u_topic
    for t, (qid, pop) in enumerate(zip(collection.qids, collection.popularity, strict=True)):
        grades = np.asarray(collection.grades(qid, run.ranking(qid)[:k]))
        if grades.size != k:
            raise InvalidParameterError(f"topic {qid} has {grades.size} < k={k} results")
        pc, p0 = _cascade(traffic.click_model, grades, b)
        pos += pop * np.einsum("i,j,ijr->r", w, w, pc)
        ctr_u[t] = (1.0 - p0) @ w
    mean_t = float((ctr_u @ w).mean())
    var = float(((ctr_u - mean_t) ** 2 @ w).mean())
    no_click = float(1.0 - collection.popularity @ (ctr_u @ w))
    return ClickMoments(pages=0, queries=len(collection.qids), no_click_share=no_click,
                        position_ctr=tuple(float(x) for x in pos), query_ctr_mean=mean_t,
                        between_query_var=var)


#: the parameters :func:`fit` can free, and the moment groups it can match
FIT_PARAMETERS = ("shift", "query_sd", "continuation", "attractiveness", "satisfaction")
FIT_MOMENTS = ("position_ctr", "no_click_share", "between_query_sd")


def _residuals(m: ClickMoments, target: ClickMoments, use: Sequence[str]) -> np.ndarray:
    parts = {
        "position_ctr": np.asarray(m.position_ctr) - np.asarray(target.position_ctr),
        "no_click_share": [m.no_click_share - target.no_click_share],
        "between_query_sd": [m.between_query_sd - target.between_query_sd],
    }
    return np.concatenate([parts[u] for u in use])


def _sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


def _logit_of(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return float(np.log(p / (1 - p)))


def fit(target: ClickMoments, collection: Collection, run: Run,
        base: CalibratedTraffic = DEFAULT_TRAFFIC, free: Sequence[str] = FIT_PARAMETERS,
        use: Sequence[str] = FIT_MOMENTS) -> tuple[CalibratedTraffic, np.ndarray]:
    """Fit the ``free`` parameters of ``base`` to the ``use`` moments of ``target``.

    Unweighted least squares (Levenberg–Marquardt) on the residuals model minus target of:
    ``position_ctr`` (10 values), ``no_click_share``, ``between_query_sd`` (the sd of page
    CTR over queries / topics), model moments from :func:`expected_moments`. Free parameters:
    ``shift``; ``query_sd``; ``continuation``; ``attractiveness`` (one factor ``c`` on the
    logits of ``base``'s attractiveness by grade); ``satisfaction`` (one scale on ``base``'s
    satisfaction by grade, setting its largest value). The others stay as in ``base``;
    ``user_sd`` always does (the data has no users). Needs at least as many residuals as
    free parameters. Returns the fitted traffic and its residuals.
    """
    unknown = [f for f in free if f not in FIT_PARAMETERS] + [
        u for u in use if u not in FIT_MOMENTS]
    if unknown:
        raise InvalidParameterError(
            f"fit: unknown parameter or moment {unknown}; parameters: {FIT_PARAMETERS}, "
            f"moments: {FIT_MOMENTS}")
    n_res = sum(10 if u == "position_ctr" else 1 for u in use)
    if not free or n_res < len(free):
        raise InvalidParameterError(
            f"fit needs 1..{n_res} free parameters for these moments; got {len(free)}")
    cm = base.click_model
    base_logit = np.asarray(cm._logits)
    base_sat = np.asarray(cm.satisfaction)
    start = {"shift": base.shift, "query_sd": float(np.log(max(base.query_sd, 0.5))),
             "continuation": _logit_of(cm.continuation), "attractiveness": 0.0,
             "satisfaction": _logit_of(float(base_sat.max()))}

    def build(x: np.ndarray) -> CalibratedTraffic:
        v = dict(zip(free, (float(t) for t in x), strict=True))
        kw: dict[str, object] = {}
        if "continuation" in v:
            kw["continuation"] = _sigmoid(v["continuation"])
        if "attractiveness" in v:
            kw["attractiveness"] = tuple(
                _sigmoid(float(np.exp(v["attractiveness"]) * lg)) for lg in base_logit)
        if "satisfaction" in v and base_sat.max() > 0:
            kw["satisfaction"] = tuple(
                float(t) for t in base_sat / base_sat.max() * _sigmoid(v["satisfaction"]))
        return replace(base, click_model=replace(cm, **kw) if kw else cm,
                       shift=v.get("shift", base.shift),
                       query_sd=float(np.exp(v["query_sd"])) if "query_sd" in v
                       else base.query_sd)

    def res(x: np.ndarray) -> np.ndarray:
        return _residuals(expected_moments(build(x), collection, run), target, use)

    sol = optimize.least_squares(res, x0=np.array([start[f] for f in free]), method="lm")
    return build(sol.x), res(sol.x)


# -- page simulation ------------------------------------------------------------------------

@dataclass(frozen=True)
class PageLists:
    """Per topic, the lists a page can show: grades (L, k), a mask of team A's positions
    (L, k) and the probability of each list (L,). One list of probability 1 for a ranker;
    the exact team-draft distribution for an interleaved pair."""

    grades: tuple[np.ndarray, ...]
    is_a: tuple[np.ndarray, ...]
    probs: tuple[np.ndarray, ...]

    @classmethod
    def ranker(cls, collection: Collection, run: Run, k: int = K) -> PageLists:
        g = [np.asarray(collection.grades(q, run.ranking(q)[:k]))[None, :]
             for q in collection.qids]
        return cls._checked(g, [np.ones_like(x, dtype=bool) for x in g],
                            [np.ones(1) for _ in g], k)

    @classmethod
    def team_draft(cls, collection: Collection, run_a: Run, run_b: Run,
                   k: int = K) -> PageLists:
        gs, masks, ps = [], [], []
        for q in collection.qids:
            dist = team_draft_distribution(run_a.ranking(q)[:k], run_b.ranking(q)[:k], k=k)
            gs.append(np.array([collection.grades(q, [str(d) for d in m.docs])
                                for m, _ in dist]))
            masks.append(np.array([[t == "A" for t in m.teams] for m, _ in dist]))
            ps.append(np.array([p for _, p in dist]))
        return cls._checked(gs, masks, ps, k)

    @classmethod
    def _checked(cls, gs: Sequence[np.ndarray], masks: Sequence[np.ndarray],
                 ps: Sequence[np.ndarray], k: int) -> PageLists:
        for g in gs:
            if g.ndim != 2 or g.shape[1] != k:
                raise InvalidParameterError(f"every topic needs k={k} results to show")
        return cls(tuple(gs), tuple(masks), tuple(ps))


def simulate_pages(lists: PageLists, popularity: np.ndarray, topic_effect: np.ndarray,
                   users: np.ndarray, traffic: CalibratedTraffic,
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Simulate one page per entry of ``users`` (integer codes 0..U-1).

    Each page: a topic by ``popularity``, a list from that topic's :class:`PageLists`,
    propensity ``shift + topic_effect[topic] + v_user`` with ``v_user ~ Normal(0, user_sd)``
    drawn once per user, clicks from ``ClickModel.simulate_batch``. Returns per page
    ``topic``, ``clicks`` (results clicked), ``clicked`` (pages x k: which ranks were
    clicked), ``credit_a`` and ``credit_b`` (clicked results of team A / B; for a single
    ranker everything is team A).
    """
    users = np.asarray(users, dtype=np.int64)
    n = users.size
    topic = rng.choice(len(lists.grades), size=n, p=popularity)
    k = lists.grades[0].shape[1]
    grades = np.empty((n, k), dtype=np.int64)
    is_a = np.empty((n, k), dtype=bool)
    for q in np.unique(topic):
        rows = np.flatnonzero(topic == q)
        pick = rng.choice(lists.probs[q].size, size=rows.size, p=lists.probs[q])
        grades[rows] = lists.grades[q][pick]
        is_a[rows] = lists.is_a[q][pick]
    v = rng.normal(0.0, traffic.user_sd, int(users.max()) + 1 if n else 0)
    b = traffic.shift + np.asarray(topic_effect)[topic] + (v[users] if n else 0.0)
    clicked, _, _ = traffic.click_model.simulate_batch(grades, rng, b)
    return {"topic": topic, "clicks": clicked.sum(1), "clicked": clicked,
            "credit_a": (clicked & is_a).sum(1), "credit_b": (clicked & ~is_a).sum(1)}


def calibrated_ab_log(collection: Collection, arms: Mapping[str, Run],
                      traffic: CalibratedTraffic, n_users: int, days: int,
                      rng: np.random.Generator, *, experiment: str = "calibrated",
                      pages_mean: float = 4.0, stay_days: float = 3.0,
                      start: str = "2026-01-05") -> LogTables:
    """An A/B log (searches, results, clicks) of ``n_users`` users over ``days`` days whose
    clicks follow ``traffic``: the same per-topic and per-user propensities as
    :func:`simulate_pages`, so a user's pages are correlated and topics differ as in the
    Yandex sample when ``traffic`` is :data:`CALIBRATED`.

    ``arms`` maps each variant to the ranker it serves (the same ranker twice: an A/A log).
    User ``u`` (``user_id`` ``u000001``...) is in the arm :func:`~onlineeval.simulate.traffic.
    assign_variant` gives it (salt ``experiment``, equal shares over the arms in order; two
    arms only), arrives on a uniform day and has ``1 + Poisson(pages_mean - 1)`` pages, each
    ``Poisson(stay_days)`` whole days after arrival (pages past the last day dropped), at a
    uniform time of that day. Each page shows the arm's top 10 for its topic; a click row
    per clicked result, ten seconds after the page.
    """
    import pandas as pd

    from onlineeval.logs.convert.parquet import LogTables
    from onlineeval.simulate.traffic import assign_variant

    names = list(arms)
    if len(names) != 2:
        raise InvalidParameterError(f"arms must map two variants to rankers; got {names}")
    ids = np.array([f"u{u + 1:06d}" for u in range(n_users)], dtype=object)
    in_second = np.array([assign_variant(u, experiment) == "treatment" for u in ids])
    first = rng.integers(0, days, n_users)
    users = np.repeat(np.arange(n_users), 1 + rng.poisson(pages_mean - 1.0, n_users))
    day = first[users] + rng.poisson(stay_days, users.size)
    users, day = users[day < days], day[day < days]
    ts = (pd.Timestamp(start) + pd.to_timedelta(day, unit="D")
          + pd.to_timedelta(rng.integers(0, 86_400_000, users.size), unit="ms"))
    topic_effect = traffic.topic_effects(len(collection.qids), rng)
    frames: dict[str, list[pd.DataFrame]] = {"searches": [], "results": [], "clicks": []}
    for arm, (variant, run) in enumerate(arms.items()):
        pages = np.flatnonzero(in_second[users] == bool(arm))
        lists = PageLists.ranker(collection, run)
        sim = simulate_pages(lists, collection.popularity, topic_effect, users[pages],
                             traffic, rng)
        sid = np.array([f"{experiment}-{variant}-{i}" for i in range(pages.size)],
                       dtype=object)
        qids = np.asarray(collection.qids, dtype=object)[sim["topic"]]
        frames["searches"].append(pd.DataFrame({
            "search_id": sid, "user_id": ids[users[pages]], "ts": ts[pages],
            "query": qids, "experiment": experiment, "variant": variant}))
        top = np.array([run.ranking(q)[:K] for q in collection.qids], dtype=object)
        frames["results"].append(pd.DataFrame({
            "search_id": np.repeat(sid, K), "rank": np.tile(np.arange(1, K + 1), sid.size),
            "doc_id": top[sim["topic"]].reshape(-1)}))
        page, rank = np.nonzero(sim["clicked"])
        frames["clicks"].append(pd.DataFrame({
            "search_id": sid[page], "rank": rank + 1, "doc_id": top[sim["topic"][page], rank],
            "ts": ts[pages][page] + pd.Timedelta(seconds=10)}))
    return LogTables(*(pd.concat(frames[t], ignore_index=True)
                       for t in ("searches", "results", "clicks")))


def study_world(manifest: Mapping[str, object]) -> tuple[Collection, dict[str, Run]]:
    """Collection and rankers of a sample study (``sample_logs/manifest.json``)."""
    from onlineeval.simulate.interleaving import study_rankers

    return study_rankers(manifest)
