"""Fixtures shared by every test folder."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def _cache_bytecode_outside_the_tree() -> None:
    """Where the environment forbids bytecode files (PYTHONDONTWRITEBYTECODE, set on machines
    that keep ``__pycache__`` out of their checkouts), keep them in a cache under the temp
    directory instead (``sys.pycache_prefix``, which mirrors each source's absolute path), for
    this process and, through the environment, for the xdist workers and the subprocesses the
    tests start. Without it every worker compiled the package and the tests again at each run
    (collection took 12-15 CPU seconds a worker instead of 6). Python checks a cached file
    against its source's mtime and size, as in ``__pycache__``; nothing lands in the tree.
    """
    if not sys.dont_write_bytecode or sys.pycache_prefix is not None:
        return
    user = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    prefix = os.path.join(tempfile.gettempdir(), f"onlineeval-pycache-{user}")
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_cache_bytecode_outside_the_tree()


class FakeTTY:
    """A stderr stand-in that says it is a terminal and keeps what was written."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    @property
    def text(self) -> str:
        return "".join(self.parts)


@pytest.fixture(scope="session")
def load_script() -> Callable[[Path], Any]:
    """Import a script of the repository that is not part of the package (a bench, a
    docs tool) from its path, as a module named after its file."""
    import importlib.util

    def load(path: Path) -> Any:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def tty_stderr(monkeypatch: pytest.MonkeyPatch) -> Callable[[], FakeTTY]:
    """Call it inside the test to replace sys.stderr by a fake terminal.

    (Patching in the fixture itself would not last: pytest's output capture re-installs its own
    sys.stderr when the test body starts.)
    """

    def install() -> FakeTTY:
        tty = FakeTTY()
        monkeypatch.setattr("sys.stderr", tty)
        return tty

    return install


# --- import orders in fresh interpreters -----------------------------------------------------
#
# Tests of the package's namespace run import orders each in an interpreter that has imported
# no onlineeval module. Starting one per order paid numpy, pandas, scipy.stats and matplotlib
# (four fifths of a subprocess's import time) for each; here one interpreter imports those
# third-party packages and forks a child per order, in which the order starts from no
# onlineeval module as before (checked before each fork).

_FORK_EACH = r"""
import json, os, sys, traceback
codes, preload = json.loads(sys.stdin.read())
for name in preload:
    __import__(name)
outs = []
for code in codes:
    assert not [m for m in sys.modules if m.split(".")[0] == "onlineeval"], code
    sys.stdout.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.dup2(write, 1)
        try:
            exec(compile(code, "<import order>", "exec"), {"__name__": "__main__"})
            sys.stdout.flush()
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        out = pipe.read()
    if os.waitpid(pid, 0)[1] != 0:
        sys.exit(f"failed: {code!r}")
    outs.append(out)
print(json.dumps(outs))
"""

FORK_PRELOAD = ("numpy", "pandas", "scipy.stats", "duckdb", "pyarrow", "matplotlib.figure")


def run_in_fresh_interpreters(codes: list[str],
                              preload: tuple[str, ...] = FORK_PRELOAD) -> list[str]:
    """The stdout of each snippet of ``codes``, each run from an interpreter that has imported
    no onlineeval module (only the third-party ``preload``); an error fails the caller."""
    import subprocess

    if not hasattr(os, "fork"):   # no fork: one whole interpreter per snippet
        done = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
                for code in codes]
        for run in done:
            assert run.returncode == 0, run.stderr
        return [run.stdout for run in done]
    done = subprocess.run([sys.executable, "-c", _FORK_EACH], capture_output=True, text=True,
                          input=json.dumps([codes, list(preload)]))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def fresh_interpreters() -> Callable[..., list[str]]:
    """:func:`run_in_fresh_interpreters`: ``fresh_interpreters([code, ...])``."""
    return run_in_fresh_interpreters


# --- the bundled sample study, built once per test session ----------------------------------
#
# Building its report (ten experiments: offline tests, A/B and interleaving readouts, per-query
# agreement) is the most expensive setup of the suite; every test that reads it shares one
# build. Under pytest-xdist, the tests using these fixtures carry
# ``pytest.mark.xdist_group("sample_study")`` so that ``--dist loadgroup`` runs them on one
# worker, which builds it once.

