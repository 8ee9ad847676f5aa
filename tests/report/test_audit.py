"""Audit of what users read: every number of the sample study's HTML report against the
public Python API, and the CLI's output formats (the examples of README.md and docs/ are run
by tests/test_docs.py).

The HTML is parsed with :mod:`html.parser` (tables cell by cell, the per-query agreement lines
and the headline by regular expression) and each shown number is compared with the value the
API returns when called directly — :func:`onlineeval.offline.compare`,
:func:`onlineeval.abtest`, :func:`onlineeval.interleaving_readout`,
:func:`onlineeval.agreement`, :func:`onlineeval.position_ctr` — or with an independent
computation here (Kendall τ-b and Spearman ρ by scipy, per-query deltas by pandas from the
Parquet files, offline per-query scores by :func:`onlineeval.evaluate`). A shown number must
equal the API value rounded as the report says it rounds (the readout's one number format:
significant digits, scientific notation below 0.0001).

Discrepancies this audit found and fixed (each has a test below):
- the "All experiments" and τ tables showed A/B metrics where lower is better (abandonment)
  with their difference negated under the plain metric name, while the per-experiment A/B
  table shows the raw treatment − control difference: the negated columns are now marked
  "(negated)" and the table says how every Δ is oriented;
- nothing said how numbers are rounded; the A/B and offline tables did not say which side is
  subtracted from which;
- the per-query agreement lines did not count the queries left out because their online Δ is
  undefined, nor the searches without a qid (which were pooled into one pseudo-query), nor the
  queries with a zero delta left out of the sign agreement.
"""

from __future__ import annotations

import copy
import functools
import html
import importlib
import io
import json
import math
import re
import subprocess
import sys
import warnings
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import onlineeval
from onlineeval.abtest.metrics import METRICS
from onlineeval.formatting import plain
from onlineeval.report import write_report
from onlineeval.study import read_study

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs"
STUDY = SAMPLE / "study.toml"


# --- HTML parsing ------------------------------------------------------------------------

class _Page(HTMLParser):
    """Tables (with the id of the innermost section and the last heading above them), list
    items and paragraphs of the report, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.depth: list[str] = []
        self.heading = ""
        self.tables: list[dict] = []
        self.items: list[tuple[str, str]] = []
        self.paragraphs: list[str] = []
        self._text: list[str] | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._tag = ""
        # the readout sections' numbers: data-key -> shown text
        self.numbers: dict[str, str] = {}
        self._key: str | None = None
        self._num: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id", ""))
        elif tag in ("h2", "h3", "h4", "li", "p"):
            self._text, self._tag = [], tag
        elif tag == "table":
            self.tables.append({"section": self.sections[-1], "heading": self.heading,
                                "rows": [], "transposed": "transposed" in a.get("class", ""),
                                "continued": "continued" in a.get("class", "")})
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        if tag == "span" and "data-key" in a:
            self._key, self._num = a["data-key"], []

    def handle_endtag(self, tag):
        if tag == "span" and self._key is not None:
            self.numbers[self._key] = "".join(self._num)
            self._key = None
        if tag == "section":
            self.sections.pop()
        elif tag == self._tag and self._text is not None:
            text = "".join(self._text).strip()
            if tag in ("h2", "h3", "h4"):
                self.heading = text
            elif tag == "li":
                self.items.append((self.sections[-1], text))
            else:
                self.paragraphs.append(text)
            self._text = None
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1]["rows"].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._key is not None:
            self._num.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._text is not None:
            self._text.append(data)


def _frame(table: dict) -> pd.DataFrame:
    rows = table["rows"]
    if table["transposed"]:
        # a table too wide for the page, shown transposed: its first column is the header
        rows = [list(col) for col in zip(*rows, strict=True)]
    head, *body = rows
    return pd.DataFrame(body, columns=head)


def _tables(page: _Page, section: str) -> list[tuple[str, pd.DataFrame]]:
    """The section's tables; the transposed pieces of one table joined back together."""
    out: list[tuple[str, pd.DataFrame]] = []
    previous = None
    for t in page.tables:
        if t["section"] != section:
            continue
        if t["continued"] and previous is not None:
            out[-1] = (t["heading"], pd.concat([out[-1][1], _frame(t)], ignore_index=True))
        else:
            out.append((t["heading"], _frame(t)))
        previous = t
    return out


