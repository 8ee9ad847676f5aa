"""The metric registry is the single description that SQL, CLI and docs agree with."""

from __future__ import annotations

import re
from pathlib import Path

from onlineeval import queries
from onlineeval.online.definitions import COLUMNS, METRICS, markdown_table
from onlineeval.online.facts import FACT_COLUMNS

ROOT = Path(__file__).resolve().parents[2]


def _metrics_outputs() -> list[str]:
    text = queries.load("online/metrics").text
    return re.findall(r"\bAS (\w+),?\n", text.split("SELECT {{by,}}", 1)[1])


def test_every_statistic_is_computed_by_the_sql():
    outputs = _metrics_outputs()
    for name in COLUMNS:
        m = METRICS.get(name)
        for stat in (m.numerator, m.denominator):
            if stat is not None:
                assert stat in outputs, (name, stat)


def test_every_summed_statistic_is_a_fact_column():
    # the A/B code sums facts per user: each statistic except the two counts is a fact column
    for stat in _metrics_outputs():
        if stat not in ("searches", "users"):
            assert stat in FACT_COLUMNS, stat
            assert f"sum({stat}) AS {stat}" in queries.load("online/metrics").text


def test_reference_table_is_generated_from_the_registry():
    page = (ROOT / "docs" / "reference" / "online-metrics.md").read_text(encoding="utf-8")
    assert markdown_table() in page


def test_cli_help_lists_every_metric(capsys):
    import pytest

    from onlineeval.cli import main

    with pytest.raises(SystemExit):
        main(["online", "--help"])
    out = capsys.readouterr().out
    for name in COLUMNS:
        assert f"  {name}: {METRICS.get(name).definition[:30]}" in out


def test_requirements_name_real_columns():
    from onlineeval.logs.schema import column_names

    for name in COLUMNS:
        for group in METRICS.get(name).requires:
            for col in group:
                table, column = col.split(".")
                assert column in column_names(table), col
