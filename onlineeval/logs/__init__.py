"""Click logs: the canonical schema, loading from files or DataFrames, validation.

``load_logs`` returns a :class:`Logs` whose DuckDB connection holds the clean views
``searches``, ``results`` and ``clicks``; ``Logs.report`` is the :class:`LoadReport`.
``as_logs`` is what every function taking a log accepts (a ``Logs``, a path, a dict of
tables).
"""

from onlineeval.logs.coerce import as_logs
from onlineeval.logs.load import Logs, load_logs
from onlineeval.logs.report import LoadReport
from onlineeval.namespace import lazy_submodules

__all__ = ["LoadReport", "Logs", "as_logs", "load_logs"]

__getattr__ = lazy_submodules(__name__)  # onlineeval.namespace
