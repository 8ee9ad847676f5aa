"""The one check of a probability level: ``alpha``, ``confidence``, ``power``, ``srm_alpha``.

Every public function taking such a level checks it here first, before any work, so a bad
value gets the same one-line message whichever function it was given to
(``tests/test_levels.py`` finds those functions by introspection and holds them to it).
"""

from __future__ import annotations

import numbers
from typing import Any

from onlineeval.errors import InvalidParameterError


def level_message(name: str, value: Any) -> str:
    """The message for an invalid level (also used where a file, not an argument, held it)."""
    return f"{name} must be a number in (0, 1); got {value!r}"


def check_level(value: Any, name: str = "alpha") -> float:
    """``value`` as a float strictly between 0 and 1, else :class:`InvalidParameterError`.

    A bool is refused (``True`` would pass as 1 in arithmetic), as are text such as ``"0.05"``
    (the API takes numbers; the CLI converts its options), NaN and the infinities. numpy
    scalars are accepted.
    """
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not 0.0 < float(value) < 1.0):
        raise InvalidParameterError(level_message(name, value))
    return float(value)
