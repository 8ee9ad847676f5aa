"""The ``onlineeval`` command line.

Each subcommand is one module in this package (not starting with ``_``) that defines
``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``. Commands are
discovered, so adding one means adding its module. A command line that names a command imports
only that command's module (a module's name is its command name with ``-`` as ``_``), so one
command never depends on what another command's module imports; the full list is imported for
``onlineeval -h`` and for an unknown name.

No command ends in a traceback. Errors raised on purpose
(:class:`~onlineeval.errors.OnlineEvalError`), operating-system errors (naming the file and the
cause), DuckDB errors about the data (a damaged file, a value that does not convert) and DuckDB
running out of memory (with what to change) print as one line on stderr, exit status 2. Any
other exception is a bug: one line asking to report it, exit status 1 (``ONLINEEVAL_DEBUG=1``
prints the traceback too). Ctrl-C and SIGTERM stop the command with one line and exit status
130 / 143, after temporary outputs are removed (:mod:`onlineeval.interrupt`,
:mod:`onlineeval.atomic`). The global options ``--memory-limit``
and ``--threads`` (before the command) set ``ONLINEEVAL_MEMORY_LIMIT`` and
``ONLINEEVAL_THREADS`` for the process, which every command's connection reads
(:func:`onlineeval.db.connect`). Likewise ``--engine spark`` (with ``--spark-master`` and
``--spark-conf k=v``) sets ``ONLINEEVAL_ENGINE`` and friends, which ``load_logs`` reads: the
log is validated by DuckDB and every query after loading runs on Spark.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import signal
import sys
import traceback
import warnings
from collections.abc import Sequence
from types import ModuleType

from onlineeval import interrupt
from onlineeval.errors import OnlineEvalError
from onlineeval.terminal import escape, one_line


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
_GLOBAL_VALUED = ("--memory-limit", "--threads", "--engine", "--spark-master", "--spark-conf")
#: the variables they set (onlineeval.db.MEMORY_LIMIT_ENV, THREADS_ENV; named here so that
#: a command that never touches DuckDB does not import it)
_RESOURCE_ENV = ("ONLINEEVAL_MEMORY_LIMIT", "ONLINEEVAL_THREADS", "ONLINEEVAL_ENGINE",
                 "ONLINEEVAL_SPARK_MASTER", "ONLINEEVAL_SPARK_CONF")


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
    from onlineeval import engines

    if args.engine is not None:
        os.environ[engines.ENGINE_ENV] = args.engine
    if args.spark_master is not None:
        os.environ[engines.SPARK_MASTER_ENV] = args.spark_master
    if args.spark_conf:
        bad = [c for c in args.spark_conf if "=" not in c or "\n" in c]
        if bad:
            from onlineeval.errors import InvalidParameterError

            raise InvalidParameterError(f"--spark-conf takes KEY=VALUE; got {bad[0]!r}")
        os.environ[engines.SPARK_CONF_ENV] = "\n".join(args.spark_conf)


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
    parser.add_argument("--engine", choices=("duckdb", "spark"), default=None,
                        help="where the queries after loading a log run (default: "
                             "$ONLINEEVAL_ENGINE, else duckdb); spark needs "
                             "onlineeval[spark]. The log is validated by DuckDB either way")
    parser.add_argument("--spark-master", metavar="URL", default=None,
                        help="Spark master for --engine spark (default: local[2])")
    parser.add_argument("--spark-conf", metavar="KEY=VALUE", action="append", default=[],
                        help="a Spark setting for --engine spark (repeatable)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in commands(only).items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run, _name=name)
    return parser


def _show_warning(message: Warning | str, category: type[Warning], *args: object,
                  **kwargs: object) -> None:
    print(f"warning: {escape(str(message), keep=chr(10))}", file=sys.stderr)


#: set to 1 to see the traceback of an internal error
DEBUG_ENV = "ONLINEEVAL_DEBUG"


def _duckdb_kind(exc: BaseException) -> str | None:
    """The class name of a DuckDB exception (None for other exceptions); checked by name so
    that commands which never touch DuckDB do not import it."""
    if type(exc).__module__.split(".")[0].lstrip("_") != "duckdb":
        return None
    return type(exc).__name__


#: DuckDB errors about the data (a damaged or unreadable file, a value that does not convert)
#: rather than about onlineeval's own SQL; shown as one line, exit status 2
_DUCKDB_DATA_ERRORS = frozenset({
    "IOException", "InvalidInputException", "ConversionException", "OutOfRangeException",
    "HTTPException", "PermissionException", "SerializationException",
})


def _first_line(exc: BaseException) -> str:
    return one_line(str(exc)) or type(exc).__name__


def _out_of_memory_text(name: str, exc: BaseException) -> str:
    limit = os.environ.get(_RESOURCE_ENV[0], "DuckDB's default, 80% of RAM")
    return (f"DuckDB ran out of memory ({_first_line(exc)}) with the memory limit {limit}. "
            f"Give it more with --memory-limit (e.g. onlineeval --memory-limit 8GB {name} ...) "
            f"or ONLINEEVAL_MEMORY_LIMIT, or fewer --threads (each thread needs its own "
            f"working memory); what does not fit is spilled to the temp directory")


def _error_text(name: str, exc: BaseException) -> tuple[str, int]:
    """The one line the user sees for an exception that ended command ``name``, and the exit
    status: 2 for a problem with the input, the output or the machine, 1 for a bug."""
    if isinstance(exc, OnlineEvalError):
        # our own messages; a few (strict mode's listing) are a block of lines on purpose
        return escape(str(exc).strip(), keep="\n"), 2
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename is not None else ""
        from onlineeval.atomic import os_error_text

        return one_line(f"{where}{os_error_text(exc)}"), 2
    kind = _duckdb_kind(exc)
    if kind == "OutOfMemoryException":
        return _out_of_memory_text(name, exc), 2
    if kind is not None:
        # a damaged log file met by a query after the load: the views read their files
        # lazily, and DuckDB's message may not name the file
        from onlineeval.logs.locate import file_error

        damaged = file_error(exc)
        if damaged is not None:
            return one_line(str(damaged)), 2
    if kind in _DUCKDB_DATA_ERRORS:
        return f"DuckDB could not read the data: {_first_line(exc)}", 2
    return (f"internal error ({type(exc).__name__}: {_first_line(exc)}). This is a bug in "
            f"onlineeval; please report it with the command line that caused it "
            f"(set {DEBUG_ENV}=1 to print the traceback)"), 1


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; every exception becomes one line and an exit status."""
    try:
        _apply_resources(args)
        return int(args._run(args) or 0)
    except BrokenPipeError:
        return 0
    except Exception as exc:
        # DuckDB reports a signal that lands during a query as its own error
        if interrupt.received() is not None:
            raise interrupt.Interrupted(interrupt.received()) from None
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            traceback.print_exc()
        text, status = _error_text(args._name, exc)
        print(f"onlineeval {args._name}: error: {text}", file=sys.stderr)
        return status


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    name = _command_word(argv)
    # main may run in-process (tests, other tools): the options must not outlive the command
    before = {k: os.environ.get(k) for k in _RESOURCE_ENV}
    try:
        # from the start: Ctrl-C while the command's libraries load is no traceback either
        with interrupt.handling():
            parser = build_parser(name)
            args = parser.parse_args(argv)
            if not getattr(args, "_run", None):
                parser.print_help(sys.stderr)
                return 2
            name = args._name
            warnings.showwarning = _show_warning  # type: ignore[assignment]
            return _run(args)
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        who = f"onlineeval {escape(name)}" if name else "onlineeval"
        print(f"{who}: interrupted by {signal.Signals(signum).name}; unfinished output was "
              "removed", file=sys.stderr)
        return interrupt.exit_status(signum)
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
