"""The CLI entry point: command discovery and importing only the command that runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from onlineeval import cli
from onlineeval.cli import main

DATA = Path(__file__).parent / "data" / "trec_eval"


def test_every_module_is_one_command_named_after_it() -> None:
    found = cli.commands()
    assert sorted(m.replace("_", "-") for m in cli._module_names()) == sorted(found)
    for name, module in found.items():
        assert module.NAME == name


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["-h"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in cli.commands():
        assert name in out


def test_unknown_command_lists_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["trec_eval"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'trec_eval'" in err and "trec-eval" in err and "abtest" in err


def test_a_named_command_imports_only_its_module() -> None:
    # in a fresh interpreter: which command modules and heavy libraries does one command load?
    code = (
        "import io, contextlib, json, sys\n"
        "from onlineeval.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main(['trec-eval', '-m', 'map', {str(DATA / 'qrels.test')!r},"
        f" {str(DATA / 'results.test')!r}])\n"
        "mods = sorted(m for m in sys.modules if m.startswith('onlineeval.cli.'))\n"
        "print(json.dumps([rc, out.getvalue(), mods, 'scipy' in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    rc, out, mods, scipy_loaded = json.loads(done.stdout)
    assert rc == 0
    assert out.startswith("map") and out.split()[1] == "all"
    assert mods == ["onlineeval.cli.trec_eval"]
    assert scipy_loaded is False


def test_dashed_command_name_maps_to_its_module(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["interleave-lists", "-h"])
    assert exit_info.value.code == 0
    assert "usage: onlineeval interleave-lists" in capsys.readouterr().out


SAMPLE_AB = str(Path(__file__).resolve().parents[1] / "sample_logs" / "ab")


def test_global_memory_and_thread_options_reach_the_command(monkeypatch, capsys) -> None:
    import onlineeval.cli.online as online_cmd

    seen = {}

    def spy(args):
        from onlineeval.db import connect

        con = connect()
        seen["limit"] = con.sql("SELECT current_setting('memory_limit')").fetchall()[0][0]
        seen["threads"] = con.sql("SELECT current_setting('threads')").fetchall()[0][0]
        return 0

    monkeypatch.delenv("ONLINEEVAL_MEMORY_LIMIT", raising=False)
    monkeypatch.delenv("ONLINEEVAL_THREADS", raising=False)
    monkeypatch.setattr(online_cmd, "run", spy)
    assert main(["--memory-limit", "700MB", "--threads", "1", "online", SAMPLE_AB]) == 0
    assert seen["threads"] == 1 and seen["limit"].replace(" ", "") in ("667.5MiB", "700.0MB")
    # the command line's values do not outlive the command (main may run in-process)
    assert "ONLINEEVAL_MEMORY_LIMIT" not in os.environ and "ONLINEEVAL_THREADS" not in os.environ


def test_bad_global_resource_options_are_one_line_errors(capsys) -> None:
    assert main(["--memory-limit", "lots", "online", SAMPLE_AB]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--memory-limit must be a size" in err
    with pytest.raises(SystemExit):
        main(["--threads", "0", "online", SAMPLE_AB])
    assert "positive whole number" in capsys.readouterr().err


def test_out_of_memory_is_one_line_saying_what_to_change(capsys) -> None:
    assert main(["--memory-limit", "2MB", "online", SAMPLE_AB]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err
    assert last.startswith("onlineeval online: error: DuckDB ran out of memory")
    assert "--memory-limit" in last and "2MB" in last


def test_the_cli_sets_the_variables_the_connections_read() -> None:
    from onlineeval import db

    # named twice so that a command which never opens a connection need not import DuckDB
    assert cli._RESOURCE_ENV == (db.MEMORY_LIMIT_ENV, db.THREADS_ENV)
