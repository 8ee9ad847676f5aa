"""Click models fitted on logs: position bias, attractiveness, satisfaction, perplexity.

``fit(logs, model=...)`` returns a :class:`ClickModelFit`; ``compare(logs, models=...)``
fits several on a training split and scores them on the held-out pages. The models
(:data:`MODELS`) follow Chuklin, Markov & de Rijke, *Click Models for Web Search* (2015):
``ctr`` (rank CTR), ``pbm``, ``cascade``, ``dcm``, ``ubm``, ``sdbn`` and ``dbn``. The sufficient
statistics — the distinct click patterns of the pages — come from one SQL pass
(``sql/clickmodels/patterns.sql``); estimation runs in numpy on those.
``qrels_from_clicks(fit)`` grades (query, doc) pairs into TREC qrels;
``harvest_position_bias(logs)`` measures position bias from pairs the log shows at several
ranks (intervention harvesting). Counterfactual evaluation is :mod:`onlineeval.counterfactual`.
"""

from onlineeval.clickmodels.comparison import Comparison, compare, split_searches
from onlineeval.clickmodels.fitting import ClickModelFit, Evaluation, fit, fit_patterns
from onlineeval.clickmodels.harvest import harvest_position_bias
from onlineeval.clickmodels.judgments import Judgments, qrels_from_clicks
from onlineeval.clickmodels.models import MODELS, ORDER
from onlineeval.clickmodels.patterns import Patterns, read_patterns

__all__ = ["MODELS", "ORDER", "ClickModelFit", "Comparison", "Evaluation", "Judgments",
           "Patterns", "compare", "fit", "fit_patterns", "harvest_position_bias",
           "qrels_from_clicks", "read_patterns", "split_searches"]
