"""The interleaving readout's window: pages before ``start`` or from ``end`` on are left out,
counted, and the readout states the pages it covers. Expected numbers come from the hand
outcomes of the conftest's pages, filtered with pandas."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from onlineeval.cli import main
from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.interleaving import FIELDS, interleaving_readout

# hand outcomes of experiment e1's pages (see conftest): a = x wins, b = y wins
E1_OUTCOMES = {"p1": "a", "p2": "b", "p3": "tie", "p4": "none", "p5": "none", "p6": "a",
               "p7": "a"}
INTERLEAVED = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "m1", "m2"]  # p8 has no team


def _expected(s, start=None, end=None):
    pages = s[s["search_id"].isin(INTERLEAVED)].set_index("search_id")
    inside = pd.Series(True, index=pages.index)
    if start is not None:
        inside &= pages["ts"] >= pd.Timestamp(start)
    if end is not None:
        inside &= pages["ts"] < pd.Timestamp(end)
    e1 = pd.Series(E1_OUTCOMES)[lambda o: o.index.isin(inside[inside].index)]
    counts = {"impressions": len(e1), "wins_a": int((e1 == "a").sum()),
              "wins_b": int((e1 == "b").sum()), "ties": int((e1 == "tie").sum())}
    before = int((pages["ts"] < pd.Timestamp(start)).sum()) if start is not None else 0
    after = int((pages["ts"] >= pd.Timestamp(end)).sum()) if end is not None else 0
    kept = pages.loc[inside, "ts"]
    return counts, before, after, kept.min(), kept.max(), set(pages.loc[inside, "experiment"])


@pytest.mark.parametrize(("start", "end"), [
    (None, "2024-03-02"), ("2024-03-02", None), ("2024-03-01 10:02:00", "2024-03-01 10:09:00"),
])
def test_pages_outside_the_window_are_left_out_and_counted(logs, hand_frames, start, end,
                                                          summary_oracle):
    counts, before, after, first, last, experiments = _expected(hand_frames[0], start, end)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the uncredited click of p5
        out = interleaving_readout(logs, start=start, end=end, n_resamples=20)
    assert set(out["experiment"]) == experiments
    row = out[out["experiment"] == "e1"].iloc[0]
    assert {k: int(row[k]) for k in counts} == counts
    window = out.attrs["window"]
    assert window["pages_before_window"] == before and window["pages_after_window"] == after
    assert (window["first_page"], window["last_page"]) == (first, last)
    assert window["start"] == (None if start is None else pd.Timestamp(start))
    assert window["end"] == (None if end is None else pd.Timestamp(end))
    assert before + after > 0
    # the SQL-only summary reads the same pages
    sql = summary_oracle(logs, "e1", start=start, end=end).iloc[0]
    assert {k: int(sql[k]) for k in counts} == counts


def test_a_window_with_a_zone_is_read_in_utc(logs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = interleaving_readout(logs, "e1", start="2024-03-02T11:00:00+01:00", n_resamples=20)
        b = interleaving_readout(logs, "e1", start="2024-03-02 10:00:00", n_resamples=20)
    pd.testing.assert_frame_equal(a, b)
    assert a.iloc[0]["impressions"] == 1  # p7 at 10:06 UTC on 2 March


def test_window_errors(logs):
    with pytest.raises(InputError, match=r"in the window \(0 interleaved pages before its "
                                         r"start, 7 at or after its end\)"):  # e1: p1-p7
        interleaving_readout(logs, "e1", end="2024-03-01 09:00")
    with pytest.raises(InvalidParameterError, match="before its end"):
        interleaving_readout(logs, start="2024-03-02", end="2024-03-01")
    with pytest.raises(InvalidParameterError, match="timestamp like"):
        interleaving_readout(logs, start="now")


def test_pages_without_an_experiment_beside_named_ones_are_warned_about(hand_frames):
    from onlineeval.logs import load_logs

    s, r, c = hand_frames
    s.loc[s["search_id"].isin(["m1", "m2"]), "experiment"] = None
    logs = load_logs(searches=s, results=r, clicks=c)
    with pytest.warns(UserWarning, match=r"have no experiment: they are read out together as "
                                         r"experiment None, beside the named experiments \(e1\)"):
        out = interleaving_readout(logs, n_resamples=20)
    assert out["experiment"].isna().sum() == 3  # the three pairs of the multileaved pages
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        interleaving_readout(logs, "e1", n_resamples=20)
    assert not any("no experiment" in str(w.message) for w in caught)


def test_cli_window(tmp_path, hand_frames, capsys):
    s, r, c = hand_frames
    s.to_csv(tmp_path / "searches.csv", index=False)
    r.to_csv(tmp_path / "results.csv", index=False)
    c.to_csv(tmp_path / "clicks.csv", index=False)
    counts, _, after, first, last, _ = _expected(s, end="2024-03-02")
    assert main(["interleave", str(tmp_path), "--experiment", "e1", "--end", "2024-03-02",
                 "--format", "json", "--n-resamples", "20"]) == 0
    captured = capsys.readouterr()
    (rec,) = json.loads(captured.out)
    assert list(rec) == list(FIELDS)
    assert {k: rec[k] for k in counts} == counts
    e1_last = pd.Timestamp("2024-03-01 10:05:00")  # p6: e1's last page in the window
    assert (f"window: ts < 2024-03-02 00:00:00; first page {first}, last page {e1_last}; "
            f"left out: {after} pages at or after --end") in captured.err
    assert main(["interleave", str(tmp_path), "--start", "2024-03-03"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no interleaved pages" in err and "before its start" in err
