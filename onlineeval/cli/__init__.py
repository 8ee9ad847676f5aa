"""The ``onlineeval`` command line.

Each subcommand is one module in this package (not starting with ``_``) that defines
``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``. Commands are
discovered, so adding one means adding its module. A command line that names a command imports
only that command's module (a module's name is its command name with ``-`` as ``_``), so one
command never depends on what another command's module imports; the full list is imported for
``onlineeval -h`` and for an unknown name. Errors raised on purpose
(:class:`~onlineeval.errors.OnlineEvalError`) print as one line on stderr, exit status 2; so
does DuckDB running out of memory, with what to change. The global options ``--memory-limit``
and ``--threads`` (before the command) set ``ONLINEEVAL_MEMORY_LIMIT`` and
``ONLINEEVAL_THREADS`` for the process, which every command's connection reads
(:func:`onlineeval.db.connect`).
"""

from __future__ import annotations

import argparse
import importlib
import os
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


#: global options that take a value (given before the command)
_GLOBAL_VALUED = ("--memory-limit", "--threads")
#: the variables they set (onlineeval.db.MEMORY_LIMIT_ENV, THREADS_ENV; named here so that
#: a command that never touches DuckDB does not import it)
_RESOURCE_ENV = ("ONLINEEVAL_MEMORY_LIMIT", "ONLINEEVAL_THREADS")


def _command_word(argv: Sequence[str]) -> str | None:
    """The subcommand a command line names: its first word that is neither an option nor the
    value of a global option."""
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a in _GLOBAL_VALUED:
            skip = True
        elif not a.startswith("-"):
            return a
    return None


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number; got {text!r}")
    return n


def _apply_resources(args: argparse.Namespace) -> None:
    """Pass the global --memory-limit / --threads to every connection of this command."""
    from onlineeval import db

    if args.memory_limit is not None:
        import duckdb

        db.set_memory_limit(duckdb.connect(), args.memory_limit, "--memory-limit")
        os.environ[db.MEMORY_LIMIT_ENV] = args.memory_limit
    if args.threads is not None:
        os.environ[db.THREADS_ENV] = str(args.threads)


def _out_of_memory(exc: BaseException) -> bool:
    # checked by name so that commands which never touch DuckDB do not import it
    return (type(exc).__name__ == "OutOfMemoryException"
            and type(exc).__module__.split(".")[0].lstrip("_") == "duckdb")


def _damaged_file(exc: BaseException) -> OnlineEvalError | None:
    """The one-line error naming the log file behind a DuckDB error met after the load (the
    views read their files lazily, so a damaged page may be found only by a metric query)."""
    if type(exc).__module__.split(".")[0].lstrip("_") != "duckdb":
        return None
    from onlineeval.logs.locate import file_error

    return file_error(exc)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    from onlineeval import __version__

    parser = argparse.ArgumentParser(
        prog="onlineeval",
        description="Evaluate search and ranking: offline judged metrics, online click-log "
        "metrics, A/B tests, interleaving, and their agreement.",
    )
    parser.add_argument("--version", action="version", version=f"onlineeval {__version__}")
    parser.add_argument("--memory-limit", metavar="SIZE", default=None,
                        help="DuckDB memory limit for the command, e.g. 4GB (default: "
                             "$ONLINEEVAL_MEMORY_LIMIT, else 80%% of RAM); larger data spills "
                             "to a temp directory")
    parser.add_argument("--threads", metavar="N", type=_positive_int, default=None,
                        help="DuckDB threads (default: $ONLINEEVAL_THREADS, else one per core)")
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
    # main may run in-process (tests, other tools): the options must not outlive the command
    before = {k: os.environ.get(k) for k in _RESOURCE_ENV}
    try:
        _apply_resources(args)
        return int(args._run(args) or 0)
    except OnlineEvalError as exc:
        print(f"onlineeval {args._name}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as exc:
        damaged = _damaged_file(exc)
        if damaged is not None:
            print(f"onlineeval {args._name}: error: {damaged}", file=sys.stderr)
            return 2
        if not _out_of_memory(exc):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        limit = os.environ.get(_RESOURCE_ENV[0], "DuckDB's default, 80% of RAM")
        print(f"onlineeval {args._name}: error: DuckDB ran out of memory ({first}) with the "
              f"memory limit {limit}. Give it more with --memory-limit (e.g. onlineeval "
              f"--memory-limit 8GB {args._name} ...) or ONLINEEVAL_MEMORY_LIMIT, or fewer "
              f"--threads (each thread needs its own working memory); what does not fit is "
              f"spilled to the temp directory", file=sys.stderr)
        return 2
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
