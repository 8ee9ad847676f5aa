"""Exceptions raised by onlineeval.

Every error a user can trigger is an :class:`OnlineEvalError`; the CLI prints its message
(without a traceback) and exits with status 2. Messages follow one shape: what was required,
what was received, and how to fix it.
"""

from __future__ import annotations


class OnlineEvalError(Exception):
    """Base class of every error onlineeval raises on purpose."""


class InputError(OnlineEvalError, ValueError):
    """Input data (a log, qrels or run file, a DataFrame) is unusable as given."""


class SchemaError(InputError):
    """A required column is missing, a column mapping names a column that does not exist,
    or a column cannot be read as the type it must have."""


class LogFormatError(InputError):
    """A text file has a malformed line. The message names the file and the line number."""

    def __init__(self, path: object, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class StrictModeError(InputError):
    """Rows would have been excluded, and strict mode turns every exclusion into an error."""


class UnknownNameError(OnlineEvalError, ValueError):
    """A metric, measure, variant, format or other name is not known."""


class InvalidParameterError(OnlineEvalError, ValueError):
    """An argument has an invalid value (out of range, wrong type, inconsistent with another)."""


class OutputError(OnlineEvalError):
    """An output cannot be written: the path is also an input, is a directory where a file is
    expected (or the reverse), is being written by another process, already exists, or the
    operating system refused the write (no space, read-only, permission). Nothing was left
    under the output's name."""


class ExcludedRowsWarning(UserWarning):
    """Rows of a loaded log were left out of the clean views (``load_logs`` counts them by
    table and reason in ``Logs.report``)."""


class SampleRatioMismatchWarning(UserWarning):
    """The units per variant of an A/B experiment do not fit the expected split: assignment
    or logging is broken, and the readout's results are not trustworthy until the cause is
    found (:func:`onlineeval.abtest` warns with the check's message)."""
