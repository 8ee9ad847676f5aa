"""Events (conversions, revenue): loading, attribution rules and the outcome metrics, against
values computed by hand on a tiny log, and against an independent pandas computation on a
larger simulated-shaped log."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import InvalidParameterError, SchemaError, UnknownNameError
from onlineeval.online.attribution import UnattributedEventsWarning

T = pd.Timestamp


def _tiny() -> dict[str, pd.DataFrame]:
    """u1 (A): s1 10:00 clicked d1 at 10:01, s2 11:00 clicked d2 at 11:01 (two derived
    sessions: 59 min apart); u2 (B): s3 10:00, s5 10:20 (one session); u3 (B): s4 10:00."""
    searches = pd.DataFrame({
        "search_id": ["s1", "s2", "s3", "s4", "s5"],
        "user_id": ["u1", "u1", "u2", "u3", "u2"],
        "ts": [T("2024-01-01 10:00"), T("2024-01-01 11:00"), T("2024-01-01 10:00"),
               T("2024-01-01 10:00"), T("2024-01-01 10:20")],
        "variant": ["A", "A", "B", "B", "B"],
    })
    results = pd.DataFrame({"search_id": ["s1", "s1", "s2", "s2", "s3", "s4", "s5"],
                            "rank": [1, 2, 1, 2, 1, 1, 1],
                            "doc_id": ["d1", "d2", "d2", "d1", "d1", "d1", "d1"]})
    clicks = pd.DataFrame({"search_id": ["s1", "s2"], "rank": [1, 1],
                           "ts": [T("2024-01-01 10:01"), T("2024-01-01 11:01")]})
    events = pd.DataFrame({
        # 1: clicked d1 on s1 (s2 is later, but shows no click on d1) -> s1, clicked_doc
        # 2: no doc -> u2's last search before 10:10 is s3 (s5 comes after) -> last_search
        # 3: before every search of u1 -> no_earlier_search
        # 4: a user without searches -> unknown_user
        # 5: names s4 (before it: direct attribution ignores times) -> search_id
        # 6: names a search the log lacks -> unknown_search (never moved to s1)
        # 7: exactly 24 h after s4 -> last_search (the window end is inclusive)
        # 8: 24 h + 1 s after s4 -> outside_window
        # 9: exactly 24 h after the click on d2 (24 h 1 min after s2) -> clicked_doc s2
        "user_id": ["u1", "u2", "u1", "u9", None, "u1", "u3", "u3", "u1"],
        "ts": [T("2024-01-01 12:05"), T("2024-01-01 10:10"), T("2024-01-01 09:10"),
               T("2024-01-01 10:10"), T("2024-01-01 09:00"), T("2024-01-01 10:30"),
               T("2024-01-02 10:00:00"), T("2024-01-02 10:00:01"), T("2024-01-02 11:01")],
        "type": ["purchase", "purchase", "purchase", "purchase", "purchase", "purchase",
                 "add_to_cart", "add_to_cart", "purchase"],
        "value": [10.0, 5.0, 1.0, 1.0, 7.0, 2.0, None, 3.0, 4.0],
        "search_id": [None, None, None, None, "s4", "s99", None, None, None],
        "doc_id": ["d1", None, None, None, None, None, None, None, "d2"],
    })
    return {"searches": searches, "results": results, "clicks": clicks, "events": events}


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _attribution(**kwargs) -> list[tuple]:
    df = _quiet(onlineeval.attribute_events, _tiny(), **kwargs)
    df = df.sort_values(["ts", "type"]).reset_index(drop=True)
    return [(r.search_id if isinstance(r.search_id, str) else None,
             r.rule if isinstance(r.rule, str) else None,
             r.reason if isinstance(r.reason, str) else None) for r in df.itertuples()]


# the tiny log's events in ts order (then type): what each rule gives, by hand
BY_HAND_24H = {
    T("2024-01-01 09:00"): ("s4", "search_id", None),
    T("2024-01-01 09:10"): (None, None, "no_earlier_search"),
    T("2024-01-01 10:10"): [("s3", "last_search", None), (None, None, "unknown_user")],
    T("2024-01-01 10:30"): (None, None, "unknown_search"),
    T("2024-01-01 12:05"): ("s1", "clicked_doc", None),
    T("2024-01-02 10:00:00"): ("s4", "last_search", None),
    T("2024-01-02 10:00:01"): (None, None, "outside_window"),
    T("2024-01-02 11:01"): ("s2", "clicked_doc", None),
}


def _expected(table: dict) -> list[tuple]:
    out = []
    for _, v in sorted(table.items()):
        out += v if isinstance(v, list) else [v]
    return out


def test_every_attribution_rule_by_hand():
    got = _quiet(onlineeval.attribute_events, _tiny())
    got = got.sort_values(["ts", "user_id"], na_position="first").reset_index(drop=True)
    rows = [(r.search_id if isinstance(r.search_id, str) else None,
             r.rule if isinstance(r.rule, str) else None,
             r.reason if isinstance(r.reason, str) else None) for r in got.itertuples()]
    assert rows == _expected(BY_HAND_24H)
    assert len(got) == 9 and sorted(got["event_no"]) == list(range(1, 10))


def test_a_shorter_window_moves_events_to_their_reasons():
    # 30 min: the click on d1 (10:01) is too old for event 1 at 12:05, and u1's last search
    # before it (s2 at 11:00) is 65 min old; event 2 (10 min after s3) stays; the direct
    # event 5 ignores the window
    got = dict(zip(*(_quiet(onlineeval.attribute_events, _tiny(),
                            attribution_window="30min")[c] for c in ("ts", "reason")),
                   strict=True))
    assert got[T("2024-01-01 12:05")] == "outside_window"
    assert got[T("2024-01-02 10:00:00")] == "outside_window"
    assert got[T("2024-01-02 11:01")] == "outside_window"
    a = _quiet(onlineeval.attribute_events, _tiny(), attribution_window=0.5)
    assert a.set_index("ts").loc[T("2024-01-01 09:00"), "search_id"] == "s4"
    assert a.set_index("ts").loc[T("2024-01-01 10:10")].sort_values("user_id")[
        "search_id"].iloc[0] == "s3"


def test_the_window_edge_is_inclusive_to_the_microsecond():
    frames = _tiny()
    edge = _quiet(onlineeval.attribute_events, frames, attribution_window=pd.Timedelta("1h"))
    # 1 h after s4 (10:00) would be 11:00; none of the u3 events is; a window of exactly
    # 24 h keeps 10:00:00 the next day and a window 1 us shorter drops it
    assert not (edge["search_id"] == "s4").sum() - 1  # only the direct event 5
    just = _quiet(onlineeval.attribute_events, frames,
                  attribution_window=pd.Timedelta("24h") - pd.Timedelta("1us"))
    row = just.set_index("ts").loc[T("2024-01-02 10:00:00")]
    assert row["reason"] == "outside_window"


def test_the_event_type_filter():
    got = _quiet(onlineeval.attribute_events, _tiny(), event_type="add_to_cart")
    assert sorted(got["reason"].fillna("-")) == ["-", "outside_window"]
    with pytest.raises(UnknownNameError, match="add_to_cart, purchase"):
        _quiet(onlineeval.attribute_events, _tiny(), event_type="booking")


def test_unattributable_events_are_warned_by_reason():
    with pytest.warns(UnattributedEventsWarning, match=r"4 of 9 events .* 1 unknown_search, "
                      r"1 unknown_user, 1 no_earlier_search, 1 outside_window"):
        onlineeval.attribute_events(_tiny())


class _Statements:
    """A DuckDB connection that records the SQL text of every ``execute``."""

    def __init__(self, con) -> None:
        self._con, self.executed = con, []

    def execute(self, sql, *args, **kwargs):
        self.executed.append(sql)
        return self._con.execute(sql, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


def test_the_attribution_is_counted_and_warned_once_per_log_and_settings():
    """Every read of the outcome facts attributes the events, but a log counts them (and
    warns) once per window and type, shared by its copies; other settings count anew."""
    from onlineeval import queries
    from onlineeval.online.attribution import (
        attribution_counts,
        attribution_view,
        warn_events,
    )

    logs = onlineeval.load_logs(**_tiny())
    logs.con = statements = _Statements(logs.con)
    hour, purchase = logs.with_events(attribution_window="1h"), logs.with_events(
        event_type="purchase")
    counting = {name: queries.load("online/attribution_counts").render(
        attribution=[attribution_view(log)]) for name, log in
        (("24h", logs), ("1h", hour), ("purchase", purchase))}
    assert len(set(counting.values())) == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            onlineeval.online_metrics(logs, by="variant")
            onlineeval.online_metrics(hour, by="variant")
        onlineeval.attribute_events(logs)
        onlineeval.online_metrics(logs.with_events(attribution_window=24), by="variant")
        onlineeval.online_metrics(purchase, by="variant")
        onlineeval.attribute_events(logs, event_type="purchase")
    assert {name: statements.executed.count(sql) for name, sql in counting.items()} == \
        {"24h": 1, "1h": 1, "purchase": 1}
    lost = [str(w.message) for w in caught if w.category is UnattributedEventsWarning]
    assert len(lost) == 3
    # the counts given are those of a log loaded afresh, and by hand (the events of _tiny)
    fresh = onlineeval.load_logs(**_tiny())
    assert lost[0].startswith("4 of 9 events") and "1 outside_window" in lost[0]
    assert lost[1].startswith("7 of 9 events") and "4 outside_window" in lost[1]
    assert attribution_counts(fresh) == {
        "search_id": 1, "clicked_doc": 2, "last_search": 2, "unknown_search": 1,
        "unknown_user": 1, "no_earlier_search": 1, "outside_window": 1}
    assert attribution_counts(fresh.with_events(attribution_window="1h")) == {
        "search_id": 1, "clicked_doc": 0, "last_search": 1, "unknown_search": 1,
        "unknown_user": 1, "no_earlier_search": 1, "outside_window": 4}
    # what a log returns from its kept counts is what a fresh log of the same settings counts
    for log in (logs, hour, purchase):
        same = fresh.with_events(attribution_window=f"{log.events.window_us}us",
                                 event_type=log.events.event_type)
        assert warn_events(log, attribution_view(log)) == attribution_counts(same)
    assert {name: statements.executed.count(sql) for name, sql in counting.items()} == \
        {"24h": 1, "1h": 1, "purchase": 1}


def test_outcome_metrics_by_hand():
    df = _quiet(onlineeval.online_metrics, _tiny(), by="variant").set_index("variant")
    # A = u1: s1 (event 1: 10), s2 (event 9: 4); two sessions
    a = df.loc["A"]
    assert a["conversion_rate"] == 1.0 and a["session_conversion_rate"] == 1.0
    assert a["events_per_user"] == 2.0 and a["revenue_per_user"] == 14.0
    assert a["revenue_per_search"] == 7.0
    # s1: 12:05 - 10:00 = 7500 s; s2: next day 11:01 - 11:00 = 86460 s
    assert a["mean_time_to_conversion_s"] == (7500 + 86460) / 2
    # B = u2: s3 (event 2: 5), s5 (none), one session; u3: s4 (event 5: 7, event 7: no value)
    b = df.loc["B"]
    assert b["conversion_rate"] == pytest.approx(2 / 3)
    assert b["session_conversion_rate"] == 1.0
    assert b["events_per_user"] == 1.5 and b["revenue_per_user"] == 6.0
    assert b["revenue_per_search"] == 4.0
    # s3: 600 s; s4: first event 09:00, an hour before it: -3600 s
    assert b["mean_time_to_conversion_s"] == (600 - 3600) / 2


def test_outcome_metrics_of_one_type():
    df = _quiet(onlineeval.online_metrics, _tiny(), by="variant",
                event_type="add_to_cart").set_index("variant")
    # only event 7 (s4, no value, 24 h after it) is an attributed add_to_cart
    assert df.loc["A", "conversion_rate"] == 0.0
    assert np.isnan(df.loc["A", "mean_time_to_conversion_s"])
    assert df.loc["B", "conversion_rate"] == pytest.approx(1 / 3)
    assert df.loc["B", "session_conversion_rate"] == 0.5
    assert df.loc["B", "events_per_user"] == 0.5 and df.loc["B", "revenue_per_user"] == 0.0
    assert df.loc["B", "mean_time_to_conversion_s"] == 86400.0


def test_a_log_without_events_has_no_outcome_columns():
    frames = _tiny()
    del frames["events"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnattributedEventsWarning)
        df = _quiet(onlineeval.online_metrics, frames, by="variant")
    assert "conversion_rate" not in df.columns
    assert list(df.columns)[-1] == "queries_per_session"


def test_loading_events_counts_and_refuses():
    frames = _tiny()
    events = frames["events"].copy()
    events.loc[0, "type"] = ""
    events.loc[1, "ts"] = pd.NaT
    events.loc[2, "user_id"] = None  # and no search_id: nobody's event
    with pytest.warns(UserWarning, match="events: 3 null_required"):
        logs = onlineeval.load_logs(**{**frames, "events": events})
    assert logs.report.rows_read["events"] == 9
    assert logs.report.excluded[("events", "null_required")] == 3
    assert "events 9 rows (3 excluded)" in logs.report.summary()
    bad = frames["events"].assign(value=["1", "2", "x", "3", "4", "5", "6", "7", "8"])
    with pytest.raises(SchemaError, match=r"column 'value' \(events.value\) must hold a "
                                          r"finite number.*'x'"):
        onlineeval.load_logs(**{**frames, "events": bad})
    with pytest.raises(SchemaError, match="'user_id or search_id'"):
        onlineeval.load_logs(**{**frames, "events": events.drop(columns=["user_id",
                                                                          "search_id"])})


def test_events_from_files_with_a_mapping(tmp_path):
    frames = _tiny()
    for name, df in frames.items():
        if name == "events":
            df = df.rename(columns={"user_id": "uid"})
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    logs = _quiet(onlineeval.load_logs, tmp_path, columns={"events": {"uid": "user_id"}})
    assert logs.has_events and logs.report.rows_read["events"] == 9
    got = _quiet(onlineeval.online_metrics, logs, by="variant")
    want = _quiet(onlineeval.online_metrics, frames, by="variant")
    pd.testing.assert_frame_equal(got, want)
    (tmp_path / "events.csv").write_text("uid,ts,type,value\nu1,2024-01-01 10:00,buy,zz\n")
    with pytest.raises(SchemaError, match=r"events.csv.*'zz'.*line 2"):
        onlineeval.load_logs(tmp_path, columns={"events": {"uid": "user_id"}})


def test_attribution_window_argument_is_checked():
    for bad in (-1, "soon", True, float("nan")):
        with pytest.raises(InvalidParameterError, match="attribution_window"):
            _quiet(onlineeval.attribute_events, _tiny(), attribution_window=bad)


# --- an independent computation on a larger log ----------------------------------------------

def _simulated(seed: int = 7) -> dict[str, pd.DataFrame]:
    """A log shaped like the simulator's: users in two arms, searches a few minutes to hours
    apart, clicks on results, purchases of clicked docs, some of other docs, some naming their
    search, some unattributable."""
    rng = np.random.default_rng(seed)
    start = T("2024-03-01")
    s_rows, r_rows, c_rows, e_rows = [], [], [], []
    n = 0
    for u in range(150):
        user = f"u{u}"
        arm = "control" if u % 2 else "treatment"
        t = start + pd.Timedelta(minutes=int(rng.integers(0, 600)))
        for _ in range(int(rng.integers(1, 6))):
            n += 1
            sid = f"s{n}"
            s_rows.append((sid, user, t, arm))
            docs = [f"d{x}" for x in rng.choice(30, size=5, replace=False)]
            r_rows += [(sid, k + 1, d) for k, d in enumerate(docs)]
            for k in rng.choice(5, size=int(rng.integers(0, 3)), replace=False):
                ct = t + pd.Timedelta(seconds=int(rng.integers(1, 120)))
                c_rows.append((sid, int(k) + 1, ct))
                if rng.random() < (0.5 if arm == "treatment" else 0.3):
                    et = ct + pd.Timedelta(minutes=int(rng.integers(0, 2000)))
                    e_rows.append((user, et, "purchase", float(rng.integers(5, 100)), None,
                                   docs[int(k)]))
            if rng.random() < 0.2:
                e_rows.append((None, t + pd.Timedelta(minutes=5), "purchase", 20.0, sid,
                               None))
            if rng.random() < 0.2:
                e_rows.append((user, t + pd.Timedelta(minutes=int(rng.integers(0, 3000))),
                               "add_to_cart", None, None, None))
            t += pd.Timedelta(minutes=int(rng.integers(5, 900)))
        if rng.random() < 0.1:
            e_rows.append((user, start - pd.Timedelta(hours=1), "purchase", 1.0, None, None))
    e_rows.append(("nobody", start, "purchase", 3.0, None, None))
    searches = pd.DataFrame(s_rows, columns=["search_id", "user_id", "ts", "variant"])
    results = pd.DataFrame(r_rows, columns=["search_id", "rank", "doc_id"])
    clicks = pd.DataFrame(c_rows, columns=["search_id", "rank", "ts"])
    events = pd.DataFrame(e_rows, columns=["user_id", "ts", "type", "value", "search_id",
                                           "doc_id"])
    return {"searches": searches, "results": results, "clicks": clicks, "events": events}


def _attribute_by_pandas(frames: dict[str, pd.DataFrame], window: pd.Timedelta,
                         event_type: str | None) -> pd.Series:
    """The attributed search_id of every event (None: unattributable), event by event."""
    s = frames["searches"]
    c = frames["clicks"].merge(frames["results"], on=["search_id", "rank"])
    c = c.merge(s[["search_id", "user_id", "ts"]].rename(columns={"ts": "s_ts"}),
                on="search_id")
    known = set(s["search_id"])
    out = []
    for e in frames["events"].itertuples():
        if event_type is not None and e.type != event_type:
            out.append("-")
            continue
        if isinstance(e.search_id, str):
            out.append(e.search_id if e.search_id in known else None)
            continue
        if isinstance(e.doc_id, str):
            k = c[(c.user_id == e.user_id) & (c.doc_id == e.doc_id) & (c.ts <= e.ts)
                  & (e.ts - c.ts <= window)]
            if len(k):
                best = k.sort_values(["ts", "s_ts", "search_id"]).iloc[-1]
                out.append(best.search_id)
                continue
        mine = s[(s.user_id == e.user_id) & (s.ts <= e.ts)]
        if len(mine):
            last = mine.sort_values(["ts", "search_id"]).iloc[-1]
            out.append(last.search_id if e.ts - last.ts <= window else None)
        else:
            out.append(None)
    return pd.Series(out, index=frames["events"].index)


@pytest.mark.parametrize(("window", "event_type"), [("24h", None), ("2h", "purchase")])
def test_outcome_metrics_match_an_independent_pandas_computation(window, event_type):
    frames = _simulated()
    attributed = _attribute_by_pandas(frames, pd.Timedelta(window), event_type)
    ev = frames["events"].assign(attributed=attributed)
    ev = ev[ev.attributed.notna() & (ev.attributed != "-")]
    s = frames["searches"].set_index("search_id")
    per_search = ev.groupby("attributed").agg(n=("ts", "size"),
                                              revenue=("value", lambda v: v.fillna(0).sum()),
                                              first=("ts", "min"))
    s = s.join(per_search).fillna({"n": 0, "revenue": 0.0})
    s["ttc"] = (s["first"] - s["ts"]).dt.total_seconds()
    got = _quiet(onlineeval.online_metrics, frames, by="variant",
                 attribution_window=window, event_type=event_type).set_index("variant")
    for arm, g in s.groupby("variant"):
        row = got.loc[arm]
        assert row["conversion_rate"] == pytest.approx((g.n > 0).mean(), rel=1e-12)
        users = g.user_id.nunique()
        assert row["events_per_user"] == pytest.approx(g.n.sum() / users, rel=1e-12)
        assert row["revenue_per_user"] == pytest.approx(g.revenue.sum() / users, rel=1e-12)
        assert row["revenue_per_search"] == pytest.approx(g.revenue.mean(), rel=1e-12)
        assert row["mean_time_to_conversion_s"] == pytest.approx(g.ttc.mean(), rel=1e-12)
    # per unit in the A/B test: the mean over users of their attributed revenue
    ab = _quiet(onlineeval.abtest, frames, control="control", treatment="treatment",
                metrics="revenue_per_unit,events_per_unit,conversion_rate",
                attribution_window=window, event_type=event_type, min_units=2)
    per_user = s.groupby(["variant", "user_id"])[["revenue", "n"]].sum()
    rev = ab.set_index("metric").loc["revenue_per_unit"]
    assert rev["control_value"] == pytest.approx(per_user.loc["control", "revenue"].mean(),
                                                 rel=1e-12)
    assert rev["treatment_value"] == pytest.approx(
        per_user.loc["treatment", "revenue"].mean(), rel=1e-12)
    assert rev["test"] == ab.set_index("metric").loc["events_per_unit", "test"]
    conv = ab.set_index("metric").loc["conversion_rate"]
    assert conv["control_value"] == pytest.approx(got.loc["control", "conversion_rate"])
    assert len(attributed) > 300 and (attributed.isna()).sum() > 5


def test_sequential_monitoring_reads_the_outcome_metrics():
    # the last look reads every exposure: its estimate is the fixed-horizon A/B estimate
    frames = _simulated()
    kw = {"event_type": "purchase", "attribution_window": 2}
    seq = _quiet(onlineeval.sequential_readout, frames, "control", "treatment",
                 metrics=["conversion_rate", "revenue_per_unit"], **kw)
    ab = _quiet(onlineeval.abtest, frames, control="control", treatment="treatment",
                metrics="conversion_rate,revenue_per_unit", min_units=2,
                **kw).set_index("metric")
    for name in ("conversion_rate", "revenue_per_unit"):
        last = seq[seq["metric"] == name].iloc[-1]
        assert last["estimate"] == pytest.approx(ab.loc[name, "estimate"], rel=1e-9)
    # a window of 2 h gives other numbers than the default 24 h: the setting is used
    wide = _quiet(onlineeval.abtest, frames, control="control", treatment="treatment",
                  metrics="revenue_per_unit", min_units=2, event_type="purchase")
    assert wide.iloc[0]["control_value"] != ab.loc["revenue_per_unit", "control_value"]


def test_the_cli_takes_the_event_options(tmp_path, capsys):
    from onlineeval.cli import main

    frames = _simulated()
    for name, df in frames.items():
        df.to_parquet(tmp_path / f"{name}.parquet", index=False)
    assert main(["online", str(tmp_path), "--event-type", "purchase",
                 "--attribution-window", "2h", "--format", "csv"]) == 0
    got = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out)).set_index("variant")
    want = _quiet(onlineeval.online_metrics, frames, event_type="purchase",
                  attribution_window=2).set_index("variant")
    for col in ("conversion_rate", "revenue_per_user", "mean_time_to_conversion_s"):
        np.testing.assert_allclose(got[col], want[col], rtol=1e-12)
    assert main(["abtest", str(tmp_path), "--metrics", "revenue_per_unit",
                 "--event-type", "purchase", "--format", "csv"]) == 0
    out = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert out.loc[0, "metric"] == "revenue_per_unit"
    assert main(["online", str(tmp_path), "--attribution-window", "soon"]) == 2
    assert "attribution_window" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "hours"), [("7d", 168.0), ("1.5d", 36.0), ("30min", 0.5),
                                             ("24h", 24.0), ("7 days", 168.0)])
def test_window_text_is_read_without_pandas_deprecation_warnings(text, hours):
    from onlineeval.logs.events import window_us

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert window_us(text) == round(hours * 3_600_000_000)