SAMPLE_STUDY = Path(__file__).resolve().parents[1] / "sample_logs" / "study.toml"


@dataclass(frozen=True)
class SampleStudy:
    """The sample study's report, and the report.html / report.json written from it (and
    the warnings its rendering raised)."""

    report: Any
    html: str
    data: dict
    directory: Path
    render_warnings: tuple = ()


@pytest.fixture(scope="session")
def sample_report() -> Any:
    """``build_report(sample_logs/study.toml)``; treat it as read-only."""
    from onlineeval.report import build_report

    return build_report(SAMPLE_STUDY)


@pytest.fixture(scope="session")
def sample_study(sample_report: Any, tmp_path_factory: pytest.TempPathFactory) -> SampleStudy:
    """``write_report`` of the sample study, computed by the session's one build."""
    import onlineeval.report as report_module

    out = tmp_path_factory.mktemp("sample-study")
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.setattr(report_module, "build_report", lambda study: sample_report)
        report = report_module.write_report(SAMPLE_STUDY, out / "report.html",
                                            out / "report.json")
    assert report is sample_report
    return SampleStudy(report, (out / "report.html").read_text(encoding="utf-8"),
                       json.loads((out / "report.json").read_text(encoding="utf-8")), out,
                       tuple(caught))


SAMPLE_LOGS = SAMPLE_STUDY.parent
SAMPLE_LOG_TABLES = ("searches", "results", "clicks", "events")


def write_experiment_slice(source: Path, experiment: str, out: Path) -> Path:
    """Copy into ``out`` every row of the log directory ``source`` that belongs to a user who
    took part in ``experiment`` (their searches, those searches' results and clicks, their
    events), each table with its own columns and types, in the source's row order.

    The sample logs' users are disjoint between experiments (one simulated population per
    ranker pair), and sessions, attribution and the randomization unit are per user, so an
    experiment's readout on its slice is the readout on the whole log
    (tests/report/test_sample_study.py checks this against the sample study's report); a
    readout of the slice reads a tenth of the rows.
    """
    import duckdb

    out.mkdir(parents=True)
    con = duckdb.connect()
    users = "SELECT DISTINCT user_id FROM read_parquet($s) WHERE experiment = $e"
    keep = {
        "searches": f"user_id IN ({users})",
        "events": f"user_id IN ({users})",
        "results": "search_id IN (SELECT search_id FROM read_parquet($s) "
                   f"WHERE user_id IN ({users}))",
    }
    keep["clicks"] = keep["results"]
    for table in SAMPLE_LOG_TABLES:
        path = source / f"{table}.parquet"
        if path.exists():
            con.execute(
                f"COPY (SELECT * FROM read_parquet($t) WHERE {keep[table]}) TO $o (FORMAT parquet)",
                {"t": str(path), "s": str(source / "searches.parquet"), "e": experiment,
                 "o": str(out / f"{table}.parquet")})
    con.close()
    return out