def shown_equals(cell: str, value: object) -> bool:
    """Whether a cell shows ``value`` as the report says it rounds: to the last digit shown
    (significant digits; scientific notation below 0.0001), whole numbers with thousands
    separators, booleans yes/no, undefined as —."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return cell == "—"
    if isinstance(value, bool | np.bool_):
        return cell == ("yes" if value else "no")
    if isinstance(value, str):
        return cell == value
    v = float(value)
    text = cell.replace(",", "")
    if "e" in text:
        mantissa, exp = text.split("e")
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        tol = 0.5 * 10 ** (int(exp) - decimals)
    else:
        decimals = len(text.split(".")[1]) if "." in text else 0
        tol = 0.5 * 10 ** -decimals
    return abs(float(text) - v) <= tol * (1 + 1e-9) + 1e-15


def _assert_row(cells: dict[str, str], expected: dict[str, object], where: str) -> None:
    for col, value in expected.items():
        assert shown_equals(cells[col], value), f"{where}: {col} shows {cells[col]!r}, " \
                                                f"the API gives {value!r}"


# --- the report and the API, computed separately ------------------------------------------

def _lower_is_better(metric: str) -> bool:
    return METRICS.get(metric).better == "lower"


@pytest.fixture(scope="module")
def audit(sample_study, sample_experiment_logs):
    # the report as written by write_report (tests/conftest.py builds it once per session)
    report, data = sample_study.report, sample_study.data
    page = _Page()
    page.feed(sample_study.html)

    study = read_study(STUDY)
    api: dict[str, dict] = {}
    for exp in study.experiments:
        # the API reads each experiment's slice of the sample logs (its users' rows: the
        # whole logs' numbers, tests/report/test_sample_study.py), the report the whole logs
        assert exp.ab_experiment == exp.interleaving_experiment == exp.name
        part = sample_experiment_logs(exp.name)
        ab_logs = onlineeval.load_logs(part / "ab")
        il_logs = onlineeval.load_logs(part / "interleaving")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            offline = onlineeval.offline.compare(
                exp.qrels, exp.control_run,
                exp.treatment_run, list(study.measures), test=study.test, alpha=study.alpha,
                correction=study.correction, n_resamples=study.n_resamples, seed=study.seed)
            srm = onlineeval.abtest(
                ab_logs, control=exp.control_variant, treatment=[exp.treatment_variant],
                metrics=list(study.online_metrics), alpha=study.alpha,
                correction=study.correction, experiment=exp.ab_experiment,
                seed=study.seed).attrs
            # the report's A/B numbers are the readout's: the first online metric primary
            # (Holm within the primary family), the others secondary (unadjusted)
            ro = onlineeval.readout(
                ab_logs, control=exp.control_variant, treatment=[exp.treatment_variant],
                primary=list(study.online_metrics[:1]),
                secondary=list(study.online_metrics[1:]), alpha=study.alpha,
                experiment=exp.ab_experiment)
            ab = pd.DataFrame([{**r.to_dict(), "variant": r.treatment, "rel_diff": r.rel_lift,
                                "significant": r.verdict in ("better", "worse")}
                               for r in ro.metrics])
            ab.attrs.update(srm=srm["srm"], srm_message=srm["srm_message"])
            il = onlineeval.interleaving_readout(
                il_logs, experiment=exp.interleaving_experiment, team_a=exp.treatment_team,
                alpha=study.alpha, n_resamples=study.n_resamples, seed=study.seed)
        il = il[(il["team_a"] == exp.treatment_team) & (il["team_b"] == exp.control_team)]
        api[exp.name] = {"exp": exp, "offline": offline.reset_index(drop=True), "ab": ab,
                         "ro": ro,
                         "il": il.reset_index(drop=True), "warnings": [str(w.message)
                                                                     for w in caught]}
    return report, page, data, study, api


def _api_table(study, api) -> pd.DataFrame:
    """One row per experiment, every delta oriented "positive = treatment better"."""
    rows = []
    for name, a in api.items():
        row = {"experiment": name}
        for rec in a["offline"].itertuples():
            row[f"offline:{rec.measure}"] = rec.estimate
            row[f"offline:{rec.measure}_p"] = rec.p_adjusted
        row["interleaving"] = a["il"].loc[0, "estimate"]
        row["interleaving_p"] = a["il"].loc[0, "p_value"]
        for rec in a["ab"].itertuples():
            sign = -1.0 if _lower_is_better(rec.metric) else 1.0
            row[f"ab:{rec.metric}"] = sign * rec.estimate
            row[f"ab:{rec.metric}_p"] = rec.p_adjusted if rec.role == "primary" else \
                rec.p_value
        rows.append(row)
    return pd.DataFrame(rows)


# --- HTML against the API ------------------------------------------------------------------

def _shown_number(text: str, value: object) -> bool:
    """A number of a readout section (significant digits, ``%`` for a percentage, a sign)
    is ``value`` to the digits shown."""
    if text.endswith("%"):
        return shown_equals(text.removesuffix("%"), 100 * float(value))
    return shown_equals(text, value)


def test_per_experiment_tables_equal_the_api(audit):
    """Each experiment's section: the offline table, and the readout section (as
    `onlineeval readout -o` draws it) whose A/B and interleaving numbers are the API's."""
    _, page, _, _, api = audit
    for name, a in api.items():
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", name)
        tables = _tables(page, "experiment-" + stem)
        assert len(tables) == 1, name  # A/B and interleaving: in the readout section
        ((h_off, off),) = tables
        assert "estimate = mean_b − mean_a" in h_off and "a = control" in h_off
        for cells, rec in zip(off.to_dict("records"), a["offline"].to_dict("records"),
                              strict=True):
            _assert_row(cells, {k: rec[k] for k in cells}, f"{name} offline")
        key = f"readout-{stem}"
        for r in a["ro"].metrics:
            k = f"{key}/{r.metric}/{r.treatment}"
            p = r.result.p_adjusted if r.role == "primary" else r.result.p_value
            for field, value in (("control_value", r.control_value),
                                 ("treatment_value", r.treatment_value),
                                 ("estimate", r.result.estimate),
                                 ("estimate:ci_low", r.result.ci_low),
                                 ("estimate:ci_high", r.result.ci_high),
                                 ("rel_lift", r.rel_lift), ("p", p)):
                shown = page.numbers[f"{k}/{field}"]
                assert _shown_number(shown, value), (name, r.metric, field, shown, value)
        il = a["il"].loc[0]
        for field, value in (("estimate", il["estimate"]), ("estimate:ci_low", il["ci_low"]),
                             ("estimate:ci_high", il["ci_high"]), ("p_value", il["p_value"]),
                             ("wins", il["wins_a"]), ("losses", il["wins_b"]),
                             ("ties", il["ties"])):
            shown = page.numbers[f"{key}/interleaving/{field}"]
            assert _shown_number(shown, value), (name, field, shown, value)


