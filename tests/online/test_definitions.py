"""The metric registry is the single description that SQL, CLI and docs agree with."""

from __future__ import annotations

import re
from pathlib import Path

from onlineeval import queries
from onlineeval.online.definitions import COLUMNS, METRICS, markdown_table
from onlineeval.online.facts import FACT_COLUMNS, STATISTICS

ROOT = Path(__file__).resolve().parents[2]


def test_every_statistic_is_computed_by_the_sql(hand_logs):
    from onlineeval.online import metric_sums

    outputs = list(metric_sums(hand_logs, by=()).columns)
    assert outputs == ["users", "searches", *STATISTICS]
    for name in COLUMNS:
        m = METRICS.get(name)
        for stat in (m.numerator, m.denominator):
            if stat is not None:
                assert stat in outputs, (name, stat)


def test_every_summed_statistic_is_a_fact_column():
    # the statistics are the facts the facts query tags "summed"; online/metrics and
    # ab/unit_sums are rendered with exactly that list (nothing in them lists statistics)
    assert set(STATISTICS) <= set(FACT_COLUMNS)
    # ... then the outcome facts of the events (online/event_facts), tagged the same way
    assert STATISTICS == (*queries.load("online/search_facts").tagged("summed"),
                          *queries.load("online/event_facts").tagged("summed"))
    for name in ("online/metrics", "ab/unit_sums"):
        text = queries.load(name).text
        for stat in STATISTICS:
            assert not re.search(rf"\b{stat}\b", text.split("\nWITH\n", 1)[1]), (name, stat)


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
