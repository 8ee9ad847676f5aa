"""A tiny hand-made study through the real pieces (no fakes): A/B logs without a results
table, no interleaving — the report still builds, says what it could not show, and its
numbers are the ones counted by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from onlineeval.report import build_report, render_html


@pytest.fixture
def study(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    (tmp_path / "c.run").write_text("q1 Q0 d2 1 2 c\nq1 Q0 d1 2 1 c\nq2 Q0 d3 1 1 c\n")
    (tmp_path / "t.run").write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq2 Q0 d3 1 1 t\n")
    ab = tmp_path / "ab"
    ab.mkdir()
    n = 8
    ts = pd.Timestamp("2026-01-01")
    pd.DataFrame({
        "search_id": [f"s{i}" for i in range(n)], "user_id": [f"u{i}" for i in range(n)],
        "ts": [ts + pd.Timedelta(hours=i) for i in range(n)],
        "query": ["q1", "q1", "q2", "q2"] * 2, "experiment": "x",
        "variant": ["control", "treatment"] * 4,
    }).to_csv(ab / "searches.csv", index=False)
    # clicks: control s0 ; treatment s1, s3, s5 -> CTR 1/4 vs 3/4
    pd.DataFrame({"search_id": ["s0", "s1", "s3", "s5"], "rank": [1, 1, 1, 2],
                  "ts": [ts + pd.Timedelta(hours=i, seconds=9) for i in (0, 1, 3, 5)]}
                 ).to_csv(ab / "clicks.csv", index=False)
    p = tmp_path / "study.toml"
    p.write_text('qrels = "qrels.txt"\nab_logs = "ab"\nmeasures = ["P@1", "recip_rank"]\n'
                 'online_metrics = ["ctr"]\n[[experiment]]\nname = "x"\n'
                 'control_run = "c.run"\ntreatment_run = "t.run"\n')
    return p


def test_tiny_study_end_to_end(study):
    r = build_report(study)
    assert r.measures == ["P_1", "recip_rank"]
    e = r.experiments[0]
    # P@1: control 0 (q1), 1 (q2); treatment 1, 1
    p1 = e.offline.set_index("measure").loc["P_1"]
    assert (p1["mean_a"], p1["mean_b"], p1["estimate"]) == pytest.approx((0.5, 1.0, 0.5))
    rr = e.offline.set_index("measure").loc["recip_rank"]
    assert rr["estimate"] == pytest.approx(((1 - 0.5) + 0) / 2)
    ctr = e.ab.set_index("metric").loc["ctr"]
    assert (ctr["control_value"], ctr["treatment_value"]) == pytest.approx((0.25, 0.75))
    assert r.table.loc[0, "ab:ctr"] == pytest.approx(0.5)
    assert e.interleaving is None and e.position_ctr is None
    assert "no position CTR: the A/B logs have no results table" in e.notes
    assert "no interleaving logs in the study for this experiment" in e.notes
    # no qid column: queries pair on the query text. Per-query CTR: q1 control 1/2,
    # treatment 2/2 (+0.5); q2 control 0/2, treatment 1/2 (+0.5). Offline Δ P@1 (the primary
    # measure): q1 +1, q2 0 -> one agreeing pair, one without direction
    w = e.within["A/B CTR Δ"]
    assert (w["n"], w["n_agree"], w["n_disagree"], w["n_zero"]) == (2, 1, 0, 1)
    html = render_html(r)
    assert "no position CTR" in html and "No A/B logs with results" in html