def test_srm_line_equals_the_api(audit):
    _, page, _, _, api = audit
    srm_lines = [t for _, t in page.items if t.startswith("Sample ratio check")]
    unit_lines = [t for _, t in page.items if "units per arm" in t]
    assert len(srm_lines) == len(unit_lines) == len(api)
    for line, units_line, a in zip(srm_lines, unit_lines, api.values(), strict=True):
        srm = a["ab"].attrs["srm"]
        assert not srm["mismatch"] and "no mismatch" in line
        p = re.search(r"χ² p = ([0-9.e+-]+)", line).group(1)
        assert shown_equals(p, srm["p_value"])
        units = dict(re.findall(r"(\w+) ([\d,]+)", units_line.split("units per arm", 1)[1]))
        assert {k: int(v.replace(",", "")) for k, v in units.items()} == srm["units"]


def test_experiments_table_equals_the_api_with_orientation_labelled(audit):
    _, page, _, study, api = audit
    (_, shown), = _tables(page, "experiments-table")
    want = _api_table(study, api).set_index("experiment")
    # the negated columns say so; the others are the plain treatment − control difference
    assert "ab:abandonment_rate (negated)" in shown.columns
    assert "ab:ctr" in shown.columns and "ab:ctr (negated)" not in shown.columns
    note = next(p for p in page.paragraphs if p.startswith("Every Δ is treatment − control"))
    assert "(negated)" in note
    for cells in shown.to_dict("records"):
        name = cells.pop("experiment")
        cells.pop("control"), cells.pop("treatment")
        for col, text in cells.items():
            key = col.removesuffix(" (negated)")
            assert shown_equals(text, want.loc[name, key]), (name, col, text)


def test_agreement_tables_equal_the_api(audit):
    report, page, _, study, api = audit
    table = _api_table(study, api)
    primary = f"offline:{study.measures[0]}"
    (h1, agree), (h2, decisions) = _tables(page, "agreement")
    labels = dict(report.outcomes)
    assert list(agree["online outcome"]) == [labels[c] for c, _ in report.outcomes]
    for (col, _), cells in zip(report.outcomes, agree.to_dict("records"), strict=True):
        res = onlineeval.agreement(
            table.rename(columns={primary: "offline_delta", col: "online_delta",
                                  f"{primary}_p": "offline_p", f"{col}_p": "online_p"}),
            offline_p="offline_p", online_p="online_p", alpha=study.alpha)
        s = res.stats
        assert cells["sign agree"] == f"{s['n_agree']}/{s['n_agree'] + s['n_disagree']}"
        _assert_row(cells, {"experiments": s["n"], "rate": s["sign_agreement"],
                            "Wilson CI low": s["sign_ci_low"],
                            "Wilson CI high": s["sign_ci_high"],
                            "Kendall τ-b": s["kendall_tau"], "τ p": s["kendall_p"],
                            "Spearman ρ": s["spearman_rho"], "ρ p": s["spearman_p"]}, col)
        # scipy on the API deltas, independently of onlineeval.agreement
        tau = scipy.stats.kendalltau(table[primary], table[col])
        assert shown_equals(cells["Kendall τ-b"], tau.statistic)
        assert shown_equals(cells["τ p"], tau.pvalue)
        counts = res.decisions.set_index("decision")["count"]
        shown = decisions.set_index("decision")[labels[col]]
        assert {k: int(v) for k, v in shown.items()} == counts.to_dict()


def test_tau_matrix_equals_scipy(audit):
    report, page, _, study, api = audit
    table = _api_table(study, api)
    (_, pivot), (_, long) = _tables(page, "tau-matrix")
    outcomes = [c for c, _ in report.outcomes]
    shown_cols = ["ab:abandonment_rate (negated)" if c == "ab:abandonment_rate" else c
                  for c in outcomes]
    assert list(pivot.columns) == ["offline", *shown_cols]
    for cells in pivot.to_dict("records"):
        for col, shown_col in zip(outcomes, shown_cols, strict=True):
            tau = scipy.stats.kendalltau(table[cells["offline"]], table[col]).statistic
            assert shown_equals(cells[shown_col], tau), (cells["offline"], col)
    assert len(long) == len(study.measures) * len(outcomes)
    for cells in long.to_dict("records"):
        col = cells["online"].removesuffix(" (negated)")
        x, y = table[cells["offline"]], table[col]
        tau, rho = scipy.stats.kendalltau(x, y), scipy.stats.spearmanr(x, y)
        _assert_row(cells, {"n": len(x), "kendall_tau": tau.statistic,
                            "kendall_p": tau.pvalue, "spearman_rho": rho.statistic,
                            "spearman_p": rho.pvalue}, cells["offline"] + " " + col)


