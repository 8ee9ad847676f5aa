"""The built wheel carries every SQL file, and the console script lists every command."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from onlineeval import cli

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_every_sql_file(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
         "--quiet", "-w", str(tmp_path)],
        check=True, capture_output=True,
    )
    (wheel,) = tmp_path.glob("onlineeval-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "onlineeval/sql/" + p.relative_to(ROOT / "sql").as_posix()
        for p in (ROOT / "sql").rglob("*.sql")
    }
    assert expected <= names, sorted(expected - names)
    assert "onlineeval/cli/__init__.py" in names


def test_every_command_has_help(capsys):
    commands = cli.commands()
    for name, module in commands.items():
        assert module.HELP and callable(module.run) and callable(module.add_arguments), name
        with pytest.raises(SystemExit) as exit_:
            cli.main([name, "--help"])
        assert exit_.value.code == 0
        assert name in capsys.readouterr().out


def test_no_command_prints_usage_and_fails(capsys):
    assert cli.main([]) == 2
    assert "usage: onlineeval" in capsys.readouterr().err
