"""The trec_eval measure registry: definitions, parameter syntax and value names.

A :class:`TrecMeasure` describes one trec_eval measure (family): how to compute its per-query
values from a :class:`~onlineeval.offline.ranking.Ranked`, how its parameters are written, how
its values are named and printed, and how they are summarised over queries. Every family module
registers its measures with :func:`register`; :data:`MEASURES` (an
:class:`onlineeval.registry.Registry`) finds them by name; each measure's ``order`` is its
index in ``te_trec_measures`` of trec_eval 10.0's ``measures.c``, the order lines are printed
in (:func:`ordered`); :data:`NICKNAMES` holds trec_eval's measure sets (``official``,
``all_trec``, ``set``).

Parameter syntax (``-m name.params``), as trec_eval's ``meas_init.c`` reads it
    ``cutoffs``         comma-separated integers (``P.5,7,3``); each read as C ``strtol``
                        reads it (``23.4`` -> 23), sorted ascending, must be > 0 and distinct.
                        Values are named ``P_5``, ``P_7``...
    ``float_cutoffs``   comma-separated numbers (``Rprec_mult.5.0,0.2``), sorted, distinct.
                        Values are named with two decimals: ``Rprec_mult_0.20``.
    ``floats``          an ordered list of numbers (``utility.2,-1,0,0``). The single value is
                        named ``utility`` with the defaults, ``utility_2,-1,0,0`` (the text as
                        given) when parameters are given.
    ``pairs``           ``name=value`` pairs (``ndcg.1=3,2=9,4=4.5``): gains per grade, or
                        ``p=0.8`` for rbp. Naming as for ``floats``.
    ``none``            no parameters.

Summary over queries (``meas_avg.c`` and each measure's ``calc_avg``)
    ``mean``   sum of per-query values (added in query order) / number of queries
    ``gm``     per-query value is log(max(v, 1e-5)); summary exp(mean) — the geometric mean
               with trec_eval's floor MIN_GEO_MEAN = 0.00001 (gm_map, gm_bpref)
    ``sum``    integer totals (num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret)
    ``count``  number of queries (num_q)
    ``runid``  the run's id
    ``none``   no summary line (relstring)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.ranking import Ranked
from onlineeval.registry import Registry

ParamKind = str  # "none" | "cutoffs" | "float_cutoffs" | "floats" | "pairs"

MIN_GEO_MEAN = 0.00001

# compute(ranked, params) -> one per-query array per value name, in value-name order
Compute = Callable[[Ranked, Any], list[np.ndarray]]


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure (family)."""

    name: str
    order: int                     # index in trec_eval's te_trec_measures (print order)
    compute: Compute
    params: ParamKind = "none"
    defaults: tuple[Any, ...] = ()
    summary: str = "mean"          # mean | gm | sum | count | runid | none
    value_format: str = "float"    # float | long | string
    per_query: bool = True         # printed by -q
    doc: str = ""

    def parse(self, text: str | None) -> Params:
        """Parameters from the text after the first '.', or the defaults when None."""
        return parse_params(self, text)


@dataclass(frozen=True)
class Params:
    """Parsed parameters of one measure and the names of the values they produce."""

    values: tuple[Any, ...]
    names: tuple[str, ...]
    given: bool


MEASURES: Registry[TrecMeasure] = Registry("trec_eval measure")
NICKNAMES: dict[str, tuple[str, ...]] = {}


def register(measure: TrecMeasure) -> TrecMeasure:
    """Add ``measure`` to :data:`MEASURES`."""
    MEASURES.register(measure.name, measure)
    return measure


def ordered(names: Sequence[str]) -> list[TrecMeasure]:
    """The named measures (distinct) in trec_eval's print order."""
    found = {MEASURES.canonical(n) for n in names}
    return sorted((MEASURES.get(n) for n in found), key=lambda m: m.order)


# --------------------------------------------------------------------------- parameters

_STRTOL = re.compile(r"\s*([+-]?\d+)")
_STRTOD = re.compile(r"\s*([+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?))")


def _long(text: str, measure: str) -> int:
    m = _STRTOL.match(text)
    if not m:
        raise InvalidParameterError(
            f"measure {measure!r}: cutoff {text!r} is not an integer; write e.g. {measure}.5,10"
        )
    return int(m.group(1))


def _double(text: str, measure: str) -> float:
    m = _STRTOD.match(text)
    if not m:
        raise InvalidParameterError(
            f"measure {measure!r}: parameter {text!r} is not a number"
        )
    return float(m.group(1))


def parse_params(measure: TrecMeasure, text: str | None) -> Params:
    name, kind = measure.name, measure.params
    given = text is not None
    if kind == "none":
        if given:
            raise InvalidParameterError(f"measure {name!r} takes no parameters; got {text!r}")
        return Params((), (name,), False)
    if given and text == "":
        raise InvalidParameterError(
            f"measure {name!r}: empty parameter list after '.'; drop the '.' for the defaults"
        )
    if kind == "cutoffs":
        values = (sorted(_long(t, name) for t in text.split(",")) if given
                  else list(measure.defaults))
        if values[0] <= 0:
            raise InvalidParameterError(f"measure {name!r}: cutoffs must be positive, got "
                                        f"{values[0]}")
        if len(set(values)) != len(values):
            raise InvalidParameterError(f"measure {name!r}: duplicate cutoffs in {text!r}")
        return Params(tuple(values), tuple(f"{name}_{v}" for v in values), given)
    if kind == "float_cutoffs":
        values = (sorted(_double(t, name) for t in text.split(",")) if given
                  else list(measure.defaults))
        if len(set(values)) != len(values):
            raise InvalidParameterError(f"measure {name!r}: duplicate cutoffs in {text!r}")
        return Params(tuple(values), tuple(f"{name}_{v:3.2f}" for v in values), given)
    if kind == "floats":
        values = [_double(t, name) for t in text.split(",")] if given else list(measure.defaults)
        return Params(tuple(values), (f"{name}_{text}" if given else name,), given)
    if kind == "pairs":
        if not given:
            return Params(tuple(measure.defaults), (name,), False)
        pairs = []
        for item in text.split(","):
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise InvalidParameterError(
                    f"measure {name!r}: malformed pair parameter {item!r} in {text!r}; write "
                    f"grade=gain pairs such as {name}.1=3,2=9"
                )
            pairs.append((key, _double(value, name)))
        return Params(tuple(pairs), (f"{name}_{text}",), True)
    raise AssertionError(f"unknown parameter kind {kind!r}")  # programming error, not input


def expand_names(names: Sequence[str]) -> list[str]:
    """Measure names with nicknames (``official``, ``all_trec``, ``set``) expanded."""
    out: list[str] = []
    for n in names:
        out.extend(NICKNAMES.get(n, (n,)))
    return out


# --------------------------------------------------------------------------- small helpers

def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` as float64, 0.0 where ``den`` is 0 (trec_eval leaves those values 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out