def test_headline_large_margin_equals_the_api(audit):
    _, page, _, study, api = audit
    table = _api_table(study, api)
    primary = f"offline:{study.measures[0]}"
    large = table[table[primary].abs() >= study.large_margin]
    agree = int((np.sign(large[primary]) == np.sign(large["interleaving"])).sum())
    headline = next(p for p in page.paragraphs if "large offline margin" in p)
    said = re.search(r"On the (\d+) pair\(s\).*?: (\d+) of (\d+)\.", headline)
    assert said.groups() == (str(len(large)), str(agree), str(len(large)))
    assert (" agree in sign" in headline) == (agree == len(large))
    summary = next(p for p in page.paragraphs if " experiments; primary offline measure" in p)
    assert summary.startswith(f"{len(api)} experiments;")


@functools.cache
def _parquet(part: str, table: str) -> pd.DataFrame:
    df = pd.read_parquet(SAMPLE / part / f"{table}.parquet")
    # text as Python objects: pandas' isin on Arrow-backed strings converts every value it
    # looks for to an Arrow scalar one by one
    return df.astype({c: object for c in df.columns if pd.api.types.is_string_dtype(df[c])})


def _online_per_query(exp) -> tuple[pd.Series, pd.Series]:
    """Per-query interleaving Δ_q and A/B CTR Δ of one experiment, from the Parquet files."""
    s = _parquet("ab", "searches")
    s = s[s["experiment"] == exp.ab_experiment]
    s = s.assign(click=s["search_id"].isin(_parquet("ab", "clicks")["search_id"].unique()))
    ctr = s.pivot_table(index="qid", columns="variant", values="click", aggfunc="mean")
    ab = (ctr["treatment"] - ctr["control"]).dropna()

    s = _parquet("interleaving", "searches")
    s = s[s["experiment"] == exp.interleaving_experiment]
    r = _parquet("interleaving", "results")
    r = r[r["search_id"].isin(s["search_id"])]
    c = _parquet("interleaving", "clicks")[["search_id", "rank"]]
    credit = c.drop_duplicates().merge(r, on=["search_id", "rank"]).groupby(
        ["search_id", "team"]).size().unstack(fill_value=0)
    credit = credit.reindex(index=s.loc[s["search_id"].isin(r["search_id"]), "search_id"],
                            columns=[exp.treatment_team, exp.control_team], fill_value=0)
    t, o = credit[exp.treatment_team].to_numpy(), credit[exp.control_team].to_numpy()
    pages = pd.DataFrame({"qid": s.set_index("search_id").loc[credit.index, "qid"].to_numpy(),
                          "won": t > o, "lost": o > t, "tie": (t == o) & (t > 0)})
    g = pages.groupby("qid")[["won", "lost", "tie"]].sum()
    decided = g.sum(axis=1)
    il = ((g["won"] + g["tie"] / 2) / decided - 0.5)[decided > 0]
    return il, ab


@functools.cache
def _scores(qrels: Path, run: Path, measure: str) -> pd.Series:
    return onlineeval.evaluate(qrels, run, [measure], per_query=True,
                               complete=True).set_index("qid")[measure]


def _experiment_names() -> list[str]:
    import tomllib

    return [e["name"] for e in tomllib.loads(STUDY.read_text())["experiment"]]


@pytest.mark.parametrize("name", _experiment_names())
def test_per_query_agreement_lines_equal_an_independent_computation(audit, name):
    _, page, _, study, api = audit
    exp = api[name]["exp"]
    measure = study.measures[0]

    offline = (_scores(exp.qrels, exp.treatment_run, measure)
               - _scores(exp.qrels, exp.control_run, measure))
    il, ab = _online_per_query(exp)
    section = "experiment-" + name
    lines = [text for sec, text in page.items if sec == section]
    assert len(lines) == 2
    for line, online, label in ((lines[0], il, "interleaving Δ_q"), (lines[1], ab, "A/B CTR Δ")):
        assert label in line
        common = offline.index.intersection(online.index)
        x, y = offline[common].to_numpy(), online[common].to_numpy()
        agree = int((np.sign(x) * np.sign(y) > 0).sum())
        disagree = int((np.sign(x) * np.sign(y) < 0).sum())
        zero = len(common) - agree - disagree
        m = re.search(r"over (\d+) queries \(left out: (\d+) judged without an online Δ "
                      r"\((\d+) of them searched but [^)]*\), (\d+) searched but not "
                      r"judged, (\d+) searched, not judged and without an online Δ, (\d+) "
                      r"(?:searches|pages) without a query id\): sign "
                      r"agreement (\d+)/(\d+) \(([^;]+); (\d+) queries with a zero delta left "
                      r"out\), Kendall τ-b (\S+) \(p = ([^)]+)\), Spearman ρ (\S+) "
                      r"\(p = ([^)]+)\)", line)
        assert m, line
        g = m.groups()
        assert [int(v) for v in g[:8]] == [
            len(common), len(offline.index.difference(online.index)), 0,
            len(online.index.difference(offline.index)), 0, 0, agree, agree + disagree]
        assert int(g[9]) == zero
        if agree + disagree:
            assert shown_equals(g[8], agree / (agree + disagree))
        else:
            assert g[8] == "—"
        with warnings.catch_warnings():
            # the A/A pair: every delta is 0, τ and ρ are undefined (shown as —)
            warnings.simplefilter("ignore", scipy.stats.ConstantInputWarning)
            tau, rho = scipy.stats.kendalltau(x, y), scipy.stats.spearmanr(x, y)
        for text, value in zip(g[10:], (tau.statistic, tau.pvalue, rho.statistic, rho.pvalue),
                               strict=True):
            if text != "—":
                # τ and ρ are shown with 3 decimals, their p-values with 4
                assert shown_equals(text, value), (label, text, value)
            else:
                assert math.isnan(value)


