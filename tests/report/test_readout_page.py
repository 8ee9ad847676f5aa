"""The HTML readout: every section and image, nothing fetched, no table wider than the page
it declares, and every number the readout's, spelled by the one formatter."""

from __future__ import annotations

import base64
import math
from dataclasses import replace

import pandas as pd
import pytest

from onlineeval.formatting import count, number, percent, pvalue, when
from onlineeval.report import readout_page
from onlineeval.report.readout_page import PARTS, name_of, readout_html, slug

PNG = b"\x89PNG\r\n\x1a\n"

#: the sections of a part that draw a plot when the readout has its data
PLOTTED = ("forest", "over-time", "segments", "position-ctr")


parse = table_width_px = css_px = assert_tables_fit = None  # set by _tools (conftest.py)


@pytest.fixture(autouse=True)
def _tools(html_tools):
    """This module's helpers use the parser and the width rule of conftest.py."""
    global parse, table_width_px, css_px, assert_tables_fit
    parse, table_width_px = html_tools.parse, html_tools.table_width_px
    css_px, assert_tables_fit = html_tools.css_px, html_tools.assert_tables_fit


def check_page(text: str, experiments: list[str]):
    page = parse(text)
    assert page.external == []
    assert "script" not in page.tags and "iframe" not in page.tags
    assert "contents" in page.ids
    for name in experiments:
        for part, _ in PARTS:
            assert f"{slug(name)}-{part}" in page.ids
        for part in PLOTTED:
            imgs = page.images.get(f"{slug(name)}-{part}", [])
            assert len(imgs) == 1, part
            head, b64 = imgs[0].split(",", 1)
            assert head == "data:image/png;base64"
            assert base64.b64decode(b64).startswith(PNG)
    # every link of the table of contents points at an element of the page
    assert page.links and set(page.links) <= set(page.ids)
    assert len(page.ids) == len(set(page.ids))
    assert_tables_fit(page)
    return page


def test_every_section_and_image_and_the_table_of_contents(readout_of, curves) -> None:
    a = replace(readout_of(), position_ctr=curves())
    b = replace(readout_of(name="second", treatments=2), position_ctr=curves(2))
    text = readout_html([a, b])
    check_page(text, [name_of(a), name_of(b)])


def test_names_are_escaped(readout_of) -> None:
    text = readout_html(readout_of())
    assert "exp&lt;1&gt; &amp; $5_vs_$10" in text
    for raw in ("<1>", "<zz>", "<c>", "<t>", "<n>", "<d>"):
        assert raw not in text
    assert "mobile &lt;zz&gt;" in text and "new &lt;t&gt;" in text


def test_no_table_wider_than_the_page_with_long_names_and_many_arms(readout_of,
                                                                 curves) -> None:
    many = replace(readout_of(metrics=14, treatments=5), position_ctr=curves(5))
    page = check_page(readout_html(many), [name_of(many)])
    # rows do not widen a table: 5 arms x 14 metrics stay one table of 70 rows
    assert max(len(t) for t in page.tables) == 1 + 70


def test_a_table_too_wide_is_transposed_and_every_cell_kept() -> None:
    cells = readout_page.text_cell
    header = [cells(f"column {k} " + "w" * 10) for k in range(12)]
    rows = [[cells(f"r{i}c{k}") for k in range(12)] for i in range(3)]
    html_text = readout_page.table(header, rows)
    page = parse(f"<style>{readout_page.CSS}</style>{html_text}")
    assert len(page.tables) >= 1
    shown = [line for t in page.tables for row in t for cell in row for line in cell]
    texts = {"".join(t for t, _ in line) for line in shown}
    assert {f"r{i}c{k}" for i in range(3) for k in range(12)} <= texts
    assert {f"column {k} " + "w" * 10 for k in range(12)} <= texts
    for t in page.tables:
        assert table_width_px(t, readout_page.TABLE_FONT_PX) <= readout_page.PAGE_WIDTH_PX


