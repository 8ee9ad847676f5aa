"""The readout's position CTR per arm: computed once by the readout (in its window), equal to
the positions API and to a pandas count from the tables, and carried unchanged by to_dict,
tables(), the CSV and JSON outputs and the HTML page."""

from __future__ import annotations

import csv
import io
import json
import warnings

import pandas as pd
import pytest

import onlineeval
from onlineeval.cli import main
from onlineeval.readout.text import csv_frame

from .conftest import make_tables

START, END = "2026-01-06", "2026-01-10"


@pytest.fixture(scope="module")
def tables_with_results():
    s, c = make_tables(seed=5, boost={"treatment": 0.1})
    shown = s[s["n_results"] > 0]
    results = pd.DataFrame([{"search_id": sid, "rank": r, "doc_id": f"d{r}"}
                            for sid in shown["search_id"] for r in range(1, 6)])
    return s, results, c


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory, tables_with_results):
    d = tmp_path_factory.mktemp("ab_results")
    s, r, c = tables_with_results
    s.to_parquet(d / "searches.parquet")
    r.to_parquet(d / "results.parquet")
    c.to_parquet(d / "clicks.parquet")
    return d


def by_hand(tables, start=None, end=None) -> pd.DataFrame:
    """Per arm and rank: pages that showed the rank in the window, and of those the pages
    with a click at it, counted from the tables."""
    s, r, c = tables
    keep = pd.Series(True, index=s.index)
    if start is not None:
        keep &= s["ts"] >= pd.Timestamp(start)
    if end is not None:
        keep &= s["ts"] < pd.Timestamp(end)
    s = s[keep]
    clicked = set(zip(c["search_id"], c["rank"], strict=True))
    shown = r.merge(s[["search_id", "variant"]], on="search_id")
    shown["hit"] = [(a, b) in clicked for a, b in zip(shown["search_id"], shown["rank"],
                                                       strict=True)]
    out = shown.groupby(["variant", "rank"]).agg(shown=("hit", "size"), clicked=("hit", "sum"))
    out["ctr"] = out["clicked"] / out["shown"]
    return out.reset_index()


def readout_of(logs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onlineeval.readout(logs, secondary=(), **kw)


@pytest.mark.parametrize("window", [(None, None), (START, END)])
def test_position_ctr_is_the_positions_api_and_the_hand_count(log_dir, tables_with_results,
                                                               window):
    start, end = window
    ro = readout_of(log_dir, start=start, end=end)
    got = ro.position_ctr
    api = onlineeval.position_ctr(log_dir, by=("experiment", "variant"), start=start, end=end)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), api.reset_index(drop=True),
                                  check_dtype=False)
    want = by_hand(tables_with_results, start, end)
    merged = got.merge(want, on=["variant", "rank"], suffixes=("", "_hand"))
    assert len(merged) == len(want) == len(got) == 10
    assert (merged["shown"] == merged["shown_hand"]).all()
    assert (merged["clicked"] == merged["clicked_hand"]).all()
    assert merged["ctr"].to_numpy() == pytest.approx(merged["ctr_hand"].to_numpy(), rel=1e-12)


def test_the_window_changes_the_counts(log_dir):
    whole = readout_of(log_dir).position_ctr
    part = readout_of(log_dir, start=START, end=END).position_ctr
    assert part["shown"].sum() < whole["shown"].sum()


def test_only_the_arms_of_the_readout(log_dir, tables_with_results, tmp_path):
    s, r, c = tables_with_results
    extra = s.assign(search_id=s["search_id"] + "x", variant="other",
                     user_id=s["user_id"] + "x")
    logs = onlineeval.load_logs(
        searches=pd.concat([s, extra]),
        results=pd.concat([r, r.assign(search_id=r["search_id"] + "x")]), clicks=c)
    ro = readout_of(logs, treatment="treatment")
    assert set(ro.position_ctr["variant"]) == {"control", "treatment"}


def test_every_output_carries_the_same_frame(log_dir, capsys):
    ro = readout_of(log_dir)
    curves = ro.position_ctr
    recs = ro.to_dict()["position_ctr"]
    assert [(x["variant"], x["rank"], x["shown"], x["clicked"]) for x in recs] == list(
        zip(curves["variant"], curves["rank"], curves["shown"], curves["clicked"],
            strict=True))
    json.dumps(ro.to_dict(), allow_nan=False)
    pd.testing.assert_frame_equal(ro.tables()["position_ctr"], curves)
    rows = csv_frame(ro)
    pos = rows[rows["role"] == "position_ctr"]
    assert len(pos) == len(curves)
    assert pos["ctr"].to_numpy() == pytest.approx(curves["ctr"].to_numpy(), rel=1e-15)
    assert set(pos["overall_verdict"]) == {ro.verdict}
    assert main(["readout", str(log_dir), "--secondary", "none", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["position_ctr"] == recs
    assert main(["readout", str(log_dir), "--secondary", "none", "--format", "csv"]) == 0
    cli = [x for x in csv.DictReader(io.StringIO(capsys.readouterr().out))
           if x["role"] == "position_ctr"]
    assert [float(x["ctr"]) for x in cli] == pytest.approx(list(curves["ctr"]), rel=1e-12)


def test_the_html_reads_it_from_the_readout(log_dir, monkeypatch):
    """The page draws the readout's frame and never computes position CTR itself."""
    from onlineeval.online import positions
    from onlineeval.report import readout_page

    ro = readout_of(log_dir)

    def refuse(*a, **k):
        raise AssertionError("position CTR recomputed")

    monkeypatch.setattr(positions, "position_ctr", refuse)
    monkeypatch.setattr(onlineeval, "position_ctr", refuse, raising=False)
    drawn = []
    real = readout_page.position_ctr_curves
    monkeypatch.setattr(readout_page, "position_ctr_curves",
                        lambda df, *a, **k: drawn.append(df) or real(df, *a, **k))
    page = readout_page.render(ro)
    assert 'id="readout-exp1-position-ctr"' in page
    assert len(drawn) == 1
    assert drawn[0]["ctr"].tolist() == ro.position_ctr["ctr"].tolist()


def test_no_results_no_position_ctr(tables_with_results):
    s, _, c = tables_with_results
    ro = readout_of(onlineeval.load_logs(searches=s, clicks=c))
    assert ro.position_ctr is None
    assert "position_ctr" not in ro.tables()
    assert ro.to_dict()["position_ctr"] is None