def test_rounding_is_stated(audit):
    _, page, _, _, _ = audit
    note = next(p for p in page.paragraphs if p.startswith("Numbers are spelled as in the "
                                                          "readouts"))
    assert "4 significant digits (3 for the per-query sign agreement, τ and ρ)" in note
    assert "scientific notation below 0.0001" in note and "report.json" in note
    # and the cells do what it says: the one number format of onlineeval.formatting (at
    # most 4 significant digits, p-values 3 and in scientific notation below 1e-4), never
    # fixed decimals (0.1000 would be 4 decimals of a 1-digit number)
    numbers = 0
    for t in page.tables:
        header = t["rows"][0]
        for row in t["rows"][1:]:
            for col, cell in zip(header, row, strict=False):
                if not re.fullmatch(r"[-+]?[\d,]*\.?\d+(e[-+]\d+)?", cell):
                    continue
                numbers += 1
                mantissa = cell.split("e")[0]
                if "." in mantissa:
                    digits = re.sub(r"\D", "", mantissa).lstrip("0")
                    assert 0 < len(digits) <= 4 or set(digits) == set(), (col, cell)
                    if "e" not in cell:  # (a p-value's mantissa keeps its digit: 6.0e-05)
                        assert not mantissa.endswith("0"), (col, cell)  # no padded decimals
                if "e" in cell:
                    assert float(cell) < 1e-4, (col, cell)
    assert numbers > 100


def test_warnings_shown_are_the_apis(audit):
    """The notes of each experiment are exactly the warnings the API calls raise (none on the
    sample study), and no SRM banner appears without a mismatch."""
    report, page, _, _, api = audit
    for r in report.experiments:
        a = api[r.experiment.name]
        srm_message = a["ab"].attrs["srm_message"]
        expected = [w for w in a["warnings"] if w != srm_message]
        shown = [n for n in r.notes]
        assert len(shown) == len(expected) == 0
    assert not any("SAMPLE RATIO MISMATCH" in p for p in page.paragraphs)


def test_report_json_equals_the_api(audit):
    _, _, data, _, api = audit
    pos = onlineeval.position_ctr(onlineeval.load_logs(SAMPLE / "ab"),
                                  by=("experiment", "variant"))
    for e in data["experiments"]:
        a = api[e["name"]]
        for key, frame in (("offline", a["offline"]), ("ab", a["ab"]),
                           ("interleaving", a["il"])):
            got = pd.DataFrame(e[key])
            for col in got.columns:
                if col in ("baseline", "run"):
                    continue  # the report names runs by their file name, compare() by path
                want = frame[col]
                if pd.api.types.is_float_dtype(want):
                    np.testing.assert_allclose(got[col].astype(float), want.astype(float),
                                               rtol=1e-12, err_msg=f"{e['name']} {key} {col}")
                else:
                    # (JSON spells a missing count null: the API's nullable integer is NA)
                    assert [plain(v) for v in got[col]] == [plain(v) for v in want], \
                        (e["name"], key, col)
        want = pos[pos["experiment"] == e["name"]].reset_index(drop=True)
        got = pd.DataFrame(e["position_ctr"])
        np.testing.assert_allclose(got["ctr"], want["ctr"], rtol=1e-12)
        assert got["rank"].tolist() == want["rank"].tolist()


# --- CLI output ------------------------------------------------------------------------------

CLI_CASES = {
    "online": ["online", "sample_logs/ab", "--by", "experiment,variant"],
    "positions": ["positions", "sample_logs/ab"],
    "top-queries": ["top-queries", "sample_logs/ab", "-n", "5"],
    "power": ["power", "sample_logs/ab", "--experiment", "s100_vs_s100", "--variant", "control"],
    "interleave": ["interleave", "sample_logs/interleaving", "--n-resamples", "200"],
    "compare": ["compare", "sample_logs/qrels.txt", "sample_logs/runs/s260.run",
                "sample_logs/runs/s040.run", "-m", "ndcg@10", "-m", "map"],
    "abtest": ["abtest", "sample_logs/ab", "--experiment", "s260_vs_s040"],
}


def _cli(argv: list[str], capsys, monkeypatch) -> tuple[int, str, str]:
    from onlineeval.cli import main

    monkeypatch.chdir(ROOT)
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out, got.err


#: the API function with which each CLI case's command computes what it prints
CLI_COMPUTES = {
    "online": ("onlineeval.online", "online_metrics"),
    "positions": ("onlineeval.online", "position_ctr"),
    "top-queries": ("onlineeval.online", "top_queries"),
    "power": ("onlineeval.abtest", "power"),
    "interleave": ("onlineeval.interleaving", "interleaving_readout"),
    "compare": ("onlineeval.offline.compare", "compare"),
    "abtest": ("onlineeval.abtest", "abtest"),
}


class _CliRuns(dict):
    """``_cli([*CLI_CASES[name], "--format", "json"])`` by name (exit status, stdout,
    stderr), and in ``computed[name]`` the calls of its :data:`CLI_COMPUTES` function made
    in that run: each call's arguments (:func:`_request`) and a copy of what it returned."""

    def __init__(self) -> None:
        super().__init__()
        self.computed: dict[str, list[tuple[str, object]]] = {}


