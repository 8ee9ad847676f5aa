"""The report on the bundled sample study (sample_logs/study.toml), with every real piece:
offline compare, A/B readout, interleaving readout, position CTR.

The checks are independent of the code under test: offline margins come from the
simulator's manifest (its own NDCG@10), interleaving outcomes are recounted here from the
parquet files with pandas."""

from __future__ import annotations

import json
import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from onlineeval.report import SECTIONS

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs"
STUDY = SAMPLE / "study.toml"


@pytest.fixture(scope="module")
def run(sample_study):
    # write_report of the sample study (tests/conftest.py builds it once per session)
    return sample_study.report, sample_study.html, sample_study.data


def _margins() -> dict[str, float]:
    manifest = json.loads((SAMPLE / "manifest.json").read_text())
    return {e["name"]: e["ndcg10_delta"] for e in manifest["experiments"]}


def _interleaving_delta_by_hand(experiment: str, treatment: str) -> float:
    """Δ_AB of the treatment team, counted from the raw tables: per page, credit of a team =
    distinct clicked ranks placed by it; win when more credit, tie when equal and > 0."""
    s = pd.read_parquet(SAMPLE / "interleaving" / "searches.parquet",
                        columns=["search_id", "experiment"])
    r = pd.read_parquet(SAMPLE / "interleaving" / "results.parquet")
    c = pd.read_parquet(SAMPLE / "interleaving" / "clicks.parquet", columns=["search_id", "rank"])
    pages = s.loc[s["experiment"] == experiment, "search_id"]
    r = r[r["search_id"].isin(pages)]
    hit = c.drop_duplicates().merge(r, on=["search_id", "rank"])
    credit = hit.groupby(["search_id", "team"]).size().unstack(fill_value=0)
    teams = sorted(r["team"].dropna().unique())
    assert treatment in teams and len(teams) == 2
    other = next(t for t in teams if t != treatment)
    credit = credit.reindex(columns=teams, fill_value=0)
    wins = int((credit[treatment] > credit[other]).sum())
    losses = int((credit[treatment] < credit[other]).sum())
    ties = int(((credit[treatment] == credit[other]) & (credit[treatment] > 0)).sum())
    return (wins + ties / 2) / (wins + losses + ties) - 0.5


def test_study_has_at_least_eight_pairs_with_varied_margins():
    study = tomllib.loads(STUDY.read_text())
    margins = _margins()
    names = [e["name"] for e in study["experiment"]]
    assert len(names) >= 8 and set(names) <= set(margins)
    values = np.array([margins[n] for n in names])
    assert (np.abs(values) >= 0.1).sum() >= 2 and (np.abs(values) < 0.01).sum() >= 1
    assert (values < 0).any()


def test_offline_deltas_match_the_simulator(run):
    report, _, _ = run
    margins = _margins()
    t = report.table.set_index("experiment")
    for name, margin in margins.items():
        assert t.loc[name, "offline:ndcg_cut_10"] == pytest.approx(margin, abs=1e-9)


def test_large_margin_pairs_agree_in_sign_with_interleaving(run):
    report, html, data = run
    threshold = report.study.large_margin
    margins = _margins()
    large = {n: m for n, m in margins.items() if abs(m) >= threshold}
    assert len(large) >= 4
    t = report.table.set_index("experiment")
    treatment_team = {e.experiment.name: e.experiment.treatment_team for e in report.experiments}
    for name, margin in large.items():
        by_hand = _interleaving_delta_by_hand(name, treatment_team[name])
        assert t.loc[name, "interleaving"] == pytest.approx(by_hand, abs=1e-12)
        assert np.sign(by_hand) == np.sign(margin), name
    lm = data["large_margin"]
    assert lm["all_agree"] is True and sorted(lm["experiments"]) == sorted(large)
    assert (lm["n_agree"], lm["n_with_interleaving"]) == (len(large), len(large))
    said = re.search(r"offline ndcg_cut_10 and interleaving agree in sign: (\d+) of (\d+)", html)
    assert said and said.groups() == (str(len(large)), str(len(large)))


def test_report_renders_every_section_with_its_plot(run):
    _, html, data = run

    class P(HTMLParser):
        ids: list[str] = []
        imgs: dict[str, int] = {}
        current: str | None = None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "section" and a.get("id"):
                self.ids.append(a["id"])
                if a["id"] in ("scatter", "forest", "position-ctr"):
                    self.current = a["id"]
            if tag == "img" and self.current:
                assert a["src"].startswith("data:image/png;base64,")
                self.imgs[self.current] = self.imgs.get(self.current, 0) + 1
                self.current = None

    p = P()
    p.feed(html)
    assert set(SECTIONS) <= set(p.ids)
    assert p.imgs == {"scatter": 1, "forest": 1, "position-ctr": 1}
    assert len([i for i in p.ids if i.startswith("experiment-")]) == len(data["experiments"])
    # A/B readout and SRM status for every experiment; no made-up SRM
    for e in data["experiments"]:
        assert e["srm"]["mismatch"] is False
        assert {r["metric"] for r in e["ab"]} == {"ctr", "click_mrr", "abandonment_rate"}
        assert len(e["interleaving"]) == 1 and e["position_ctr"]


