"""Click models fitted on logs: position bias, attractiveness, satisfaction, perplexity.

``fit(logs, model=...)`` returns a :class:`ClickModelFit`; ``compare(logs, models=...)``
fits several on a training split and scores them on the held-out pages. The models
(:data:`MODELS`) follow Chuklin, Markov & de Rijke, *Click Models for Web Search* (2015):
``ctr`` (rank CTR), ``pbm``, ``cascade``, ``dcm``, ``ubm``, ``sdbn`` and ``dbn``. The sufficient
statistics — the distinct click patterns of the pages — come from one SQL pass
(``sql/clickmodels/patterns.sql``); estimation runs in numpy on those.
"""

from onlineeval.clickmodels.compare import Comparison, compare, split_searches
from onlineeval.clickmodels.fit import ClickModelFit, Evaluation, fit, fit_patterns
from onlineeval.clickmodels.models import MODELS, ORDER
from onlineeval.clickmodels.patterns import Patterns, read_patterns

__all__ = ["MODELS", "ORDER", "ClickModelFit", "Comparison", "Evaluation", "Patterns",
           "compare", "fit", "fit_patterns", "read_patterns", "split_searches"]