#: how each kind of number is spelled, read off onlineeval.formatting's functions
SPELLED = {
    "estimate": number, "delta": lambda v: number(v, signed=True), "percent": percent,
    "p": pvalue, "count": count, "level": lambda v: percent(v, signed=False),
    "fraction": lambda v: percent(v, signed=False), "date": when,
}


def _expected(ro) -> dict[str, tuple[object, str]]:
    """Every number the page must show: its key -> (the readout's value, its kind)."""
    k = slug(name_of(ro))
    out: dict[str, tuple[object, str]] = {}
    for r in ro.metrics:
        key = f"{k}/{r.metric}/{r.treatment}"
        res = r.result
        out.update({
            f"{key}/control_value": (r.control_value, "estimate"),
            f"{key}/treatment_value": (r.treatment_value, "estimate"),
            **_interval(f"{key}/estimate", res.estimate, res.ci_low, res.ci_high),
            **_interval(f"{key}/rel_lift", r.rel_lift, r.rel_ci_low, r.rel_ci_high, "percent"),
            f"{key}/mde": (r.mde, "estimate"), f"{key}/mde_rel": (r.mde_rel, "fraction"),
            f"{key}/n": (res.n, "count"), f"{key}/units_needed": (r.units_needed, "count"),
            # the p-value the row's decision reads, as the terminal readout shows it
            f"{key}/p": ({"primary": res.p_adjusted, "guardrail": r.ni_p_value}.get(
                r.role, res.p_value), "p"),
        })
        if r.role == "primary":
            out[f"{key}/ci_level"] = (res.ci_level, "level")
            out[f"{key}/family_size"] = (res.family_size, "count")
        if r.role == "guardrail":
            out[f"{key}/margin"] = (r.margin, "fraction" if r.margin_relative else "estimate")
    if ro.srm is not None:
        out[f"{k}/srm/p_value"] = (ro.srm.p_value, "p")
    for arm, n in ro.units.items():
        out[f"{k}/units/{arm}"] = (n, "count")
    if ro.window is not None and ro.window.first_exposure is not None:
        out[f"{k}/window/first_exposure"] = (ro.window.first_exposure, "date")
        out[f"{k}/window/last_exposure"] = (ro.window.last_exposure, "date")
        out[f"{k}/window/days"] = (ro.window.days, "count")
    if ro.interleaving is not None:
        out.update(_expected_interleaving(ro, f"{k}/interleaving"))
    if ro.offline is not None:
        out.update(_expected_offline(ro, f"{k}/offline"))
    if ro.segments is not None:
        out.update(_expected_segments(ro, f"{k}/segment"))
    if ro.quantiles is not None:
        out.update(_expected_quantiles(ro, f"{k}/quantile"))
    return out


def _expected_interleaving(ro, i: str) -> dict[str, tuple[object, str]]:
    out: dict[str, tuple[object, str]] = {}
    il = ro.interleaving
    for name, res in (("", il.result), ("/per_query", il.per_query)):
        out.update(_interval(f"{i}{name}/estimate", res.estimate, res.ci_low, res.ci_high))
        out[f"{i}{name}/p_value"] = (res.p_value, "p")
    out[f"{i}/n"] = (il.result.n, "count")
    out[f"{i}/per_query/n"] = (il.per_query.n, "count")
    out[f"{i}/n_queries"] = (il.n_queries, "count")
    for name in ("wins", "losses", "ties", "impressions"):
        out[f"{i}/{name}"] = (getattr(il, name), "count")
    s = il.sensitivity
    for name, kind in (("ab_units_needed", "count"), ("ab_units", "count"),
                       ("ab_t", "estimate"), ("interleaving_users", "count"),
                       ("interleaving_t", "estimate"), ("ratio", "estimate")):
        out[f"{i}/{name}"] = (getattr(s, name), kind)
    # the 15 queries with the most pages (ties: by query id)
    q = "query" if "query" in il.queries.columns else "qid"
    top = il.queries.sort_values(["pages", q], ascending=[False, True]).head(15)
    for _, r in top.iterrows():
        for name in ("pages", "wins_t", "wins_o", "ties"):
            out[f"{i}/query/{r[q]}/{name}"] = (r[name], "count")
        out[f"{i}/query/{r[q]}/delta_q"] = (r["delta_q"], "delta")
    return out


