"""Measure names as users write them, resolved against the registry: :func:`parse_measure`.

A name is read as

* a registered name or alias without parameters: ``map``, ``AP``, ``MRR``, ``R-prec``,
  ``ndcg``, ``11pt`` (= ``11pt_avg``), ``pr_curve`` (= ``iprec_at_recall``), ``bpref``;
* ``NAME@K`` (``K`` a positive integer or a comma-separated list): ``P@10``, ``R@100``,
  ``nDCG@10`` (= trec_eval ``ndcg_cut_10``, linear gain), ``AP@10`` / ``MAP@10`` (=
  ``map_cut_10``), ``success@1``, ``RR@10`` / ``MRR@10``, ``nDCG_exp@10``, ``ERR@10``...; a
  measure with a ``name_option`` also takes its value after the stem (``F0.5@10``);
* trec_eval's ``-m`` syntax ``NAME.PARAMS`` (``P.5,10``, ``ndcg.1=3,2=9``) or its printed
  value names ``NAME_PARAM`` (``P_10``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``);
* options in parentheses after a measure that has options: ``ERR@10(gmax=4)``,
  ``F@10(beta=2)``.

Lookups are case-insensitive. Values carry canonical names: trec_eval's value names for
trec_eval measures (``nDCG@10`` → ``ndcg_cut_10``, ``AP`` → ``map``) and ``STEM@K`` for the
others (``MRR@10`` → ``RR@10``, ``F@10`` → ``F1@10``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

import onlineeval.offline.measures  # noqa: F401  (registers every measure)
from onlineeval.errors import InvalidParameterError
from onlineeval.offline.measures.base import MEASURES, Measure, Params
from onlineeval.offline.ranking import Ranked

__all__ = ["MeasureSpec", "parse_measure"]

_OPTIONS = re.compile(r"^(?P<head>[^()]*)\((?P<opts>[^()]*)\)$")
_AT = re.compile(r"^(?P<base>[^@]+)@(?P<params>[^@]*)$")
_UNDERSCORE = re.compile(r"^(?P<base>.+?)_(?P<params>[0-9]+(?:\.[0-9]+)?)$")
_CUTOFFS = re.compile(r"^[0-9]+(?:,[0-9]+)*$")


@dataclass(frozen=True)
class MeasureSpec:
    """A parsed measure name: the registry entry, its parameters and its value names."""

    text: str
    measure: Measure
    params: Params

    @property
    def names(self) -> tuple[str, ...]:
        return self.params.names

    def compute(self, ranked: Ranked) -> list[np.ndarray]:
        return list(self.measure.compute(ranked, self.params.values))


def _parse_options(text: str, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InvalidParameterError(
                f"measure {name!r}: option {item!r} is not key=value; write e.g. "
                f"ERR@10(gmax=4) or F@10(beta=2)"
            )
        out[key.strip().lower()] = value.strip()
    return out


def _stem_with_value(base: str) -> tuple[Measure, str, str] | None:
    """(measure, option, value) when ``base`` is a stem followed by the value of the
    measure's ``name_option`` (``F0.5`` for F's beta); else None."""
    for _, measure in MEASURES.items():
        if measure.name_option is None:
            continue
        m = re.fullmatch(re.escape(measure.value_stem) + r"(?P<value>[0-9]+(?:\.[0-9]+)?)",
                         base, flags=re.IGNORECASE)
        if m is not None:
            return measure, measure.name_option, m.group("value")
    return None


def parse_measure(name: str) -> MeasureSpec:
    """Resolve one measure name (see the module docstring) to a :class:`MeasureSpec`.

    Raises
    ------
    UnknownNameError
        The name is not a measure (the message suggests the closest one).
    InvalidParameterError
        The parameters or options do not fit the measure.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidParameterError(f"a measure name must be a non-empty string; got {name!r}")
    text = name.strip()
    options: dict[str, str] = {}
    m = _OPTIONS.match(text)
    if m:
        text = m.group("head").strip()
        options = _parse_options(m.group("opts"), name)

    measure: Measure
    params_text: str | None = None
    if text in MEASURES and not text.endswith("@"):
        measure = MEASURES.get(text)
    elif (m := _AT.match(text)) is not None:
        base, params_text = m.group("base"), m.group("params")
        if not _CUTOFFS.match(params_text) or any(int(c) < 1 for c in params_text.split(",")):
            raise InvalidParameterError(
                f"measure {name!r}: the cutoff after '@' must be a positive integer (or a "
                f"comma-separated list), e.g. {base}@10"
            )
        if (named := _stem_with_value(base)) is not None:
            measure, option, value = named
            if option in options:
                raise InvalidParameterError(
                    f"measure {name!r}: {option} is given twice (in the name and as an option)"
                )
            options[option] = value
        elif f"{base}@" in MEASURES:
            measure = MEASURES.get(f"{base}@")
        else:
            measure = MEASURES.get(base)
        if not measure.takes_cutoff:
            raise InvalidParameterError(
                f"measure {name!r}: {measure.name!r} does not take a rank cutoff '@k'"
                + ("" if measure.params == "none" else
                   f"; give its parameters as {measure.name}.PARAMS")
            )
    elif "." in text and text.split(".", 1)[0] in MEASURES:
        base, params_text = text.split(".", 1)
        measure = MEASURES.get(base)
    elif (m := _UNDERSCORE.match(text)) is not None and m.group("base") in MEASURES:
        measure, params_text = MEASURES.get(m.group("base")), m.group("params")
    else:
        MEASURES.get(text)  # raises UnknownNameError with a did-you-mean hint
        raise AssertionError("unreachable: the lookup above raises")
    params = measure.parse(params_text, options)
    return MeasureSpec(text=name, measure=measure, params=params)
