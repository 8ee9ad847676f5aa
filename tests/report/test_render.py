"""The report renders: every section, an embedded PNG per plot, no network references, and
the numbers it states computed from the readouts (here fakes of the per-experiment pieces,
so only the report's own logic is under test; test_sample_study.py runs the real pieces)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from onlineeval.agreement import PerQueryOnline
from onlineeval.report import SECTIONS, build, render_html, report_dict, write_report
from onlineeval.report.readout_page import PARTS
from onlineeval.stats.results import ComparisonResult, comparison_frame

# experiment -> (offline delta, interleaving delta, A/B ctr diff, A/B abandonment diff)
FAKE = {
    "big_win": (0.20, 0.10, 0.030, -0.020),
    "win": (0.10, 0.05, 0.010, -0.010),
    "loss": (-0.15, -0.08, -0.020, 0.015),
    "tiny": (0.01, -0.01, 0.001, 0.002),
}


class Parsed(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.stack: list[str | None] = []
        self.images: dict[str, list[str]] = {}
        self.external: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "section":
            self.stack.append(a.get("id"))
            if a.get("id"):
                self.sections.append(a["id"])
        if tag == "img":
            top = next((s for s in reversed(self.stack) if s), None)
            self.images.setdefault(top, []).append(a["src"])
        for key in ("src", "href"):
            if key in a and not a[key].startswith(("data:", "#")):
                self.external.append(a[key])

    def handle_endtag(self, tag):
        if tag == "section":
            self.stack.pop()


def _write_study(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "ab").mkdir()
    (tmp_path / "il").mkdir()
    (tmp_path / "qrels.txt").write_text("q1 0 d 1\n")
    lines = ['title = "Fake <study>"', 'qrels = "qrels.txt"', 'ab_logs = "ab"',
             'interleaving_logs = "il"', 'measures = ["ndcg_cut_10", "map"]',
             'online_metrics = ["ctr", "abandonment_rate"]', "large_margin = 0.05"]
    for name in FAKE:
        for side in ("c", "t"):
            (tmp_path / "runs" / f"{name}_{side}.run").write_text("q1 Q0 d 1 1 x\n")
        lines += ["[[experiment]]", f'name = "{name}"', f'control_run = "runs/{name}_c.run"',
                  f'treatment_run = "runs/{name}_t.run"']
    p = tmp_path / "study.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.fixture
def study_file(tmp_path):
    return _write_study(tmp_path)


def _result(estimate, half, p, p_adjusted=None, correction="holm", n=50, unit="query",
            units=None):
    """A result of the shared shape around ``estimate`` (±``half``)."""
    return ComparisonResult(
        estimate=estimate, ci_low=estimate - half, ci_high=estimate + half, ci_level=0.95,
        p_value=p, p_adjusted=float("nan") if p_adjusted is None else p_adjusted,
        correction=None if p_adjusted is None else correction,
        family_size=None if p_adjusted is None else 2, test="t", n=n,
        units_control=n if units is None else units[0],
        units_treatment=n if units is None else units[1], unit=unit)


def _fake_offline(study, exp, cache=None):
    d = FAKE[exp.name][0]
    lead, results, extra = [], [], []
    for k, m in enumerate(study.measures):
        delta = d * (1 + k)
        lead.append({"baseline": "c", "run": "t", "measure": m, "mean_a": 0.5,
                     "mean_b": 0.5 + delta})
        results.append(_result(delta, 0.03, 0.01, 0.02 if abs(d) > 0.05 else 0.6))
        extra.append({"significant": abs(d) > 0.05, "effect_size": 0.4})
    pq = pd.DataFrame({"qid": ["q1", "q2", "q3", "q4"], "control": [0.5, 0.4, 0.3, 0.2]})
    pq["treatment"] = pq["control"] + np.array([1, 1, -1, 0.0]) * d
    pq["delta"] = pq["treatment"] - pq["control"]
    return comparison_frame(lead, results, extra), pq


def _fake_ab(study, exp, logs):
    _, _, ctr, ab = FAKE[exp.name]
    lead, results, extra = [], [], []
    for metric, diff in (("ctr", ctr), ("abandonment_rate", ab)):
        lead.append({"metric": metric, "variant": "treatment", "control_value": 0.5,
                     "treatment_value": 0.5 + diff})
        results.append(_result(diff, 0.005, 0.001, 0.002, n=1990, unit="user_id",
                               units=(1000, 990)))
        extra.append({"rel_diff": diff / 0.5, "rel_ci_low": 0.0, "rel_ci_high": 0.0,
                      "significant": True})
    mismatch = exp.name == "tiny"
    srm = {"statistic": 12.0, "p_value": 1e-4 if mismatch else 0.8,
           "units": {"control": 1000, "treatment": 990}, "mismatch": mismatch}
    return (comparison_frame(lead, results, extra), srm,
            "SRM: p = 0.0001" if mismatch else "no SRM")


def _fake_il(study, exp, logs):
    d = FAKE[exp.name][1]
    lead = [{"experiment": exp.name, "team_a": exp.treatment_team,
             "team_b": exp.control_team, "impressions": 500, "impressions_with_clicks": 300,
             "wins_a": 150, "wins_b": 120, "ties": 30}]
    result = _result(d, 0.02, 0.01 if abs(d) > 0.04 else 0.7, n=80, unit="user")
    return comparison_frame(lead, [result], [{"share_a": 0.55, "winner": None}])


def _fake_pq_il(exp, logs):
    d = FAKE[exp.name][1]
    return PerQueryOnline(pd.DataFrame({"qid": ["q1", "q2", "q3", "q5"],
                                        "delta_q": [d, d, -d, 0.1]}),
                          "delta_q", ("pages",), "pages", "with no click")


def _fake_pq_ab(exp, logs):
    return PerQueryOnline(pd.DataFrame({"qid": ["q1", "q2", "q4"],
                                        "ctr_delta": [0.1, -0.1, 0.0]}),
                          "ctr_delta", ("searches_control", "searches_treatment"),
                          "searches", "in one arm only")


def _fake_curves(exp, logs):
    rows = [{"experiment": exp.name, "variant": v, "rank": r, "ctr": 0.4 / r + (v == "treatment")
             * 0.01} for v in ("control", "treatment") for r in range(1, 11)]
    return pd.DataFrame(rows)


def _install_fakes(monkeypatch, readout_of):
    def fake_ab(study, exp, logs):
        # the per-experiment readout the report shows (its numbers: conftest.make_readout)
        df, srm, message = _fake_ab(study, exp, logs)
        # with its arms' position CTR, which the report shows
        df.attrs["readout"] = replace(readout_of(name=exp.name),
                                      position_ctr=_fake_curves(exp, logs))
        return df, srm, message

    monkeypatch.setattr(build, "_offline", _fake_offline)
    monkeypatch.setattr(build, "_ab", fake_ab)
    monkeypatch.setattr(build, "_interleaving", _fake_il)
    monkeypatch.setattr(build, "_per_query_interleaving", _fake_pq_il)
    monkeypatch.setattr(build, "_per_query_ab", _fake_pq_ab)
    monkeypatch.setattr(build._LogCache, "get", lambda self, path, columns=None: object())


@pytest.fixture
def fake(monkeypatch, readout_of):
    _install_fakes(monkeypatch, readout_of)


@pytest.fixture(scope="module")
def fake_written(tmp_path_factory):
    """``write_report`` of the fake study: its HTML and JSON, drawn once for the tests that
    only read them (treat them as read-only)."""
    from .conftest import make_readout

    base = tmp_path_factory.mktemp("fake-study")
    study = _write_study(base)
    out, js = base / "out" / "report.html", base / "out" / "report.json"
    with pytest.MonkeyPatch.context() as mp:
        _install_fakes(mp, make_readout)
        write_report(study, out, js)
    return out.read_text(encoding="utf-8"), json.loads(js.read_text())


def test_report_numbers(study_file, fake):
    r = build.build_report(study_file)
    assert [c for c, _ in r.outcomes] == ["interleaving", "ab:ctr", "ab:abandonment_rate"]
    il = r.agreements["interleaving"].stats
    assert (il["n_agree"], il["n_disagree"]) == (3, 1)   # "tiny" disagrees
    # abandonment is oriented (decrease = better): the same signs as ctr
    assert r.table["ab:abandonment_rate"].tolist() == pytest.approx([0.02, 0.01, -0.015, -0.002])
    ab = r.agreements["ab:abandonment_rate"].stats
    assert (ab["n_agree"], ab["n_disagree"]) == (3, 1)  # tiny: +0.01 offline, worse online
    ctr = r.agreements["ab:ctr"].stats
    assert (ctr["n_agree"], ctr["n_disagree"]) == (4, 0)
    assert ctr["kendall_tau"] == pytest.approx(1.0)  # same order: loss < tiny < win < big_win
    # oriented CI: negated and swapped
    row = r.table.iloc[0]
    assert (row["ab:abandonment_rate_ci_low"], row["ab:abandonment_rate_ci_high"]) == \
        pytest.approx((0.015, 0.025))
    lm = r.large_margin
    assert lm["experiments"] == ["big_win", "win", "loss"]
    assert (lm["n_with_interleaving"], lm["n_agree"], lm["all_agree"]) == (3, 3, True)
    # decision table for interleaving: 3 both significant same direction, tiny neither
    dec = r.agreements["interleaving"].decisions.set_index("decision")["count"]
    assert dec["both significant, same direction"] == 3 and dec["neither significant"] == 1
    # per-query agreement within big_win: q1, q2 agree, q3 agrees (both negative); q4 / q5
    w = r.experiments[0].within["interleaving Δ_q"]
    assert (w["n"], w["n_agree"], w["n_offline_only"], w["n_online_only"]) == (3, 3, 1, 1)
    # per-query CTR: q1 +, q2 -, q4 0 online; offline q1 +, q2 +, q4 0 -> 1 agree, 1 not
    c = r.experiments[0].within["A/B CTR Δ"]
    assert (c["n"], c["n_agree"], c["n_disagree"], c["n_zero"]) == (3, 1, 1, 1)
    assert c["n_offline_only"] == 1 and c["n_online_only"] == 0
    tau = r.tau.set_index(["offline", "online"])
    assert tau.loc[("offline:ndcg_cut_10", "ab:ctr"), "kendall_tau"] == pytest.approx(1.0)


def test_report_html_renders_every_section_and_plot(fake_written):
    text, data = fake_written
    page = Parsed()
    page.feed(text)
    for section in SECTIONS:
        assert section in page.sections
    for name in FAKE:
        assert f"experiment-{name}" in page.sections
        # the per-experiment readout, as `onlineeval readout -o` draws it
        for part, _ in PARTS:
            assert f"readout-{name}-{part}" in page.sections
    for plot in ("scatter", "forest", "position-ctr"):
        (src,) = page.images[plot]
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix)
        assert base64.b64decode(src[len(prefix):])[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.external == [] and "script" not in page.tags and "link" not in page.tags
    assert "Fake &lt;study&gt;" in text  # escaped, never raw
    assert "offline ndcg_cut_10 and interleaving agree in sign: 3 of 3" in text
    assert "SAMPLE RATIO MISMATCH" in text and "tiny" in text
    assert data["agreement"]["interleaving"]["summary"]["n_agree"] == 3
    assert [e["name"] for e in data["experiments"]] == list(FAKE)
    assert data["experiments"][3]["srm"]["mismatch"] is True
    assert data["large_margin"]["all_agree"] is True
    assert data["experiments"][0]["readout"]["verdict"] == "ship"


def test_report_has_a_table_of_contents_and_no_table_wider_than_the_page(
        fake_written, html_tools):
    page = html_tools.parse(fake_written[0])
    assert "contents" in page.ids and page.links
    assert set(page.links) <= set(page.ids)
    assert {f"readout-{name}" for name in FAKE} <= set(page.links)
    assert set(SECTIONS) <= set(page.links)
    html_tools.assert_tables_fit(page)


def test_report_says_when_large_margins_disagree(study_file, fake, no_plots, monkeypatch):
    monkeypatch.setitem(FAKE, "win", (0.10, -0.05, 0.01, -0.01))
    r = build.build_report(study_file)
    assert r.large_margin["all_agree"] is False and r.large_margin["disagree"] == ["win"]
    text = render_html(r)
    assert "do NOT all agree in sign" in text and "Disagreeing: win" in text
    assert report_dict(r)["large_margin"]["disagree"] == ["win"]


@pytest.fixture
def no_plots(monkeypatch):
    """Tests of the wiring and the text, not the plots (drawn for real by fake_written and
    test_offline_only_study_renders): the report's plots and its readout sections' plots
    are a constant PNG."""
    from onlineeval.report import readout_page, render

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    for name in ("scatter_offline_online", "forest_ab", "position_ctr_curves"):
        monkeypatch.setattr(render, name, lambda *a, **k: png)
    for name in ("position_ctr_curves", "confidence_sequence", "cumulative_effect",
                 "forest_lifts", "segment_effects"):
        monkeypatch.setattr(readout_page, name, lambda *a, **k: png)


def test_cli_report(study_file, fake, no_plots, tmp_path, capsys):
    from onlineeval.cli import main

    out = tmp_path / "r.html"
    assert main(["report", str(study_file), "-o", str(out), "--json",
                 str(tmp_path / "r.json")]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out)
    assert "sign agreement 3/4" in captured.err
    assert out.is_file() and (tmp_path / "r.json").is_file()


def test_cli_demo(study_file, fake, no_plots, tmp_path, capsys, monkeypatch):
    from onlineeval.cli import main
    from onlineeval.cli.demo import find_sample_study

    out = tmp_path / "demo"
    assert main(["demo", "--study", str(study_file), "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"report: {(out / 'report.html').resolve()}" in printed
    assert "large offline margins" in printed and "SAMPLE RATIO MISMATCH in: tiny" in printed
    assert "readout verdict ship (4): big_win, win, loss, tiny" in printed
    assert (out / "report.html").is_file() and (out / "report.json").is_file()
    # without --study the demo finds the repository's sample study, from anywhere
    monkeypatch.chdir(tmp_path)
    found = find_sample_study()
    assert found.name == "study.toml" and found.parent.name == "sample_logs"


def test_offline_only_study_renders(study_file, fake, tmp_path):
    text = study_file.read_text()
    text = text.replace('ab_logs = "ab"\n', "").replace('interleaving_logs = "il"\n', "")
    study_file.write_text(text)
    r = build.build_report(study_file)
    assert r.outcomes == [] and r.agreements == {} and len(r.tau) == 0
    assert r.large_margin["all_agree"] is None and r.large_margin["n"] == 3
    html = render_html(r)
    page = Parsed()
    page.feed(html)
    assert set(SECTIONS) <= set(page.sections)
    assert len(page.images["scatter"]) == 1  # an empty panel saying "no data"
    assert "forest" not in page.images and "position-ctr" not in page.images
    assert "none has an interleaving readout" in html
    json.dumps(report_dict(r), allow_nan=False)


def test_load_exclusions_are_shown(study_file, fake, no_plots):
    r = build.build_report(study_file)
    r.load_notes = {"/logs/ab": "loaded /logs/ab: clicks 10 rows (2 excluded)"}
    assert "Rows excluded while loading /logs/ab: loaded /logs/ab: clicks 10 rows (2 excluded)" \
        in render_html(r)
    assert report_dict(r)["load_exclusions"] == r.load_notes


def test_plots_leave_the_callers_matplotlib_backend_alone(monkeypatch):
    """Rendering must not switch the user's backend (a notebook's inline one, say): the module
    neither calls matplotlib.use nor goes through pyplot."""
    import importlib

    import matplotlib

    from onlineeval.report import plots

    def refuse(*args, **kwargs):
        raise AssertionError("onlineeval.report.plots called matplotlib.use")

    monkeypatch.setattr(matplotlib, "use", refuse)
    importlib.reload(plots)
    before = matplotlib.get_backend()
    png = plots.position_ctr_curves(pd.DataFrame({
        "experiment": ["e"] * 2, "variant": ["control", "treatment"], "rank": [1, 1],
        "ctr": [0.3, 0.4]}))
    assert base64.b64decode(png)[:8] == b"\x89PNG\r\n\x1a\n"
    assert matplotlib.get_backend() == before
    assert not any(getattr(v, "__name__", "") == "matplotlib.pyplot" for v in vars(plots).values())
