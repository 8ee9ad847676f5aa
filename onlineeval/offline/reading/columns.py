"""The columns the engine reads from a qrels or run source, and a run's label for errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Columns:
    """The columns the engine needs, without building pandas objects for big files.

    ``qid`` and ``docno`` are pyarrow dictionary arrays (fast reader) or numpy object arrays
    of str; ``value`` is float64 scores (runs) or int64 grades (qrels); ``name`` names the
    source in errors (a path, or a label); ``runid`` is a run's id (the tag of its last line).
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
