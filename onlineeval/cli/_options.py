"""Options whose name changed: the new spelling, and the old one kept as a deprecated alias.

An option is spelled as the API keyword it sets (``--n-resamples`` sets ``n_resamples=``);
tests/test_cli_api_names.py enumerates both so they cannot drift apart again. A renamed
option keeps working under its old spelling, with one warning line on stderr naming the new
one; the old spelling is left out of ``--help``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

#: old option -> new option, for every command that has it (the test checks this list)
RENAMED = {
    "--resamples": "--n-resamples",
    "--sat-dwell": "--sat-dwell-s",
    "--session-gap": "--session-gap-min",
    "--query-column": "--query",
}


class _Deprecated(argparse.Action):
    """Store the value as the new option does, after a warning naming the new spelling."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "", **kwargs: Any):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"warning: {option_string} is deprecated; use {self.new} (the same option, "
              "named as the Python keyword it sets)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed(parser: argparse.ArgumentParser | Any, new: str, **kwargs: Any) -> None:
    """Add option ``new`` (with ``kwargs`` as for ``add_argument``) and, hidden, its old
    spelling from :data:`RENAMED` as a deprecated alias."""
    old = next(o for o, n in RENAMED.items() if n == new)
    dest = new.lstrip("-").replace("-", "_")
    parser.add_argument(new, dest=dest, **kwargs)
    parser.add_argument(old, dest=dest, action=_Deprecated, new=new, type=kwargs.get("type"),
                        metavar=kwargs.get("metavar"), help=argparse.SUPPRESS)
