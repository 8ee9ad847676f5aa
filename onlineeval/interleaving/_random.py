"""Turning the ``rng`` argument of randomised functions into a numpy Generator."""

from __future__ import annotations

import hashlib

import numpy as np

from onlineeval.errors import InvalidParameterError

RandomLike = np.random.Generator | int | None


def as_generator(rng: RandomLike) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator (used as is), an int seed, or None.

    None gives a fresh, unseeded generator: fine for serving, never for tests.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, int | np.integer) and not isinstance(rng, bool)):
        if rng is not None and rng < 0:
            raise InvalidParameterError(f"a seed must be a non-negative integer; got {rng}")
        return np.random.default_rng(rng)
    raise InvalidParameterError(
        f"rng must be a numpy.random.Generator, an integer seed or None; got {type(rng).__name__}"
    )


def derived_generator(seed: int, key: object) -> np.random.Generator:
    """A generator that depends only on ``seed`` and ``key`` (via SHA-256 of ``repr(key)``).

    Used so one query's coin flips, or one comparison's bootstrap, do not change when other
    queries or experiments are added or filtered out.
    """
    digest = hashlib.sha256(repr(key).encode()).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest[:8], "little")])
