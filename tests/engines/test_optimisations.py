"""The DuckDB-only optimisations (the ``duckdb_only`` switches of sql/ files) change no number:
DuckDB runs the portable definitions (every switch off, as on Spark) and the optimised queries
(its default) with identical results."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from onlineeval import engines, load_logs
from onlineeval.abtest.units import unit_rows
from onlineeval.interleaving.outcomes import PAGE_TABLE, page_outcomes
from onlineeval.online import facts as facts_mod
from onlineeval.online import online_metrics

ROOT = Path(__file__).resolve().parents[2]


def portable(monkeypatch):
    monkeypatch.setattr(engines, "optimisations",
                        lambda con, q: dict.fromkeys(q.duckdb_only, False))


def rows(logs, view):
    df = logs.con.execute(f'SELECT * FROM "{view}"').df()
    return df.drop(columns=[c for c in df.columns if c == "_oe_pk"]).sort_values(
        "search_id").reset_index(drop=True)


@pytest.mark.parametrize("folder", ["sample_logs/ab", "tests/data/logs/tiny"])
def test_search_facts_same_with_and_without(folder, monkeypatch):
    logs = load_logs(ROOT / folder)
    by = ("experiment", "variant") if folder == "sample_logs/ab" else ("variant",)
    key = ["user_id", "session_id"] if logs.has("searches", "session_id") else ["user_id"]
    # the optimisation is really in use
    assert facts_mod.hash_partition_ok(logs, key)
    name, _ = facts_mod.facts_view(logs, user_key=True)
    optimised = rows(logs, name)
    metrics = online_metrics(logs, by=by)
    portable(monkeypatch)
    assert not facts_mod.hash_partition_ok(logs, key)
    name2, user2 = facts_mod.facts_view(logs, user_key=True)
    assert user2 == "user_id"
    pd.testing.assert_frame_equal(rows(logs, name2), optimised)
    pd.testing.assert_frame_equal(online_metrics(logs, by=by), metrics)
    # the portable search_facts text holds no DuckDB-only construct
    sql = logs.con.execute("SELECT sql FROM duckdb_views() WHERE view_name = $v",
                           {"v": name2}).fetchone()[0]
    assert "hash(" not in sql.lower() and "materialized" not in sql.lower()


def test_page_outcomes_same_with_and_without(monkeypatch):
    logs = load_logs(ROOT / "sample_logs/interleaving")
    page_outcomes(logs)
    optimised = logs.con.execute(f'SELECT * FROM "{PAGE_TABLE}" ORDER BY ALL').df()
    portable(monkeypatch)
    page_outcomes(logs)
    again = logs.con.execute(f'SELECT * FROM "{PAGE_TABLE}" ORDER BY ALL').df()
    assert len(again) > 100
    pd.testing.assert_frame_equal(again, optimised)


def test_unit_sums_same_with_and_without(monkeypatch):
    logs = load_logs(ROOT / "sample_logs/ab")
    exp = "s100_vs_s080"
    a, _ = unit_rows(logs, experiment=exp)
    portable(monkeypatch)
    b, _ = unit_rows(logs, experiment=exp)
    key = ["unit", "period", "variant"]
    pd.testing.assert_frame_equal(a.sort_values(key).reset_index(drop=True),
                                  b.sort_values(key).reset_index(drop=True))