def _request(args: tuple, kwargs: dict) -> str:
    """The arguments of a call as text, a log as its source and load report."""
    def one(v):
        if isinstance(v, onlineeval.Logs):
            return f"<Logs {v.source}: {v.report.summary()}>"
        return repr(v)
    return repr(([one(v) for v in args], {k: one(v) for k, v in sorted(kwargs.items())}))


@pytest.fixture(scope="module")
def cli_json() -> _CliRuns:
    """Each JSON case run once for the tests that read it (filled on first use)."""
    return _CliRuns()


def _cli_json(name: str, cli_json, capsys, monkeypatch) -> tuple[int, str, str]:
    if name not in cli_json:
        module, attr = CLI_COMPUTES[name]
        compute = getattr(importlib.import_module(module), attr)
        calls = cli_json.computed[name] = []

        def recorded(*args, **kwargs):
            out = compute(*args, **kwargs)
            calls.append((_request(args, kwargs), copy.deepcopy(out)))
            return out

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(importlib.import_module(module), attr, recorded)
            cli_json[name] = _cli([*CLI_CASES[name], "--format", "json"], capsys, monkeypatch)
    return cli_json[name]


@pytest.mark.parametrize("name", sorted(CLI_CASES))
def test_cli_json_is_only_json_and_equals_csv(name, cli_json, capsys, monkeypatch):
    code, out_json, _ = _cli_json(name, cli_json, capsys, monkeypatch)
    assert code == 0
    parsed = json.loads(out_json)  # stdout holds nothing but the JSON
    records = parsed["results"] if name == "abtest" else parsed
    # the command with --format csv, all of it but the computation, which is the JSON run's:
    # the same function asked for the same thing (tests below check that a computation
    # afresh equals the JSON)
    made = list(cli_json.computed[name])
    assert len(made) == 1
    module, attr = CLI_COMPUTES[name]

    def replayed(*args, **kwargs):
        request, out = made.pop(0)
        assert _request(args, kwargs) == request
        return copy.deepcopy(out)

    monkeypatch.setattr(importlib.import_module(module), attr, replayed)
    code, out_csv, _ = _cli([*CLI_CASES[name], "--format", "csv"], capsys, monkeypatch)
    assert code == 0 and not made
    j = pd.DataFrame(records)
    c = pd.read_csv(io.StringIO(out_csv), keep_default_na=False, na_values=[""])
    assert list(j.columns) == list(c.columns) and len(j) == len(c)
    for col in j.columns:
        a, b = j[col], c[col]
        if pd.api.types.is_bool_dtype(a) or pd.api.types.is_bool_dtype(b):
            assert a.tolist() == b.tolist(), col
        elif pd.api.types.is_numeric_dtype(b) and not pd.api.types.is_bool_dtype(b):
            np.testing.assert_allclose(a.astype(float), b.astype(float), rtol=1e-12,
                                       err_msg=col)
        else:
            assert [None if pd.isna(v) else str(v) for v in a] == \
                [None if pd.isna(v) else str(v) for v in b], col


def test_cli_json_equals_the_api(cli_json, capsys, monkeypatch):
    code, out, _ = _cli_json("abtest", cli_json, capsys, monkeypatch)
    assert code == 0
    api = onlineeval.abtest(onlineeval.load_logs(SAMPLE / "ab"), experiment="s260_vs_s040")
    parsed = json.loads(out)
    assert parsed["srm"]["units"] == api.attrs["srm"]["units"]
    got = pd.DataFrame(parsed["results"])
    for col in ("estimate", "ci_low", "ci_high", "p_value", "p_adjusted"):
        np.testing.assert_allclose(got[col], api[col], rtol=1e-12, err_msg=col)
    code, out, _ = _cli_json("online", cli_json, capsys, monkeypatch)
    assert code == 0
    api = onlineeval.online_metrics(onlineeval.load_logs(SAMPLE / "ab"),
                                    by=["experiment", "variant"])
    got = pd.DataFrame(json.loads(out))
    for col in ("searches", "ctr", "abandonment_rate", "click_mrr"):
        np.testing.assert_allclose(got[col].astype(float), api[col].astype(float), rtol=1e-12)


ERROR_CASES = [
    ["abtest", "sample_logs/ab", "--experiment", "nope", "--format", "json"],
    ["online", "sample_logs/ab", "--by", "nope", "--format", "json"],
    ["positions", "/nonexistent-logs"],
    ["top-queries", "sample_logs/ab", "-n", "0"],
    ["power", "sample_logs/ab", "--alpha", "2"],
    ["interleave", "sample_logs/ab", "--format", "json"],
    ["interleave", "sample_logs/interleaving", "--team-a", "zzz"],
    ["compare", "sample_logs/qrels.txt", "nope.run", "sample_logs/runs/s040.run", "-m", "map"],
    ["agree", "sample_logs/qrels.txt"],
    ["trec-eval", "-m", "bogus", "sample_logs/qrels.txt", "sample_logs/runs/s040.run"],
    ["interleave-lists", "sample_logs/runs/s040.run"],
    ["report", "/nonexistent.toml", "-o", "/tmp/never-written.html"],
    ["demo", "--study", "/nonexistent.toml", "-o", "/tmp/never-written"],
]