def _interval(key: str, value: object, low: object, high: object,
              kind: str = "delta") -> dict[str, tuple[object, str]]:
    """The keys of a value shown with its interval (``key``, ``key:ci_low``, ...)."""
    return {key: (value, kind), f"{key}:ci_low": (low, kind), f"{key}:ci_high": (high, kind)}


def _expected_offline(ro, k: str) -> dict[str, tuple[object, str]]:
    out: dict[str, tuple[object, str]] = {}
    for _, r in ro.offline.iterrows():
        key = f"{k}/{r['measure']}"
        out.update(_interval(f"{key}/estimate", r["estimate"], r["ci_low"], r["ci_high"]))
        out[f"{key}/p"] = (r["p_adjusted"], "p")
        out[f"{key}/n"] = (r["n"], "count")
    return out


def _expected_segments(ro, k: str) -> dict[str, tuple[object, str]]:
    out: dict[str, tuple[object, str]] = {}
    het = ro.segments["heterogeneity"].set_index(["metric", "variant"])["p_value"]
    for _, r in ro.segments["effects"].iterrows():
        key = f"{k}/{r['metric']}/{r['variant']}"
        out[f"{key}/heterogeneity_p"] = (het[(r["metric"], r["variant"])], "p")
        key += f"/{r['segment']}"
        out.update(_interval(f"{key}/estimate", r["estimate"], r["ci_low"], r["ci_high"]))
        out[f"{key}/n"] = (r["n"], "count")
        out[f"{key}/p"] = (r["p_adjusted"], "p")
    return out


def _expected_quantiles(ro, k: str) -> dict[str, tuple[object, str]]:
    out: dict[str, tuple[object, str]] = {}
    for _, r in ro.quantiles.iterrows():
        key = f"{k}/{r['metric']}/{r['variant']}/{r['quantile']}"
        out[f"{key}/quantile"] = (r["quantile"], "estimate")
        out[f"{key}/control_value"] = (r["control_value"], "estimate")
        out[f"{key}/treatment_value"] = (r["treatment_value"], "estimate")
        out.update(_interval(f"{key}/estimate", r["estimate"], r["ci_low"], r["ci_high"]))
    return out


def _close(text: str, kind: str, value: object) -> bool:
    """The shown text read back as a number is the value to the precision shown."""
    if kind == "date":
        ts = pd.Timestamp(value)
        return text in (ts.strftime("%Y-%m-%d %H:%M"), ts.strftime("%Y-%m-%d"))
    t = text.replace(",", "").rstrip("%")
    per_cent = kind in ("percent", "level", "fraction")
    shown = float(t) / (100 if per_cent else 1)
    v = float(value)
    if kind == "count":
        return shown == round(v)
    mantissa = t.split("e")[0].lstrip("+-")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(t.split("e")[1]) if "e" in t else 0
    half_unit = 0.5 * 10.0 ** (exponent - decimals) / (100 if per_cent else 1)
    return math.isclose(shown, v, abs_tol=half_unit * 1.0001)


@pytest.mark.parametrize("treatments", [1, 3])
def test_every_number_is_the_readouts_spelled_by_the_one_formatter(readout_of,
                                                                    treatments) -> None:
    ro = readout_of(treatments=treatments)
    page = parse(readout_html(ro))
    shown: dict[str, set[str]] = {}
    kinds: dict[str, str] = {}
    for key, kind, text in page.numbers:
        shown.setdefault(key, set()).add(text)
        kinds[key] = kind
    expected = _expected(ro)
    assert not set(expected) - set(shown)
    # no number on the page that is not a field of the readout
    assert not set(shown) - set(expected)
    for key, (value, kind) in expected.items():
        assert kinds[key] == kind, key
        # the same number wherever it appears (summary card, table, offline panel)
        assert shown[key] == {SPELLED[kind](value)}, key
        assert _close(next(iter(shown[key])), kind, value), (key, shown[key], value)


