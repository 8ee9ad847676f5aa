"""Online metrics from click logs, computed in DuckDB SQL (``sql/online/``).

* :func:`online_metrics` — CTR, abandonment, zero-result rate, session success, ... per group.
* :func:`position_ctr` — CTR per rank.
* :func:`top_queries`, :func:`queries_over_time` — traffic summaries.
* :func:`attribute_events` — each downstream event (purchase, ...) with the search it is
  attributed to (docs/conversions.md).
* :func:`search_facts` — the per-search facts view every metric (and the A/B code) sums.
* :data:`METRICS` — the metric registry (definitions, edge cases, required columns).
"""

from onlineeval.namespace import lazy_submodules
from onlineeval.online.attribution import attribute_events
from onlineeval.online.definitions import METRICS, OnlineMetric
from onlineeval.online.facts import search_facts
from onlineeval.online.metrics import metric_sums, online_metrics
from onlineeval.online.positions import position_ctr
from onlineeval.online.traffic import queries_over_time, top_queries

__all__ = [
    "METRICS", "OnlineMetric", "attribute_events", "online_metrics", "position_ctr", "queries_over_time",
    "metric_sums", "search_facts", "top_queries",
]

__getattr__ = lazy_submodules(__name__)  # onlineeval.namespace