def test_aa_pair_shows_no_offline_difference(run):
    report, _, _ = run
    aa = next(r for r in report.experiments if r.experiment.name == "s100_vs_s100")
    assert (aa.offline["estimate"] == 0).all() and (aa.offline["p_value"] == 1).all()
    for w in aa.within.values():
        assert w["n_zero"] == w["n"]


def test_ab_deltas_in_the_table_recounted_from_the_logs(run):
    report, _, _ = run
    s = pd.read_parquet(SAMPLE / "ab" / "searches.parquet",
                        columns=["search_id", "experiment", "variant", "n_results"])
    clicked = set(pd.read_parquet(SAMPLE / "ab" / "clicks.parquet", columns=["search_id"])
                  ["search_id"])
    s["click"] = s["search_id"].isin(clicked)
    t = report.table.set_index("experiment")
    for name in ("s260_vs_s040", "s060_vs_s100"):
        part = s[s["experiment"] == name]
        ctr = part.groupby("variant")["click"].mean()
        assert t.loc[name, "ab:ctr"] == pytest.approx(ctr["treatment"] - ctr["control"])
        # abandonment = no click among pages with results; lower is better, so negated
        nz = part[part["n_results"] > 0]
        ab = 1 - nz.groupby("variant")["click"].mean()
        assert t.loc[name, "ab:abandonment_rate"] == pytest.approx(
            -(ab["treatment"] - ab["control"]))


def test_experiments_csv_is_the_reports_interleaving_table(run):
    """sample_logs/experiments.csv (the input of the `onlineeval agree` example in
    docs/agreement.md, which tests/test_docs.py runs) holds exactly the report's offline Δ and
    interleaving Δ_AB per pair."""
    report, _, _ = run
    csv = pd.read_csv(SAMPLE / "experiments.csv").set_index("experiment")
    t = report.table.set_index("experiment")
    assert list(csv.index) == list(t.index)
    for col, src in (("offline_delta", "offline:ndcg_cut_10"), ("online_delta", "interleaving"),
                     ("offline_p", "offline:ndcg_cut_10_p"), ("online_p", "interleaving_p")):
        np.testing.assert_allclose(csv[col].to_numpy(), t[src].to_numpy(), rtol=1e-12,
                                   atol=0, err_msg=col)


def test_the_disagreement_the_docs_name_is_the_reports(run):
    """docs/agreement.md names the one pair where offline and interleaving disagree, with its
    numbers (the demo's summary above it is run by tests/test_docs.py)."""
    report, _, _ = run
    page = " ".join((ROOT / "docs" / "agreement.md").read_text(encoding="utf-8").split())
    row = report.table.set_index("experiment").loc["s100_vs_s080"]
    assert f"`s100_vs_s080`: +{row['offline:ndcg_cut_10']:.3f} NDCG@10" in page
    assert f"Δ_AB = −{abs(row['interleaving']):.3f}, p = {row['interleaving_p']:.2f}" in page


def _same(got, want, path: str = "") -> None:
    """``got`` and ``want`` (plain values of Readout.to_dict()) are equal, floats to 1e-9
    relative: DuckDB sums floats in no fixed order, so the last bits vary between plans."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), path
        for key in want:
            _same(got[key], want[key], f"{path}/{key}")
    elif isinstance(want, list | tuple):
        assert isinstance(got, list | tuple) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _same(g, w, f"{path}[{i}]")
    elif isinstance(want, float) and not isinstance(want, bool):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-300, nan_ok=True), path
    else:
        assert got == want, path


@pytest.mark.parametrize("name", ["s200_vs_s100", "s100_vs_s100"])
def test_an_experiments_slice_of_the_sample_logs_reads_out_as_the_whole_log(
        run, sample_experiment_logs, name):
    """Tests that read out one experiment of the sample logs use its slice (tests/conftest.py
    sample_experiment_logs: its users' rows only); its readouts, A/B and interleaving, are
    those the report computed on the whole logs, number for number, except that the whole
    A/B log's other users are counted as unexposed searches."""
    import warnings

    import onlineeval

    report, _, _ = run
    r = next(r for r in report.experiments if r.experiment.name == name)
    exp, study = r.experiment, report.study
    part = sample_experiment_logs(name)
    for design, table in (("ab", r.ab), ("interleaving", r.interleaving)):
        want = table.attrs["readout"].to_dict()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = onlineeval.readout(
                part / design, design=design, experiment=name, control="control",
                treatment=["treatment"], primary=["ctr"],
                secondary=["click_mrr", "abandonment_rate"], alpha=study.alpha,
                control_team=exp.control_team or None,
                treatment_team=exp.treatment_team or None, n_resamples=study.n_resamples,
                seed=study.seed).to_dict()
        if design == "ab":
            others = len(pd.read_parquet(SAMPLE / "ab" / "searches.parquet", columns=["experiment"])
                         .query("experiment != @name"))
            assert (got["excluded"]["unexposed_unit_searches"],
                    want["excluded"]["unexposed_unit_searches"]) == (0, others)
            want["excluded"]["unexposed_unit_searches"] = 0
        _same(got, want, design)
