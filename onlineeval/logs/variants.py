"""Variant names as the log writes them: whole numbers or text.

The loader keeps ``searches.variant`` in its own type (kind ``label``,
:mod:`onlineeval.logs.schema`), so an argument naming a variant is compared with the log's
values in their type: for an integer column the control is ``0``, not ``"0"``; a name of the
other type is an error listing the values as the log holds them. The A/B code keys its arms
by the text of a value (``CAST(variant AS VARCHAR)``, which for a whole number is Python's
``str``); :func:`key` and :func:`value` translate between the two. The command line reads a
variant named there with the column's type (:func:`from_text`), since everything typed on a
command line is text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from onlineeval import queries
from onlineeval.errors import UnknownNameError
from onlineeval.logs.casting import INT_TYPES, base_type


def is_integer(logs: Any) -> bool:
    """Does the log write its variants as whole numbers?"""
    column_type = getattr(logs, "column_type", None)
    sql_type = column_type("searches", "variant") if callable(column_type) else None
    return sql_type is not None and base_type(sql_type) in INT_TYPES


def names(logs: Any, experiment: str | None = None) -> list[str]:
    """The texts of the variants of ``experiment`` (of the whole log when None), sorted."""
    q = queries.load("ab/variants")
    return [r[0] for r in logs.con.execute(q.render(), q.bind(experiment=experiment)).fetchall()]


def checked(logs: Any, given: Any, role: str, known: Sequence[str]) -> str:
    """:func:`key`, and an error when the log has no such variant."""
    text = key(logs, given, role, known)
    if text not in known:
        what = role if role == "variant" else f"{role} variant"
        raise UnknownNameError(f"unknown {what} {given!r}; the log's variants are: "
                               f"{shown(logs, known) or '(none)'}")
    return text


def value(logs: Any, name: str) -> Any:
    """The log's value of the variant whose text is ``name``."""
    return int(name) if is_integer(logs) else name


def shown(logs: Any, names: Sequence[str]) -> str:
    """The variants ``names`` (texts) as the log holds them, for a message."""
    return ", ".join(repr(value(logs, n)) for n in names)


def key(logs: Any, given: Any, role: str, names: Sequence[str]) -> str:
    """The text of the variant ``given`` names (``role``: the argument, for the message).

    ``given`` must have the type of the log's variant column; a value of another type is an
    error listing the log's variants ``names`` (texts) in their own type. Whether a value of
    the right type is one of them is the caller's check (it knows the units per variant).
    """
    integer = is_integer(logs)
    right_type = (isinstance(given, int) and not isinstance(given, bool)) if integer \
        else isinstance(given, str)
    if right_type:
        return str(given)
    kind = "whole numbers" if integer else "text"
    listed = shown(logs, names) or "(no variant values in the log)"
    fix = (f": pass {role}={value(logs, str(given))!r}" if str(given) in names
           else f"; pass one of them as {'an int' if integer else 'a str'}")
    raise UnknownNameError(
        f"{role}={given!r} is {'a ' + type(given).__name__}, but the log's variant column "
        f"holds {kind} ({listed}){fix}"
    )


def from_text(logs: Any, text: str | None) -> Any:
    """A variant typed on the command line, read with the type of the log's variant column:
    ``--control 0`` is the number 0 when the log writes its variants as whole numbers."""
    if text is None or not is_integer(logs):
        return text
    try:
        return int(text)
    except ValueError:
        return text  # not a number: the check names the log's values
