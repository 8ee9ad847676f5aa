"""Per-query CTR of one A/B experiment, for the within-experiment offline-online agreement.

The SQL (``sql/agreement/per_query_ab_ctr.sql``) counts searches and clicked searches per
query and arm from the session-free facts view (:func:`onlineeval.online.facts.click_facts`,
where ``has_click`` is defined); the CTR is divided here as the metric registry defines it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onlineeval import queries
from onlineeval.online.definitions import METRICS
from onlineeval.online.facts import click_facts

if TYPE_CHECKING:
    import pandas as pd

    from onlineeval.logs import Logs


def ab_ctr_per_query(logs: Logs, experiment: str, control: str, treatment: str,
                     query: str = "query") -> pd.DataFrame:
    """Per query value of the searches column ``query``: ``qid, searches_control,
    clicked_control, searches_treatment, clicked_treatment`` and ``ctr_delta`` = CTR of the
    treatment arm minus CTR of the control arm (NaN when an arm has no search of the query,
    and on the last row, ``qid`` null, which counts the searches without a query value).
    """
    q = queries.load("agreement/per_query_ab_ctr")
    df = logs.con.execute(
        q.render(query=[query], source=[click_facts(logs)]),
        q.bind(experiment=experiment, control=control, treatment=treatment),
    ).df()
    ctr = METRICS.get("ctr")
    arm = {arm: ctr.value({ctr.numerator: df[f"clicked_{arm}"],
                           ctr.denominator: df[f"searches_{arm}"]})
           for arm in ("control", "treatment")}
    df["ctr_delta"] = (arm["treatment"] - arm["control"]).where(df["qid"].notna())
    return df