@pytest.mark.parametrize("argv", ERROR_CASES, ids=[" ".join(a[:2]) for a in ERROR_CASES])
def test_cli_errors_are_one_line_on_stderr_with_exit_2(argv, capsys, monkeypatch):
    code, out, err = _cli(argv, capsys, monkeypatch)
    assert code == 2 and out == ""
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and errors[0].startswith(f"onlineeval {argv[0]}: error: ")
    # the only other stderr lines are the load report, printed before the error
    others = [line for line in err.splitlines() if "error:" not in line]
    assert all(line.startswith(("loaded ", "  ")) for line in others), others


# --- more CLI output formats (the README's and docs' examples: tests/test_docs.py) -------------

def test_cli_entry_point_prints_json_only(tmp_path):
    """Through the installed console script (a real process): nothing but JSON on stdout."""
    p = subprocess.run([sys.executable, "-m", "onlineeval", "positions", "sample_logs/ab",
                        "--format", "json"], capture_output=True, text=True, cwd=ROOT,
                       check=False)
    assert p.returncode == 0, p.stderr
    assert isinstance(json.loads(p.stdout), list)
    assert p.stderr.startswith("loaded sample_logs/ab")


def test_agree_json_equals_the_api(capsys, monkeypatch):
    code, out, _ = _cli(["agree", "sample_logs/experiments.csv", "--format", "json"], capsys,
                        monkeypatch)
    assert code == 0
    got = json.loads(out)
    table = pd.read_csv(SAMPLE / "experiments.csv")
    api = onlineeval.agreement(table, offline_p="offline_p", online_p="online_p")
    for key in ("n", "n_agree", "n_disagree", "n_zero"):
        assert got["summary"][key] == api.stats[key]
    for key in ("sign_agreement", "sign_ci_low", "sign_ci_high", "kendall_tau", "kendall_p",
                "spearman_rho", "spearman_p"):
        assert got["summary"][key] == pytest.approx(api.stats[key], rel=1e-12)
    tau = scipy.stats.kendalltau(table["offline_delta"], table["online_delta"])
    assert got["summary"]["kendall_tau"] == pytest.approx(tau.statistic, rel=1e-12)
    assert {d["decision"]: d["count"] for d in got["decisions"]} == \
        api.decisions.set_index("decision")["count"].to_dict()


def test_simulate_json_equals_csv_and_the_manifest(tmp_path, capsys, monkeypatch):
    argv = ["simulate", str(tmp_path / "s"), "--seed", "5", "--users", "40", "--queries", "4",
            "--pairs", "s200:s040", "--force"]
    code, out_json, _ = _cli([*argv, "--format", "json"], capsys, monkeypatch)
    assert code == 0
    code, out_csv, _ = _cli([*argv, "--format", "csv"], capsys, monkeypatch)
    j, c = pd.DataFrame(json.loads(out_json)), pd.read_csv(io.StringIO(out_csv))
    assert list(j.columns) == list(c.columns) and len(j) == 1
    for col in j.columns:
        if pd.api.types.is_numeric_dtype(c[col]):
            np.testing.assert_allclose(j[col].astype(float), c[col].astype(float), rtol=1e-12)
        else:
            assert j[col].astype(str).tolist() == c[col].astype(str).tolist()
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert j.loc[0, "ndcg10_delta"] == pytest.approx(manifest["experiments"][0]["ndcg10_delta"])


def test_convert_json_is_only_json(tmp_path, capsys, monkeypatch):
    code, out, _ = _cli(["convert", "--from", "yandex-wscd",
                         "tests/data/yandex_wscd/testSample.head5000", str(tmp_path / "yx"),
                         "--format", "json"], capsys, monkeypatch)
    assert code == 0
    parsed = json.loads(out)
    searches = pd.read_parquet(next((tmp_path / "yx").glob("searches*")))
    assert str(len(searches)) in json.dumps(parsed)


def test_report_json_names_the_negated_columns(audit):
    _, _, data, _, _ = audit
    assert data["table_negated_columns"] == ["ab:abandonment_rate"]
    row = data["table"][0]
    e = data["experiments"][0]
    abandonment = next(r for r in e["ab"] if r["metric"] == "abandonment_rate")
    assert row["ab:abandonment_rate"] == pytest.approx(-abandonment["estimate"], rel=1e-12)
    # the per-query exclusion counts are in the JSON too
    for w in e["per_query_agreement"].values():
        assert {"n_online_undefined", "n_without_query"} <= set(w)


