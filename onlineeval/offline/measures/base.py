"""The one measure type, its parameters and the registry every measure name resolves through.

A :class:`Measure` declares everything about one measure (family): how to compute its
per-query values from a :class:`~onlineeval.offline.ranking.Ranked`, how its parameters are
written and its values named, how the values are summarised over queries, and its reference
documentation — formula, edge cases, citation and the tool it matches. Every family module
registers its measures with :func:`register`; :data:`MEASURES` (an
:class:`onlineeval.registry.Registry`) finds them by name or alias, case-insensitively.
``order`` is the print order: for trec_eval's measures the index in ``te_trec_measures`` of
trec_eval 10.0's ``measures.c``; the others print after them.

Parameter styles (``params``)
    trec_eval's ``-m name.params`` syntax, as ``meas_init.c`` reads it:

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

    and the measures beyond trec_eval:

    ``at``              rank cutoffs ``STEM@K`` (``ERR@10``, a list ``ERR@5,10``; in trec_eval
                        syntax ``ERR.10``), optional or required (``cutoff``), plus numeric
                        :class:`Option` s in parentheses (``ERR@10(gmax=4)``). Values are
                        named ``STEM@K`` (``STEM`` without a cutoff), with ``(key=value)`` for
                        options that differ from their defaults. A ``name_option`` may also
                        be written right after the stem: ``F0.5@10`` = ``F@10(beta=0.5)``,
                        named ``F0.5@10``.

Summary over queries (``summary``; ``meas_avg.c`` and each measure's ``calc_avg``)
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

MIN_GEO_MEAN = 0.00001

# compute(ranked, params.values) -> one per-query array per value name, in value-name order
Compute = Callable[[Ranked, Any], list[np.ndarray]]

TREC_EVAL_END = 1_000   # print orders from here on belong to measures beyond trec_eval

PARAM_STYLES = ("none", "cutoffs", "float_cutoffs", "floats", "pairs", "at")


@dataclass(frozen=True)
class Option:
    """A numeric option of an ``at`` measure, written ``(name=value)``."""

    name: str
    default: float | None          # None: decided from the data (documented in ``doc``)
    doc: str
    check: Callable[[float], str | None] | None = None   # an error message, or None if valid


@dataclass(frozen=True)
class Measure:
    """One measure (family): computation, parameters, naming, summary and documentation."""

    name: str
    order: int                     # print order: trec_eval's te_trec_measures index for its
    #                                measures, TREC_EVAL_END and above for the others
    compute: Compute
    title: str                     # what it is, in one line
    formula: str                   # the per-query value, in the notation of the reference
    edge_cases: str                # empty rankings, no relevant document, short lists...
    citation: str                  # where the definition comes from
    matches: str                   # the tool it matches, and how it is checked
    params: str = "none"           # one of PARAM_STYLES
    defaults: tuple[Any, ...] = ()
    param_doc: str = ""            # what the parameters mean
    cutoff: str = "optional"       # ``at`` measures: "optional" | "required"
    options: tuple[Option, ...] = ()
    stem: str = ""                 # ``at`` measures: the value-name stem (default: name)
    name_option: str | None = None  # ``at`` option that may follow the stem (F0.5@10)
    aliases: tuple[str, ...] = ()  # more names; a trailing "@" marks the NAME@K form
    summary: str = "mean"          # mean | gm | sum | count | runid | none
    value_format: str = "float"    # float | long | string
    per_query: bool = True         # printed by -q
    missing_reset: str = ""        # trec_eval -c, query missing from the run: what trec_eval
    #                                resets — "" nothing, "default" the value named like the
    #                                measure (default parameters only), "all" every value
    complete_summary: Callable[[Ranked], Any] | None = None  # the summary under -c, if not
    #                                the usual one (num_rel: trec_eval recounts the qrels)

    def __post_init__(self) -> None:
        if self.params not in PARAM_STYLES:
            raise ValueError(f"measure {self.name}: unknown parameter style {self.params!r}")

    @property
    def is_trec_eval(self) -> bool:
        """Whether this is one of trec_eval 10.0's measures."""
        return self.order < TREC_EVAL_END

    @property
    def value_stem(self) -> str:
        return self.stem or self.name

    @property
    def takes_cutoff(self) -> bool:
        """Whether ``NAME@K`` is a valid spelling of this measure."""
        return self.params in ("cutoffs", "at")

    def parse(self, text: str | None, options: dict[str, str] | None = None) -> Params:
        """Parameters from the text after the first '.' (or '@'), or the defaults when None;
        ``options``: the ``key=value`` pairs given in parentheses (``at`` measures only)."""
        if self.params == "at":
            return _parse_at(self, text, options or {})
        if options:
            raise InvalidParameterError(
                f"trec_eval measure {self.name!r} takes no options in parentheses; give its "
                f"parameters as {self.name}.PARAMS"
            )
        return _parse_trec(self, text)

    def missing_value(self, value_name: str) -> Any:
        """What trec_eval -c sets value ``value_name`` to for a query missing from the run;
        None when it keeps the value computed on the stand-in ranking."""
        if self.missing_reset == "all" or (self.missing_reset == "default"
                                           and value_name == self.name):
            return "" if self.value_format == "string" else 0
        return None


