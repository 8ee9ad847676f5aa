"""A small name → object registry with aliases and did-you-mean errors.

Every family of named things (offline measures, online and A/B metrics, statistical tests,
multiple-testing corrections, log formats) is found through one of these, so the CLI, the API,
the docs and the tests all read the same list. (CLI commands are found the same way by module
discovery: see :mod:`onlineeval.cli`.)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Generic, TypeVar

from onlineeval.errors import InvalidParameterError, UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps canonical names (and aliases) to objects; lookups are case-insensitive."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._keys: dict[str, str] = {}  # lower-cased name or alias -> canonical name

    def register(self, name: str, obj: T, aliases: tuple[str, ...] = ()) -> T:
        for key in (name, *aliases):
            low = key.lower()
            if low in self._keys and self._keys[low] != name:
                raise InvalidParameterError(
                    f"{self.kind} name {key!r} is already registered for {self._keys[low]!r}"
                )
            self._keys[low] = name
        self._items[name] = obj
        return obj

    def get(self, name: str) -> T:
        canonical = self._keys.get(str(name).lower())
        if canonical is None:
            known = sorted(self._items)
            close = difflib.get_close_matches(str(name).lower(), list(self._keys), n=1)
            hint = f"; did you mean {self._keys[close[0]]!r}?" if close else "."
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}{hint} Known {self.kind}s: {', '.join(known)}"
            )
        return self._items[canonical]

    def canonical(self, name: str) -> str:
        self.get(name)
        return self._keys[str(name).lower()]

    def __contains__(self, name: object) -> bool:
        return str(name).lower() in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._items.items())
