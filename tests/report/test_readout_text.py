"""The terminal readout's over-time, segment and quantile tables: every row of the readout's
frames shown, spelled by the one formatter, and no line wider than 100 columns, with long
names and many arms (the width rule of the terminal readout)."""

from __future__ import annotations

import re

import pytest

from onlineeval.formatting import WIDTH, count, number, pvalue, when
from onlineeval.readout.text import render_text


def _ci(r) -> str:
    return (f"{number(r['estimate'], signed=True)} [{number(r['ci_low'], signed=True)}, "
            f"{number(r['ci_high'], signed=True)}]")


def _section(text: str, start: str) -> str:
    """The lines from the heading starting with ``start`` to the next blank line."""
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith(start))
    out = []
    for ln in lines[i:]:
        if not ln.strip():
            break
        out.append(ln)
    return "\n".join(out)


@pytest.mark.parametrize("treatments", [1, 3])
def test_every_line_fits_100_columns(readout_of, treatments) -> None:
    text = render_text(readout_of(metrics=14, treatments=treatments))
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    for heading in ("over time (ctr", "segments by device", "quantile metrics"):
        assert heading in text


def test_over_time_tables_show_every_day_and_every_day_since_exposure(readout_of) -> None:
    ro = readout_of()
    text = render_text(ro)
    day = _section(text, "over time (ctr, treatment): cumulative")
    for r in ro.over_time["day"].to_dict("records"):
        # the days in order, each with its Δ and interval
        assert f"{when(r['day'])}  " in day
        assert _ci(r) in day
    since = _section(text, "over time (ctr, treatment): Δ per day since")
    rows = [ln for ln in since.splitlines() if ln[:1].isdigit()]
    assert len(rows) == len(ro.over_time["exposure_day"])
    for ln, r in zip(rows, ro.over_time["exposure_day"].to_dict("records"), strict=True):
        assert ln.split()[0] == count(r["days_since_exposure"])
        assert _ci(r) in ln


def test_segment_table_shows_every_segment_and_the_heterogeneity_test(readout_of) -> None:
    ro = readout_of()
    text = render_text(ro)
    seg = _section(text, "segments by device")
    het = ro.segments["heterogeneity"].iloc[0]
    flat = " ".join(seg.split())
    assert f"Q = {number(het['statistic'])}" in flat and f"p = {pvalue(het['p_value'])}" in flat
    assert "holm-adjusted over the segments" in flat
    effects = ro.segments["effects"]
    for r in effects.to_dict("records"):
        assert _ci(r) in seg
        assert pvalue(r["p_adjusted"]) in seg
        assert count(r["n"]) in seg
    # a long segment name wraps inside its column instead of widening the table
    assert "tablet_" in seg and max(len(ln) for ln in seg.splitlines()) <= WIDTH


def test_quantile_table_shows_each_quantile(readout_of) -> None:
    ro = readout_of(treatments=2)
    text = render_text(ro)
    q = _section(text, "quantile metrics")
    assert "unit-level bootstrap percentile" in " ".join(q.split())
    for r in ro.quantiles.to_dict("records"):
        line = next(ln for ln in q.splitlines()
                    if f"p{round(100 * r['quantile'])}" in ln and _ci(r) in ln)
        assert number(r["control_value"]) in line and number(r["treatment_value"]) in line
        assert pvalue(r["p_value"]) in line


def test_sample_readout_fits_and_shows_the_tables(sample_experiment_logs) -> None:
    """A real readout (the sample logs of one experiment, segments by query id: 100
    segments)."""
    import warnings

    import onlineeval

    sample = sample_experiment_logs("s200_vs_s100")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(sample / "ab", experiment="s200_vs_s100", segments="qid",
                                secondary=())
    text = render_text(ro)
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    seg = _section(text, "segments by qid")
    assert sum(1 for ln in seg.splitlines() if re.match(r"q\d{3} ", ln)) == len(
        ro.segments["effects"])
    day = _section(text, "over time (ctr, treatment): cumulative")
    last = ro.over_time["day"].iloc[-1]
    # the last cumulative day is the whole window: the primary row's Δ
    assert _ci(last) in day
    assert last["estimate"] == pytest.approx(ro.rows("primary")[0].result.estimate, rel=1e-9)
