"""The ``onlineeval`` command line.

Each subcommand is one module in this package (not starting with ``_``) that defines
``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``. Commands are
discovered, so adding one means adding its module. A command line that names a command imports
only that command's module (a module's name is its command name with ``-`` as ``_``), so one
command never depends on what another command's module imports; the full list is imported for
``onlineeval -h`` and for an unknown name. Errors raised on purpose
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


def _module_names() -> list[str]:
    return [info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")]


def commands(only: str | None = None) -> dict[str, ModuleType]:
    """Every CLI subcommand module, by command name (or just ``only``'s, when it names one)."""
    names = _module_names()
    if only is not None and only.replace("-", "_") in names:
        module = importlib.import_module(f"{__name__}.{only.replace('-', '_')}")
        if module.NAME == only:
            return {only: module}
    found: dict[str, ModuleType] = {}
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        found[module.NAME] = module
    return dict(sorted(found.items()))


def _command_word(argv: Sequence[str]) -> str | None:
    """The subcommand a command line names: its first word that is not an option."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    from onlineeval import __version__

    parser = argparse.ArgumentParser(
        prog="onlineeval",
        description="Evaluate search and ranking: offline judged metrics, online click-log "
        "metrics, A/B tests, interleaving, and their agreement.",
    )
    parser.add_argument("--version", action="version", version=f"onlineeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in commands(only).items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run, _name=name)
    return parser


def _show_warning(message: Warning | str, category: type[Warning], *args: object,
                  **kwargs: object) -> None:
    print(f"warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_word(argv))
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
