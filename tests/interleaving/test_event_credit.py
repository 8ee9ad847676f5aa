"""Interleaving credit by events (interleave --credit EVENT_TYPE): the team whose result led to
an attributed event is credited, on a tiny log computed by hand."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import onlineeval
from onlineeval.cli import main
from onlineeval.errors import InputError, UnknownNameError

T = pd.Timestamp


def _log() -> dict[str, pd.DataFrame]:
    """Four interleaved pages, teams control (odd ranks) and treatment (even ranks):
    p1: click on d2 (treatment), bought d2 -> clicks: treatment, events: treatment
    p2: clicks on d3 and d4 (a tie), bought d3 -> clicks: tie, events: control
    p3: click on d5 (control), an event without a doc (attributed to p3, on no result)
        -> clicks: control, events: none (unmatched)
    p4: click on d8 (treatment), d7 put in the cart (not clicked) -> clicks: treatment,
        purchases: none, add_to_cart: none (unmatched: attributed as the last search)
    """
    pages = {"p1": ("u1", "d1", "d2"), "p2": ("u2", "d3", "d4"), "p3": ("u3", "d5", "d6"),
             "p4": ("u4", "d7", "d8")}
    searches = pd.DataFrame({
        "search_id": list(pages), "user_id": [v[0] for v in pages.values()],
        "ts": [T("2024-01-01 10:00")] * 4, "experiment": ["control_vs_treatment"] * 4})
    results = pd.DataFrame(
        [(p, r + 1, d, "control" if r == 0 else "treatment")
         for p, v in pages.items() for r, d in enumerate(v[1:])],
        columns=["search_id", "rank", "doc_id", "team"])
    clicks = pd.DataFrame({"search_id": ["p1", "p2", "p2", "p3", "p4"],
                           "rank": [2, 1, 2, 1, 2],
                           "ts": [T("2024-01-01 10:01")] * 5})
    events = pd.DataFrame({
        "user_id": ["u1", "u2", "u3", "u4"],
        "ts": [T("2024-01-01 11:00")] * 4,
        "type": ["purchase", "purchase", "purchase", "add_to_cart"],
        "value": [10.0, 20.0, 5.0, None],
        "doc_id": ["d2", "d3", None, "d7"],
    })
    return {"searches": searches, "results": results, "clicks": clicks, "events": events}


def _readout(credit: str) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = onlineeval.interleaving_readout(_log(), credit=credit, treatment_first=True,
                                              n_resamples=20)
    assert len(out) == 1 and out.attrs["credit"] == credit
    return out.iloc[0]


def test_click_credit_by_hand():
    row = _readout("clicks")
    assert row["team_a"] == "treatment"
    assert (row["wins_a"], row["wins_b"], row["ties"]) == (2, 1, 1)
    assert row["impressions"] == 4 and row["impressions_with_clicks"] == 4


def test_event_credit_by_hand():
    row = _readout("purchase")
    assert (row["wins_a"], row["wins_b"], row["ties"]) == (1, 1, 0)
    # pages with a purchase attributed: p1, p2, p3; p3's has no doc, so credits nobody
    assert row["impressions_with_clicks"] == 3 and row["clicks_unmatched"] == 1
    # Δ_AB = (wins_a - wins_b) / (wins_a + wins_b + ties) over pages with a win or tie
    assert row["estimate"] == 0.0
    # add_to_cart: p4's event of d7 is attributed to p4 as u4's last search; d7 was shown
    # by control but never clicked, so it credits nobody
    cart = _readout("add_to_cart")
    assert (cart["wins_a"], cart["wins_b"], cart["ties"]) == (0, 0, 0)
    assert cart["impressions_with_clicks"] == 1 and cart["clicks_unmatched"] == 1


def test_event_credit_needs_events_and_a_known_type():
    with pytest.raises(UnknownNameError, match="add_to_cart, purchase"):
        _readout("booking")
    log = _log()
    del log["events"]
    with pytest.raises(InputError, match="no events table"):
        onlineeval.interleaving_readout(log, credit="purchase")


def test_the_cli_credits_by_events(tmp_path, capsys):
    for name, df in _log().items():
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    assert main(["interleave", str(tmp_path), "--credit", "purchase", "--resamples", "20",
                 "--format", "csv"]) == 0
    out = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert (out.loc[0, "wins_a"], out.loc[0, "wins_b"], out.loc[0, "ties"]) == (1, 1, 0)


def test_the_readout_shows_click_and_event_credit_side_by_side(tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(_log(), n_resamples=20, event_type="purchase")
    il = ro.interleaving
    assert (il.wins, il.losses, il.ties) == (2, 1, 1)                 # clicks
    ev = il.event_credit
    assert ev.credit == "purchase"
    assert (ev.wins, ev.losses, ev.ties, ev.impressions_with_events, ev.unmatched) == \
        (1, 1, 0, 3, 1)
    assert ro.to_dict()["interleaving"]["event_credit"]["wins"] == 1
    (tmp_path / "log").mkdir()
    for name, df in _log().items():
        df.to_csv(tmp_path / "log" / f"{name}.csv", index=False)
    assert main(["readout", str(tmp_path / "log"), "--event-type", "purchase",
                 "-o", str(tmp_path / "r.html")]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "wins 2, losses 1, ties 1 of 4 pages" in text
    assert "credited by purchase events instead of clicks" in text
    assert "wins 1, losses 1, ties 0 of 3 pages with an attributed purchase" in text
    assert "credited by purchase events" in (tmp_path / "r.html").read_text(encoding="utf-8")
    # several event types and none chosen: no event credit (it is an extra the user asks
    # for with event_type=), and no warning about it beside the click credit
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ro = onlineeval.readout(_log(), n_resamples=20)
    assert ro.interleaving.event_credit is None
    assert not [w for w in caught if "several types" in str(w.message)]


def test_without_event_credit_the_readout_says_why_in_one_line(tmp_path, capsys):
    from onlineeval.readout.text import render_text

    # several event types and none chosen: a note naming them and how to choose, no warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ro = onlineeval.readout(_log(), n_resamples=20)
    assert not [w for w in caught if "event" in str(w.message)]
    note = ro.interleaving.event_credit_note
    assert note == ("no credit by events: the log's events are of 2 types (add_to_cart, "
                    "purchase) and none was chosen; choose one with --event-type TYPE "
                    "(event_type=)")
    assert ro.to_dict()["interleaving"]["event_credit_note"] == note
    text = " ".join(render_text(ro).split())
    assert text.count(note) == 1
    # a type chosen: the credit, no note
    chosen = onlineeval.readout(_log(), n_resamples=20, event_type="purchase")
    assert chosen.interleaving.event_credit_note is None
    assert "no credit by events" not in render_text(chosen)
    # no events table: the note says so (and where to read how to give one)
    log = _log()
    del log["events"]
    (tmp_path / "log").mkdir()
    for name, df in log.items():
        df.to_csv(tmp_path / "log" / f"{name}.csv", index=False)
    assert main(["readout", str(tmp_path / "log"),
                 "-o", str(tmp_path / "r.html")]) == 0
    captured = capsys.readouterr()
    out = " ".join(captured.out.split())
    assert ("no credit by events: the interleaving log has no events table (give one to "
            "credit purchases, bookings, ...: docs/conversions.md)") in out
    assert "events" not in captured.err