def test_srm_mismatch_and_verdict_shown(readout_of) -> None:
    ro = readout_of(srm_p=1e-6, verdict="don't ship")
    text = readout_html(ro)
    assert "SAMPLE RATIO MISMATCH" in text and 'class="card no-ship"' in text
    assert "Verdict: DON&#x27;T SHIP" in text and "MISMATCH</span>" in text
    assert ">1.0e-06<" in text  # p in scientific notation below 1e-4


def test_missing_parts_say_so(readout_of) -> None:
    from dataclasses import replace

    ro = replace(readout_of(), over_time=None, segments=None, quantiles=None,
                 interleaving=None, offline=None, designs=("ab",))
    page = parse(readout_html(ro))
    for part, _ in PARTS:
        assert f"{slug(name_of(ro))}-{part}" in page.ids
    assert set(page.images) == {f"{slug(name_of(ro))}-forest"}
    text = readout_html(ro)
    assert "No offline runs given" in text and "No interleaving log" in text


def test_interleaving_only_readout(readout_of) -> None:
    from dataclasses import replace

    ro = replace(readout_of(name=None), metrics=(), decisions=(), srm=None, units={},
                 over_time=None, segments=None, quantiles=None, designs=("interleaving",))
    page = parse(readout_html(ro))
    assert "readout-experiment-interleaving" in page.ids
    assert any(k.endswith("/interleaving/estimate") for k, _, _ in page.numbers)
    assert "No verdict" in readout_html(ro)


def _numbers(text: str) -> dict[str, set[str]]:
    shown: dict[str, set[str]] = {}
    for key, _, value in parse(text).numbers:
        shown.setdefault(key, set()).add(value)
    return shown


def test_sample_logs_readout_page_api_and_cli_agree(tmp_path, capsys,
                                                   sample_experiment_logs) -> None:
    """The page of a real readout (the sample A/B and interleaving logs of one experiment):
    every section and plot, position CTR per arm from the A/B log, every number the readout
    object's; the CLI's -o page shows the same numbers as the API's."""
    import onlineeval
    from onlineeval.cli import main
    from onlineeval.report import readout_page as readout_page_of

    sample = sample_experiment_logs("s200_vs_s100")
    logs = [onlineeval.load_logs(sample / "ab"), onlineeval.load_logs(sample / "interleaving")]
    args = dict(experiment="s200_vs_s100", guardrails=["abandonment_rate"],
                non_inferiority={"abandonment_rate": "2%"}, secondary=["click_mrr"])
    ro = onlineeval.readout(logs, **args)
    text = readout_page_of.render(ro)
    page = check_page(text, [])
    name = slug(name_of(ro))
    assert {f"{name}-{part}" for part, _ in PARTS} <= set(page.ids)
    for part in ("forest", "over-time", "position-ctr"):
        assert len(page.images.get(f"{name}-{part}", [])) == 1, part
    shown = _numbers(text)
    expected = _expected(ro)
    assert set(shown) == set(expected)
    for key, (value, kind) in expected.items():
        assert shown[key] == {SPELLED[kind](value)}, key
        assert _close(next(iter(shown[key])), kind, value), (key, shown[key], value)
    out = tmp_path / "readout.html"
    code = main(["readout", str(sample / "ab"), str(sample / "interleaving"), "--experiment",
                 "s200_vs_s100", "--guardrails", "abandonment_rate", "--non-inferiority",
                 "abandonment_rate:2%", "--secondary", "click_mrr", "-o", str(out)])
    assert code == 0
    capsys.readouterr()
    assert _numbers(out.read_text(encoding="utf-8")) == shown


