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
    from onlineeval import db, engines

    # named twice so that a command which never opens a connection need not import DuckDB
    assert cli._RESOURCE_ENV == (db.MEMORY_LIMIT_ENV, db.THREADS_ENV, engines.ENGINE_ENV,
                                 engines.SPARK_MASTER_ENV, engines.SPARK_CONF_ENV)


# -- no traceback, anywhere ------------------------------------------------------------


def _one_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_an_unexpected_exception_is_one_line_asking_for_a_report(monkeypatch, capsys) -> None:
    import onlineeval.cli.top_queries as cmd

    def broken(args):
        return {}["no such key"]

    monkeypatch.setattr(cmd, "run", broken)
    monkeypatch.delenv("ONLINEEVAL_DEBUG", raising=False)
    assert main(["top-queries", SAMPLE_AB]) == 1
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("onlineeval top-queries: error: internal error (KeyError: ")
    assert "please report it" in line and "ONLINEEVAL_DEBUG=1" in line
    # with ONLINEEVAL_DEBUG=1 the traceback comes too, then the same line
    monkeypatch.setenv("ONLINEEVAL_DEBUG", "1")
    assert main(["top-queries", SAMPLE_AB]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "in broken" in err and err.strip().endswith(line[-60:])


def test_an_os_error_is_one_line_naming_the_file_and_cause(monkeypatch, capsys) -> None:
    import onlineeval.cli.top_queries as cmd

    def denied(args):
        raise PermissionError(13, "Permission denied", "/data/logs/searches.parquet")

    monkeypatch.setattr(cmd, "run", denied)
    assert main(["top-queries", SAMPLE_AB]) == 2
    assert _one_line(capsys.readouterr().err) == (
        "onlineeval top-queries: error: /data/logs/searches.parquet: Permission denied "
        "(EACCES)")


def test_keyboard_interrupt_is_one_line_and_status_130(monkeypatch, capsys) -> None:
    import onlineeval.cli.top_queries as cmd

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cmd, "run", interrupted)
    assert main(["top-queries", SAMPLE_AB]) == 130
    assert _one_line(capsys.readouterr().err) == (
        "onlineeval top-queries: interrupted by SIGINT; unfinished output was removed")


def test_a_file_damaged_where_only_a_metric_query_reads_is_one_line(tmp_path, capsys) -> None:
    import duckdb

    log = tmp_path / "log"
    log.mkdir()
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT 's' || i AS search_id, 'u' || (i % 50) AS user_id, "
        f"TIMESTAMP '2024-01-01' + INTERVAL (i) MINUTE AS ts, 'zzquery' || i AS query "
        f"FROM range(20000) t(i)) TO '{log / 'searches.parquet'}' "
        f"(FORMAT parquet, COMPRESSION uncompressed)")
    con.execute(f"COPY (SELECT 's' || (i * 3) AS search_id, 1 AS rank FROM range(500) t(i)) "
                f"TO '{log / 'clicks.parquet'}' (FORMAT parquet)")
    # damage one query text in the middle of the file; the footer and the columns the
    # loader checks (ids, ts) stay intact, so the damage shows only when a query is read
    data = bytearray((log / "searches.parquet").read_bytes())
    at = data.find(b"zzquery", len(data) // 2)
    data[at:at + 4] = b"\xff\xff\xff\xff"
    (log / "searches.parquet").write_bytes(bytes(data))
    assert main(["top-queries", str(log)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("loaded ")  # the load itself succeeded
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err
    assert last.startswith("onlineeval top-queries: error: ")
    assert str(log / "searches.parquet") in last


def test_error_lines_and_tables_escape_control_characters(tmp_path, capsys) -> None:
    assert main(["online", str(tmp_path / "gone\x1b[2J\rdir")]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "\x1b" not in line and "\r" not in line and "gone\\x1b[2J\\rdir" in line
    log = tmp_path / "log"
    log.mkdir()
    evil = "shoes\x1b]0;pwned\x07\x1b[2J"
    (log / "searches.csv").write_text(
        "search_id,user_id,ts,query\n"
        f's1,u1,2024-01-01 10:00:00,"{evil}"\ns2,u2,2024-01-01 10:01:00,"{evil}"\n')
    (log / "clicks.csv").write_text("search_id,rank\ns1,1\n")
    assert main(["top-queries", str(log)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "shoes\\x1b]0;pwned\\x07\\x1b[2J" in out
    # CSV is data: the value comes out as it went in
    assert main(["top-queries", str(log), "--format", "csv"]) == 0
    assert evil in capsys.readouterr().out
