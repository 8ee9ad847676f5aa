"""The ``onlineeval`` command line.

Each subcommand is one module in this package (not starting with ``_``) that defines
``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``. Commands are
discovered, so adding one means adding its module. Errors raised on purpose
(:class:`~onlineeval.errors.OnlineEvalError`) print as one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

from onlineeval.errors import OnlineEvalError


def commands() -> dict[str, ModuleType]:
    """Every CLI subcommand module, by command name."""
    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found[module.NAME] = module
    return dict(sorted(found.items()))


def build_parser() -> argparse.ArgumentParser:
    from onlineeval import __version__

    parser = argparse.ArgumentParser(
        prog="onlineeval",
        description="Evaluate search and ranking: offline judged metrics, online click-log "
        "metrics, A/B tests, interleaving, and their agreement.",
    )
    parser.add_argument("--version", action="version", version=f"onlineeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in commands().items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run, _name=name)
    return parser


def _show_warning(message: Warning | str, category: type[Warning], *args: object,
                  **kwargs: object) -> None:
    print(f"warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return 2
    warnings.showwarning = _show_warning  # type: ignore[assignment]
    try:
        return int(args._run(args) or 0)
    except OnlineEvalError as exc:
        print(f"onlineeval {args._name}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
