"""The columns the engine reads from a qrels or run source, and a run's label for errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


class TextList:
    """A text column held as the Python ``list`` of str it came in (the keys of a dict).

    Converting millions of str to an arrow array costs more than the engine's whole work on
    them; the engine reads this column through Python's own (cached) string hashes instead and
    makes an arrow array only if it needs one (:meth:`to_arrow`). The values are validated
    text (see ``fast_frames``).

    ``source`` is the ``{qid: {docno: value}}`` dict the values are the keys of, when the list
    holds all of its keys in its order: the engine then looks judgments up in it directly
    (exact, and a dict cannot judge a docno twice for one qid).
    """

    __slots__ = ("_arrow", "source", "values")

    def __init__(self, values: list[str], source: Any = None) -> None:
        self.values = values
        self.source = source
        self._arrow: Any = None

    def __len__(self) -> int:
        return len(self.values)

    def to_arrow(self) -> Any:
        """The values as a pyarrow string array (made once)."""
        if self._arrow is None:
            import pyarrow as pa

            self._arrow = pa.array(self.values, type=pa.string())
        return self._arrow


@dataclass(frozen=True)
class Columns:
    """The columns the engine needs, without building pandas objects for big files.

    ``qid`` is a pyarrow array (dictionary encoded from the fast reader) or a numpy object
    array of str; ``docno`` one of those or a :class:`TextList`; ``value`` is float64 scores
    (runs) or int64 grades (qrels); ``name`` names the source in errors (a path, or a label);
    ``runid`` is a run's id (the tag of its last line).
    """

    qid: Any
    docno: Any
    value: np.ndarray
    name: str
    runid: str = ""

    def __len__(self) -> int:
        return len(self.value)


@dataclass(frozen=True)
class Labelled:
    """A run ``source`` with the name its errors carry when it is a DataFrame or dict.

    Lets a caller that takes several runs (``compare``) say which one is bad, through
    ``evaluate`` and ``prepare``, without reading the run early; a file is named by its
    path and line whatever the label.
    """

    source: Any
    label: str


def unlabelled(source: Any) -> tuple[Any, str]:
    """(source, the name its errors use): a :class:`Labelled` run's label, else "run"."""
    if isinstance(source, Labelled):
        return source.source, source.label
    return source, "run"
