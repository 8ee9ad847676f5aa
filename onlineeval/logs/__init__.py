"""Click logs: the canonical schema, loading from files or DataFrames, validation.

``load_logs`` returns a :class:`Logs` whose DuckDB connection holds the clean views
``searches``, ``results`` and ``clicks``; ``Logs.report`` is the :class:`LoadReport`.
"""

from onlineeval.logs.load import Logs, load_logs
from onlineeval.logs.report import LoadReport
from onlineeval.namespace import lazy_submodules

__all__ = ["LoadReport", "Logs", "load_logs"]

__getattr__ = lazy_submodules(__name__)  # onlineeval.namespace
