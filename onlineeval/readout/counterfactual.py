"""The readout's counterfactual section: the A/B's Δ as predicted from logged data.

With the two rankers' runs and the log of the ranker(s) that were shown before (or beside)
the experiment, :func:`counterfactual_part` estimates treatment − control clicks@k
(:func:`onlineeval.counterfactual.compare`), so the readout shows the counterfactual
prediction beside the offline prediction and the online result. With ten results a page,
clicks@10 is the A/B's ``clicks_per_search``: the section names that row when the readout
has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from onlineeval.formatting import plain
from onlineeval.stats.results import ComparisonResult


@dataclass(frozen=True, eq=False)
class CounterfactualSection:
    """``result.estimate`` is the counterfactual Δ = treatment run − control run of
    ``metric`` (clicks@k per page) estimated by ``estimator`` on ``source``, with its
    interval and z-test p-value; ``control_value`` and ``treatment_value`` each run's
    estimate, ``unsupported_share`` the larger of the two runs' shares of top-k slots the
    log had no observation for."""

    source: str
    metric: str
    estimator: str
    propensity_source: str
    control_value: float
    treatment_value: float
    result: ComparisonResult
    unsupported_share: float

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.name != "result"}
        out.update({k: plain(v) for k, v in self.result.to_dict().items()})
        return out


def estimate_options(logs: Any, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The options of the section's estimate: ``options`` over the defaults (estimator
    snips, and the searches column ``qid`` when the log has it, else ``query``)."""
    from onlineeval.agreement.per_query import query_column

    return {"estimator": "snips", "query": query_column(logs), **(options or {})}


def section(source: str, c: Any) -> CounterfactualSection:
    """The section of a :class:`onlineeval.counterfactual.CounterfactualComparison` made on
    the log ``source``."""
    return CounterfactualSection(
        source=source, metric=c.control.metric, estimator=c.control.estimator,
        propensity_source=c.control.propensity_source, control_value=c.control.value,
        treatment_value=c.treatment.value, result=c.result,
        unsupported_share=max(c.control.unsupported_share, c.treatment.unsupported_share))


def counterfactual_part(logs: Any, control_run: Any, treatment_run: Any,
                        options: Mapping[str, Any] | None = None) -> CounterfactualSection:
    """The section from the logging log ``logs`` and the two runs; ``options`` go to
    :func:`onlineeval.counterfactual.compare` (:func:`estimate_options`)."""
    from onlineeval.counterfactual import compare
    from onlineeval.logs.coerce import as_logs

    logs = as_logs(logs)
    return section(str(logs.source), compare(logs, control_run, treatment_run,
                                             **estimate_options(logs, options)))


def counterfactual_lines(ro: Any) -> list[str]:
    """The terminal lines of the section (none without it)."""
    from onlineeval.formatting import number, percent

    s = getattr(ro, "counterfactual", None)
    if s is None:
        return []
    r = s.result
    beside = [m for m in ro.metrics if m.metric == "clicks_per_search"]
    online = "".join(f"; A/B Δ clicks_per_search ({m.treatment}) "
                     f"{number(m.result.estimate, signed=True)}" for m in beside)
    return ["", f"counterfactual prediction of this A/B from the logged data ({s.source}): "
            f"Δ {s.metric} {number(r.estimate, signed=True)} [{number(r.ci_low, signed=True)}, "
            f"{number(r.ci_high, signed=True)}] ({percent(r.ci_level, signed=False)} CI, "
            f"{s.estimator}, propensities {s.propensity_source}; "
            f"{percent(s.unsupported_share, signed=False)} of top slots unsupported){online}"]
