"""A log of several experiments: the online metrics never pool them without saying so, and
the `online` command separates them by default."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from onlineeval.cli import main
from onlineeval.logs import load_logs
from onlineeval.online import online_metrics, position_ctr

T0 = pd.Timestamp("2024-01-01")


def _frames(experiments=("e1", "e2")):
    """Two searches per (experiment, variant); only e1's control pages are clicked, so
    pooling e1 and e2 halves the control CTR."""
    rows, clicks = [], []
    for i, (e, v) in enumerate((e, v) for e in experiments for v in ("control", "treatment")):
        for k in range(2):
            sid = f"s{i}{k}"
            ts = T0 + pd.Timedelta(minutes=10 * i + k)
            rows.append((sid, f"u{i}", ts, f"q{k}", e, v, 2))
            if (e, v) == (experiments[0], "control"):
                clicks.append((sid, 1, ts + pd.Timedelta(seconds=5), 40000.0))
    s = pd.DataFrame(rows, columns=["search_id", "user_id", "ts", "query", "experiment",
                                    "variant", "n_results"])
    r = pd.DataFrame([(sid, k, f"d{k}") for sid in s["search_id"] for k in (1, 2)],
                     columns=["search_id", "rank", "doc_id"])
    return s, r, pd.DataFrame(clicks, columns=["search_id", "rank", "ts", "dwell_ms"])


def _ctr(s, c, keys):
    clicked = s.assign(c=s["search_id"].isin(c["search_id"]))
    return clicked.groupby(keys)["c"].mean()


def test_grouping_without_experiment_warns_naming_the_experiments():
    s, r, c = _frames()
    logs = load_logs(searches=s, results=r, clicks=c)
    for by in ("variant", (), "day"):
        with pytest.warns(UserWarning, match=r"holds 2 experiments \(e1, e2\) and .* do not "
                                             r"separate them"):
            out = online_metrics(logs, by=by)
    with pytest.warns(UserWarning, match=r"2 experiments \(e1, e2\)"):
        pooled = online_metrics(logs, by="variant").set_index("variant")
    assert pooled.loc["control", "ctr"] == pytest.approx(_ctr(s, c, "variant")["control"])
    with pytest.warns(UserWarning, match=r"2 experiments \(e1, e2\)"):
        position_ctr(logs, by="variant")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = online_metrics(logs, by=["experiment", "variant"])
        position_ctr(logs, by=["experiment"])
    want = _ctr(s, c, ["experiment", "variant"])
    got = out.set_index(["experiment", "variant"])["ctr"]
    pd.testing.assert_series_equal(got.sort_index(), want.astype(float).rename("ctr"),
                                   check_names=False)


def test_one_experiment_is_not_warned_about():
    s, r, c = _frames(("e1",))
    logs = load_logs(searches=s, results=r, clicks=c)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        online_metrics(logs, by="variant")


def test_online_command_separates_experiments_by_default(tmp_path, capsys):
    s, r, c = _frames()
    for name, df in (("searches", s), ("results", r), ("clicks", c)):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    assert main(["online", str(tmp_path), "--format", "csv"]) == 0
    captured = capsys.readouterr()
    out = pd.read_csv(pd.io.common.StringIO(captured.out))
    assert list(out.columns[:2]) == ["experiment", "variant"]
    want = _ctr(s, c, ["experiment", "variant"])
    assert out.set_index(["experiment", "variant"])["ctr"].to_dict() == pytest.approx(
        want.astype(float).to_dict())
    assert "warning" not in captured.err
    # an explicit grouping that pools them is computed, with the warning on stderr
    assert main(["online", str(tmp_path), "--by", "variant", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert "warning: the log" in captured.err and "2 experiments (e1, e2)" in captured.err
    assert list(pd.read_csv(pd.io.common.StringIO(captured.out))["variant"]) == [
        "control", "treatment"]
