"""Simulated downstream events (purchases, add-to-cart) that follow clicks on good results."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from onlineeval.errors import InvalidParameterError
from onlineeval.logs.convert.parquet import LogTables
from onlineeval.simulate.collection import Collection

#: the canonical columns of the optional ``events`` log table, in file order
EVENT_COLUMNS = ["user_id", "ts", "type", "value", "search_id", "doc_id"]
#: the largest grade of the simulated collections (grades 0..4)
MAX_GRADE = 4


@dataclass(frozen=True)
class EventModel:
    r"""What happens after a click: a purchase or an add-to-cart, later, perhaps with revenue.

    Every click on a result of grade :math:`g` (0..4; unjudged counts as 0) independently
    leads to

    - a ``purchase`` with probability
      :math:`p(g) = \text{purchase\_max} \cdot (2^g - 1) / (2^4 - 1)` (the NDCG gain scaled;
      a grade-0 result is never bought), with a value (revenue) drawn log-normal:
      ``round(value_median * exp(value_sigma * Z), 2)``, ``Z ~ Normal(0, 1)``, at least 0.01;
    - an ``add_to_cart`` with probability :math:`\text{cart\_max} \cdot (2^g - 1) / 15`,
      without a value (NULL). Carts and purchases are drawn independently of each other.

    Each event happens ``D`` seconds after its click, ``D`` a mixture of two exponentials:
    with probability ``fast_share`` mean ``fast_mean_s`` (in the session), else mean
    ``slow_mean_s`` (later; with the defaults 11% of all events come more than a day after
    the click, so attribution windows matter). Times are whole milliseconds, at least 1 ms
    after the click.

    What the event log knows about the origin (drawn per event): with probability
    ``share_search_id`` the search and the document (``search_id``, ``doc_id``), with
    probability ``share_doc_id`` only the document (``doc_id``), otherwise only the user
    (both NULL), so every attribution rule (the clicked search, the last click on the
    document, the session fallback) is exercised.
    """

    purchase_max: float = 0.15
    cart_max: float = 0.30
    value_median: float = 40.0
    value_sigma: float = 0.8
    fast_share: float = 0.7
    fast_mean_s: float = 600.0
    slow_mean_s: float = 86400.0
    share_search_id: float = 0.6
    share_doc_id: float = 0.25

    def __post_init__(self) -> None:
        for name in ("purchase_max", "cart_max", "fast_share", "share_search_id",
                     "share_doc_id"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InvalidParameterError(
                    f"EventModel.{name} must lie in [0, 1]; got {getattr(self, name)}")
        if self.share_search_id + self.share_doc_id > 1.0:
            raise InvalidParameterError(
                "EventModel.share_search_id + share_doc_id must be <= 1 (the rest carry only "
                f"the user); got {self.share_search_id} + {self.share_doc_id}")
        for name in ("value_median", "fast_mean_s", "slow_mean_s"):
            if not getattr(self, name) > 0:
                raise InvalidParameterError(f"EventModel.{name} must be > 0")
        if not self.value_sigma >= 0:
            raise InvalidParameterError("EventModel.value_sigma must be >= 0")

    def probability(self, event_type: str, grade: int) -> float:
        """P(an event of this type after a click on a result of ``grade``)."""
        top = {"purchase": self.purchase_max, "add_to_cart": self.cart_max}[event_type]
        return top * (2.0 ** grade - 1.0) / (2.0 ** MAX_GRADE - 1.0)

    def params(self) -> dict[str, object]:
        """The parameters as plain JSON-ready values (for a manifest), with the resulting
        probabilities by grade."""
        return {
            "model": "grade-gain",
            **asdict(self),
            "purchase_probability_by_grade": [self.probability("purchase", g)
                                              for g in range(MAX_GRADE + 1)],
            "add_to_cart_probability_by_grade": [self.probability("add_to_cart", g)
                                                 for g in range(MAX_GRADE + 1)],
        }


DEFAULT_EVENT_MODEL = EventModel()


def simulate_events(collection: Collection, tables: LogTables, rng: np.random.Generator,
                    model: EventModel | None = None) -> pd.DataFrame:
    """The events that follow the clicks of ``tables`` (see :class:`EventModel`).

    A pure function of the clicks and ``rng``: the other tables are not touched, so they stay
    the same whether events are drawn or not. Returns :data:`EVENT_COLUMNS` (``ts`` as
    ``datetime64[ms]``, ``value`` NaN where NULL), sorted by user and time.
    """
    model = model or DEFAULT_EVENT_MODEL
    clicks = tables.clicks[["search_id", "doc_id", "ts"]].merge(
        tables.searches[["search_id", "user_id", "qid"]], on="search_id", how="left",
        validate="many_to_one", sort=False)
    grades = np.array([collection.qrels.get(q, {}).get(d, 0)
                       for q, d in zip(clicks["qid"], clicks["doc_id"], strict=True)],
                      dtype=np.int64)
    click_ms = clicks["ts"].astype("datetime64[ms]").astype("int64").to_numpy()
    parts = []
    for kind in ("purchase", "add_to_cart"):
        p = np.array([model.probability(kind, g) for g in range(MAX_GRADE + 1)])[grades]
        hit = np.flatnonzero(rng.random(len(grades)) < p)
        n = hit.size
        fast = rng.random(n) < model.fast_share
        delay_s = rng.exponential(1.0, n) * np.where(fast, model.fast_mean_s, model.slow_mean_s)
        if kind == "purchase":
            value = np.maximum(np.round(
                model.value_median * np.exp(model.value_sigma * rng.standard_normal(n)), 2),
                0.01)
        else:
            value = np.full(n, np.nan)
        track = rng.random(n)
        has_search = track < model.share_search_id
        has_doc = track < model.share_search_id + model.share_doc_id
        delay_ms = np.maximum(np.ceil(delay_s * 1000.0), 1.0).astype(np.int64)
        parts.append(pd.DataFrame({
            "user_id": clicks["user_id"].to_numpy()[hit],
            "ts": click_ms[hit] + delay_ms,
            "type": kind,
            "value": value,
            "search_id": np.where(has_search, clicks["search_id"].to_numpy()[hit], None),
            "doc_id": np.where(has_doc, clicks["doc_id"].to_numpy()[hit], None),
        }))
    out = pd.concat(parts, ignore_index=True)
    out["ts"] = pd.to_datetime(out["ts"], unit="ms").astype("datetime64[ms]")
    out["value"] = out["value"].astype("float64")
    return out.sort_values(["user_id", "ts"], kind="stable", ignore_index=True)[EVENT_COLUMNS]