@pytest.fixture(scope="session")
def sample_experiment_logs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``sample_experiment_logs(NAME)``: a directory with ``ab/`` and ``interleaving/``, the
    sample logs of experiment NAME alone (:func:`write_experiment_slice`), made once per
    session. For tests that read out one experiment of the sample logs."""
    made: dict[str, Path] = {}

    def get(experiment: str) -> Path:
        if experiment not in made:
            base = tmp_path_factory.mktemp(f"sample-{experiment}")
            for design in ("ab", "interleaving"):
                write_experiment_slice(SAMPLE_LOGS / design, experiment, base / design)
            made[experiment] = base
        return made[experiment]

    return get


#: fixtures too expensive to set up on every xdist worker -> the group their users share; a
#: group runs on one worker, which sets the fixture up once (the Spark session is a JVM of
#: about 1 GB that takes 5-50 s to start; tests/abtest's aa_population is a simulated
#: experiment of 2,000 users)
SHARED_FIXTURE_GROUPS = {
    "sample_study": {"sample_study", "sample_report"},
    "spark": {"spark_session", "spark_con", "module_spark"},
    "aa_population": {"aa_population"},
}


@pytest.fixture(scope="session")
def shared_fixture_groups() -> dict[str, set[str]]:
    return SHARED_FIXTURE_GROUPS


# tryfirst: pytest-xdist reads the xdist_group marks in its own pytest_collection_modifyitems,
# which otherwise runs before this one and never sees them
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that use an expensive shared fixture (directly or through another fixture) share
    its group; tests/test_xdist_groups.py checks that the groups reach the scheduler."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for group, fixtures in SHARED_FIXTURE_GROUPS.items():
            if fixtures & used:
                item.add_marker(pytest.mark.xdist_group(group))
                break
        else:
            if not any(True for _ in item.iter_markers("xdist_group")) and \
                    _uses_module_fixture(item):
                # --dist loadgroup sends ungrouped tests one by one, so each worker would set
                # up the module's fixture again; its users go to one worker together
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def _uses_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs[-1].scope == "module" for name, defs in info.name2fixturedefs.items()
               if defs and name in item.fixturenames)


class CountingConnection:
    """A DuckDB connection that counts the statements run through it (the fetch guard
    pattern): put it in place of ``logs.con`` and read ``statements``."""

    def __init__(self, con: Any) -> None:
        self._con = con
        self.statements = 0

    def execute(self, *a: Any, **k: Any) -> Any:
        self.statements += 1
        return self._con.execute(*a, **k)

    def sql(self, *a: Any, **k: Any) -> Any:
        self.statements += 1
        return self._con.sql(*a, **k)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


@pytest.fixture
def counting_connection() -> type[CountingConnection]:
    """:class:`CountingConnection`, for tests that a computation reads a log a fixed number
    of times (e.g. once for all looks)."""
    return CountingConnection


def _hand_sequence(est, se, n, alpha, rho2):
    """Waudby-Smith et al. normal mixture, written from the formula (not from
    onlineeval.stats.sequential), running over looks: the oracle of the A/B and the
    interleaving sequential tests."""
    import numpy as np

    lo, hi, p = [], [], []
    for e, s, t in zip(est, se, n, strict=True):
        sigma = s * np.sqrt(t)
        a = t * rho2 + 1
        margin = np.sqrt(2 * a / (t * t * rho2) * np.log(np.sqrt(a) / alpha))
        lo.append(e - sigma * margin)
        hi.append(e + sigma * margin)
        p.append(min(1.0, np.sqrt(a) * np.exp(-(e / s) ** 2 * t * rho2 / (2 * a))))
    return (np.maximum.accumulate(lo), np.minimum.accumulate(hi), np.minimum.accumulate(p))


@pytest.fixture
def hand_sequence():
    return _hand_sequence


def _growthbook_sequence(est, var, n, n_star, alpha):
    """The asymptotic confidence sequence in GrowthBook's parameterisation (its docs and
    stats engine cite Waudby-Smith et al. 2023, eqs. 9, 155 and 161), written here from those
    equations, one look at a time with no running intersection: ``var`` is the variance of
    the estimate, ``n`` all units of both arms, the tuning ``rho`` (not rho^2) set from the
    planned ``n_star``. Returns the interval ends and the p-value (1 / e-value)."""
    import numpy as np

    est, var, n = (np.asarray(v, dtype=float) for v in (est, var, n))
    two_log = -2 * np.log(alpha)
    rho = np.sqrt((two_log + np.log(two_log + 1)) / n_star)
    tr = n * rho**2 + 1
    width = np.sqrt(var * n) * np.sqrt(2 * tr * np.log(np.sqrt(tr) / alpha) / (n * rho) ** 2)
    e_value = np.exp(rho**2 * (est**2 * n / var) / (2 * tr)) / np.sqrt(tr)
    return est - width, est + width, np.minimum(1.0, 1.0 / e_value)


@pytest.fixture
def growthbook_sequence():
    return _growthbook_sequence