def test_study_without_runs_reports_each_experiments_readout(tmp_path,
                                                             sample_experiment_logs) -> None:
    """Issue 14 §2: `onlineeval report` on a study of logs alone (no runs, no qrels): each
    experiment's section is its readout — the same numbers as onlineeval.readout gives —
    and there is no agreement across experiments (it needs runs)."""
    import onlineeval
    from onlineeval.report import build_report, render_html

    sample = sample_experiment_logs("s200_vs_s100")
    study = tmp_path / "study.toml"
    study.write_text("\n".join([
        'title = "logs only"', f'ab_logs = "{sample / "ab"}"',
        f'interleaving_logs = "{sample / "interleaving"}"',
        'online_metrics = ["ctr", "abandonment_rate"]',
        "[[experiment]]", 'name = "s200_vs_s100"',
    ]) + "\n", encoding="utf-8")
    report = build_report(study)
    assert report.agreements == {}  # the agreement needs runs
    (r,) = report.experiments
    assert r.offline is None and r.readout is not None
    # no runs to name the teams: the readout's rule did (experiment CONTROL_vs_TREATMENT)
    assert (r.readout.interleaving.control_team, r.readout.interleaving.treatment_team) == \
        ("s200", "s100")
    text = render_html(report)
    page = check_page(text, [])
    name = slug("s200_vs_s100")
    assert {f"{name}-{part}" for part, _ in PARTS} <= set(page.ids)
    direct = onlineeval.readout(
        [onlineeval.load_logs(sample / "ab"), onlineeval.load_logs(sample / "interleaving")],
        experiment="s200_vs_s100", primary="ctr", secondary=["abandonment_rate"],
        n_resamples=2000, seed=0)
    expected = _expected(direct)
    shown = {k: v for k, v in _numbers(text).items() if k.startswith(name + "/")}
    assert set(shown) == set(expected)
    for key, (value, kind) in expected.items():
        assert shown[key] == {SPELLED[kind](value)}, key
    assert "No offline runs given" in text


def test_sequential_panel_marks_the_first_stopping_look(sample_experiment_logs) -> None:
    """The page drawn from the logs shows the confidence sequence of the primary metric and
    of the interleaving preference, and names the first look at which each stops: the first
    row of onlineeval.sequential_readout with stop set, and the first look whose
    fixed-horizon interval excludes 0. Without logs the part says so."""
    import re
    import warnings

    import onlineeval
    from onlineeval.report import readout_page as readout_page_of

    sample = sample_experiment_logs("s130_vs_s080")
    logs = [onlineeval.load_logs(sample / "ab"), onlineeval.load_logs(sample / "interleaving")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(logs, experiment="s130_vs_s080")
        text = readout_page_of.render(ro, logs)
        ab = onlineeval.sequential_readout(logs[0], "control", "treatment", "ctr",
                                           experiment="s130_vs_s080")
        il = onlineeval.sequential_readout(logs[1], experiment="s130_vs_s080")
    page = check_page(text, [])
    part = f"{slug(name_of(ro))}-sequential"
    assert len(page.images.get(part, [])) == 1
    section = text[text.index(f'<section id="{part}">'):]
    section = section[:section.index("</section>")]
    for metric, rows in (("ctr", ab), ("preference", il)):
        stop = rows[rows["stop"]].iloc[0]
        fixed = rows[(rows["fixed_ci_low"] > 0) | (rows["fixed_ci_high"] < 0)].iloc[0]
        assert (f"{metric}: the sequential test would have stopped on {stop['look_end']} "
                f"(look {stop['look']} of {len(rows)}); the fixed-horizon interval first "
                f"excludes 0 on {fixed['look_end']}.") in section
    assert re.search(r"always-valid 95% interval", section)
    assert "No sequential readout" in readout_html(ro)