@dataclass(frozen=True)
class Params:
    """Parsed parameters of one measure and the names of the values they produce."""

    values: tuple[Any, ...]
    names: tuple[str, ...]
    given: bool


MEASURES: Registry[Measure] = Registry("trec_eval measure")
NICKNAMES: dict[str, tuple[str, ...]] = {}


def register(measure: Measure) -> Measure:
    """Add ``measure`` (and its aliases) to :data:`MEASURES`."""
    MEASURES.register(measure.name, measure, aliases=measure.aliases)
    return measure


def ordered(names: Sequence[str]) -> list[Measure]:
    """The named measures (distinct) in print order."""
    found = {MEASURES.canonical(n) for n in names}
    return sorted((MEASURES.get(n) for n in found), key=lambda m: (m.order, m.name))


def per_cutoff(score: Callable[..., np.ndarray]) -> Compute:
    """The ``compute`` of an ``at`` measure from ``score(ranked, k, **options)``."""
    def compute(ranked: Ranked, values: tuple[Any, ...]) -> list[np.ndarray]:
        return [score(ranked, k, **dict(opts)) for k, opts in values]
    return compute


# --------------------------------------------------------------------------- trec_eval syntax

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


def _parse_trec(measure: Measure, text: str | None) -> Params:
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
    # pairs
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


# --------------------------------------------------------------------------- NAME@K syntax

def _parse_at(measure: Measure, text: str | None, options: dict[str, str]) -> Params:
    stem = measure.value_stem
    declared = {o.name: o for o in measure.options}
    opts: dict[str, float | None] = {o.name: o.default for o in measure.options}
    for key, raw in options.items():
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise InvalidParameterError(
                f"measure {stem!r} has no option {key!r} (its options: {known})"
            )
        try:
            opts[key] = float(raw)
        except ValueError:
            raise InvalidParameterError(
                f"measure {stem!r}: option {key}={raw!r} must be a number"
            ) from None
    if text is None or text == "":
        if measure.cutoff == "required":
            raise InvalidParameterError(
                f"measure {stem!r} needs a cutoff, e.g. {stem}@10"
            )
        cutoffs: list[int | None] = [None]
    else:
        try:
            cutoffs = sorted({int(t) for t in text.split(",")})
        except ValueError:
            raise InvalidParameterError(
                f"measure {stem!r}: cutoffs {text!r} must be positive integers, "
                f"e.g. {stem}@10"
            ) from None
        if cutoffs[0] < 1:
            raise InvalidParameterError(
                f"measure {stem!r}: cutoffs must be positive; got {text!r}"
            )
    for key, value in opts.items():
        check = declared[key].check
        problem = check(value) if check is not None and value is not None else None
        if problem:
            raise InvalidParameterError(problem)
    shown = dict(opts)
    if measure.name_option is not None:
        stem = f"{stem}{shown.pop(measure.name_option):g}"
    suffix = ",".join(f"{k}={v:g}" for k, v in shown.items()
                      if v is not None and v != declared[k].default)
    suffix = f"({suffix})" if suffix else ""
    names = tuple(f"{stem}{'' if k is None else f'@{k}'}{suffix}" for k in cutoffs)
    values = tuple((k, tuple(opts.items())) for k in cutoffs)
    return Params(values, names, text is not None or bool(options))


# --------------------------------------------------------------------------- small helpers

def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` as float64, 0.0 where ``den`` is 0 (trec_eval leaves those values 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


# --------------------------------------------------------------------------- documentation

def trec_eval_match(pytrec: bool = True, note: str = "") -> str:
    """The ``matches`` text of a trec_eval measure (the evidence is on the reference page)."""
    text = "trec_eval 10.0, byte for byte"
    if pytrec:
        text += "; pytrec_eval-terrier per query, to 1e-12"
    return text + (f". {note}" if note else "")


def trec_eval_source(files: str, paper: str = "") -> str:
    """The ``citation`` text of a trec_eval measure: its source files (and paper)."""
    text = f"trec_eval 10.0, {files}"
    return f"{paper}; as implemented in {text}" if paper else text


@dataclass(frozen=True)
class Reference:
    """The reference documentation of a measure outside the registry (RBO compares two runs,
    not a run with judgments)."""

    name: str
    syntax: str
    title: str
    param_doc: str
    formula: str
    edge_cases: str
    citation: str
    matches: str
