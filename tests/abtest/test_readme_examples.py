"""The A/B section of README.md shows what the commands print now."""

import re
import shlex
from pathlib import Path

from onlineeval.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("<!-- section:abtest -->"):README.index("<!-- section:agreement -->")]


def _blocks() -> list[str]:
    return re.findall(r"```text\n(.*?)\n```", SECTION, flags=re.S)


def _run(argv: list[str], capsys, monkeypatch) -> str:
    monkeypatch.chdir(ROOT)
    assert main(argv) == 0
    got = capsys.readouterr()
    return (got.err + got.out).rstrip("\n")


def test_abtest_example_is_the_real_output(capsys, monkeypatch):
    argv = shlex.split("abtest sample_logs/ab --experiment s130_vs_s080 --control control "
                       "--metrics ctr,abandonment_rate,click_mrr,searches_per_unit "
                       "--correction holm")
    assert _run(argv, capsys, monkeypatch) == _blocks()[0]


def test_power_example_is_the_real_output(capsys, monkeypatch):
    argv = shlex.split("power sample_logs/ab --experiment s100_vs_s100 --variant control "
                       "--effect 0.02 --metrics ctr,click_mrr")
    assert _run(argv, capsys, monkeypatch) == _blocks()[1]