def test_srm_banner_and_notes_are_real_on_a_simulated_study(tmp_path):
    """A simulated study where one experiment loses 70% of its control users: the report shows
    the SRM banner for that experiment only, with the API's χ² p-value, and every other
    warning it shows is one the API raises."""
    from onlineeval.simulate import Pair, simulate
    from onlineeval.simulate.interleaving import simulate_interleaving_study

    simulate(tmp_path, 11, users_per_experiment=400, n_queries=8,
             rankers={"good": 0.3, "bad": 1.5}, pairs=[Pair("bad", "good"), Pair("good", "bad")])
    simulate_interleaving_study(tmp_path, tmp_path / "il", users_per_experiment=60)
    ab = tmp_path / "ab"
    s = pd.read_parquet(ab / "searches.parquet")
    users = s.loc[(s["experiment"] == "bad_vs_good") & (s["variant"] == "control"), "user_id"]
    users = users.drop_duplicates()
    gone = set(users.iloc[: int(len(users) * 0.7)])
    keep = ~s["user_id"].isin(gone)
    # and five searches of the other experiment lose their qid
    no_qid = s.index[s["experiment"] == "good_vs_bad"][:5]
    s["qid"] = s["qid"].astype(object)
    s.loc[no_qid, "qid"] = None
    s[keep].to_parquet(ab / "searches.parquet")
    kept = set(s.loc[keep, "search_id"])
    for table in ("results", "clicks"):
        t = pd.read_parquet(ab / f"{table}.parquet")
        t[t["search_id"].isin(kept)].to_parquet(ab / f"{table}.parquet")
    (tmp_path / "study.toml").write_text(
        'title = "srm"\nqrels = "qrels.txt"\nab_logs = "ab"\ninterleaving_logs = "il"\n'
        'measures = ["ndcg_cut_10"]\nonline_metrics = ["ctr"]\ntest = "t"\n'
        '[[experiment]]\nname = "bad_vs_good"\ncontrol_run = "runs/bad.run"\n'
        'treatment_run = "runs/good.run"\n'
        '[[experiment]]\nname = "good_vs_bad"\ncontrol_run = "runs/good.run"\n'
        'treatment_run = "runs/bad.run"\n', encoding="utf-8")
    report = write_report(tmp_path / "study.toml", tmp_path / "r.html")
    page = _Page()
    page.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
    logs = onlineeval.load_logs(ab)
    for exp in report.experiments:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            api = onlineeval.abtest(logs, experiment=exp.experiment.name, metrics=["ctr"])
        srm = api.attrs["srm"]
        assert exp.srm["mismatch"] == srm["mismatch"]
        assert srm["mismatch"] == (exp.experiment.name == "bad_vs_good")
        messages = [str(w.message) for w in caught if str(w.message) != api.attrs["srm_message"]]
        assert [n for n in exp.notes if n.startswith("A/B: ")] == [f"A/B: {m}" for m in messages]
    html_text = (tmp_path / "r.html").read_text(encoding="utf-8")
    banner = re.search(r"SAMPLE RATIO MISMATCH</b> in: ([^<]*?) — ", html_text)
    assert banner and banner.group(1) == "bad_vs_good"
    bad = next(r for r in report.experiments if r.experiment.name == "bad_vs_good")
    # each experiment's readout states its check: a mismatch only for bad_vs_good, with the
    # API's p-value and units
    srm_lines = {sec: t for sec, t in page.items if t.startswith("Sample ratio check")}
    assert "MISMATCH" in srm_lines["readout-bad_vs_good-summary"]
    assert "no mismatch" in srm_lines["readout-good_vs_bad-summary"]
    p = re.search(r"χ² p = ([0-9.e+-]+)", srm_lines["readout-bad_vs_good-summary"]).group(1)
    assert shown_equals(p, bad.srm["p_value"])
    box = html.unescape(html_text).split("SAMPLE RATIO MISMATCH</b>: ")[1].split("</div>")[0]
    counts = " ".join(f"{k} {v}" for k, v in bad.srm["units"].items())
    assert f"units {counts.replace(' treatment', ', treatment')}" in box
    # the searches without a qid are counted on the per-query line, not paired as a query
    line = next(t for sec, t in page.items
                if sec == "experiment-good_vs_bad" and "A/B CTR Δ" in t)
    assert "5 searches without a query id" in line and "0 searched but not judged" in line
    other = next(t for sec, t in page.items
                 if sec == "experiment-bad_vs_good" and "A/B CTR Δ" in t)
    assert "0 searches without a query id" in other


def _api_for(name: str) -> pd.DataFrame:
    ab = SAMPLE / "ab"
    if name == "positions":
        return onlineeval.position_ctr(onlineeval.load_logs(ab), by=[])
    if name == "top-queries":
        return onlineeval.top_queries(onlineeval.load_logs(ab), n=5, by=[])
    if name == "power":
        return onlineeval.power(onlineeval.load_logs(ab), experiment="s100_vs_s100",
                                variant="control")
    if name == "interleave":
        # the command reports each pair from its treatment's side (C_vs_T: T)
        return onlineeval.interleaving_readout(onlineeval.load_logs(SAMPLE / "interleaving"),
                                               n_resamples=200, treatment_first=True)
    if name == "compare":
        return onlineeval.offline.compare(SAMPLE / "qrels.txt", SAMPLE / "runs" / "s260.run",
                                          SAMPLE / "runs" / "s040.run", ["ndcg@10", "map"])
    raise AssertionError(name)


@pytest.mark.parametrize("name", ["positions", "top-queries", "power", "interleave", "compare"])
def test_cli_json_numbers_equal_the_api(name, cli_json, capsys, monkeypatch):
    code, out, _ = _cli_json(name, cli_json, capsys, monkeypatch)
    assert code == 0
    got = pd.DataFrame(json.loads(out))
    want = _api_for(name)
    assert len(got) == len(want)
    for col in got.columns:
        if col not in want.columns or col in ("baseline", "run"):
            continue  # compare() names runs by path; the CLI by the path typed
        w = want[col]
        if pd.api.types.is_bool_dtype(w) or not pd.api.types.is_numeric_dtype(w):
            assert [None if pd.isna(v) else str(v) for v in got[col]] == \
                [None if pd.isna(v) else str(v) for v in w], col
        else:
            np.testing.assert_allclose(got[col].astype(float), w.astype(float), rtol=1e-12,
                                       err_msg=f"{name} {col}")
