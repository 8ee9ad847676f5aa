"""Bring your own logs, end to end: the sample A/B log exported under another team's column
names (uid, arm, qid, position, ...; arms 0/1 in one copy), read back with --columns /
--columns-file, gives exactly the original's numbers through online and abtest; validate
describes it."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from onlineeval import cli

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "ab"
EXPERIMENT = "s060_vs_s100"

# the export's names for the canonical columns
SEARCHES = {"search_id": "qid", "user_id": "uid", "ts": "event_time", "session_id": "sess",
            "query": "q", "qid": "topic", "experiment": "exp", "variant": "arm",
            "n_results": "num_results"}
RESULTS = {"search_id": "qid", "rank": "position", "doc_id": "item"}
CLICKS = {"search_id": "qid", "rank": "position", "doc_id": "item", "ts": "event_time",
          "dwell_ms": "dwell"}
MAPPING = ",".join(
    [f"searches.{new}={old}" for old, new in SEARCHES.items() if old != "qid"]
    + [f"results.{new}={old}" for old, new in RESULTS.items()]
    + [f"clicks.{new}={old}" for old, new in CLICKS.items()]
)


def _select(mapping: dict[str, str], arm_as_int: bool = False) -> str:
    cols = []
    for old, new in mapping.items():
        expr = f'"{old}"'
        if arm_as_int and old == "variant":
            expr = "CASE variant WHEN 'control' THEN 0 WHEN 'treatment' THEN 1 END"
        cols.append(f'{expr} AS "{new}"')
    return ", ".join(cols)


def _export(out: Path, arm_as_int: bool) -> Path:
    """searches (with arms 0/1: Parquet) and clicks as CSV, results as Parquet, as a
    warehouse export might come; only one experiment's searches (and their results and
    clicks)."""
    out.mkdir()
    con = duckdb.connect()
    s, r, c = (f"read_parquet('{SAMPLE / f'{t}.parquet'}')" for t in
               ("searches", "results", "clicks"))
    keep = f"search_id IN (SELECT search_id FROM {s} WHERE experiment = '{EXPERIMENT}')"
    # arms 0/1 come as Parquet, where they keep their integer type (in a CSV file every
    # value is text, and "0" would be a text arm)
    target = (f"'{out / 'searches.parquet'}' (FORMAT PARQUET)" if arm_as_int
              else f"'{out / 'searches.csv'}' (HEADER)")
    con.execute(f"COPY (SELECT {_select(SEARCHES, arm_as_int)} FROM {s} "
                f"WHERE experiment = '{EXPERIMENT}') TO {target}")
    con.execute(f"COPY (SELECT {_select(RESULTS)} FROM {r} WHERE {keep}) "
                f"TO '{out / 'results.parquet'}' (FORMAT PARQUET)")
    con.execute(f"COPY (SELECT {_select(CLICKS)} FROM {c} WHERE {keep}) "
                f"TO '{out / 'clicks.csv'}' (HEADER)")
    # the original, cut the same way, in the canonical layout
    original = out.parent / f"original-{out.name}"
    original.mkdir()
    for t, src in (("searches", s), ("results", r), ("clicks", c)):
        where = f"experiment = '{EXPERIMENT}'" if t == "searches" else keep
        con.execute(f"COPY (SELECT * FROM {src} WHERE {where}) TO '{original / t}.parquet' "
                    "(FORMAT PARQUET)")
    return out


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    base = tmp_path_factory.mktemp("byol")
    return (base / "original-text", _export(base / "text", False),
            _export(base / "int", True), base / "original-int")


def _same(got, want):
    """Equal records: counts and names exactly, floats to 1e-12 relative (a sum of doubles
    depends on the order DuckDB reads the rows in, which differs between CSV and Parquet)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for k in want:
            _same(got[k], want[k])
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-12, nan_ok=True)
    else:
        assert got == want and type(got) is type(want)


def _run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def test_online_numbers_are_the_originals(capsys, exports):
    original, renamed, _, _ = exports
    code, want, err = _run(capsys, "online", original, "--format", "json")
    assert code == 0, err
    code, got, err = _run(capsys, "online", renamed, "--columns", MAPPING, "--format", "json")
    assert code == 0, err
    _same(json.loads(got), json.loads(want))
    assert len(json.loads(want)) == 2  # control and treatment: the comparison is not empty


def test_abtest_numbers_are_the_originals_also_with_integer_arms(capsys, exports, tmp_path):
    original, renamed, as_int, _ = exports
    code, want, err = _run(capsys, "abtest", original, "--format", "json")
    assert code == 0, err
    want = json.loads(want)
    toml = tmp_path / "mapping.toml"
    lines = []
    for table, m in (("searches", SEARCHES), ("results", RESULTS), ("clicks", CLICKS)):
        lines.append(f"[{table}]")
        lines += [f'{new} = "{old}"' for old, new in m.items() if old != "qid"]
    toml.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, got, err = _run(capsys, "abtest", renamed, "--columns-file", toml, "--format", "json")
    assert code == 0, err
    _same(json.loads(got), want)
    # arms written 0/1: --control 0 is read as the number 0 (the column's type)
    code, got, err = _run(capsys, "abtest", as_int, "--columns-file", toml, "--control", "0",
                          "--format", "json")
    assert code == 0, err
    got = json.loads(got)
    assert [r["variant"] for r in got["results"]] == [1] * len(want["results"])
    for g, w in zip(got["results"], want["results"], strict=True):
        _same({k: v for k, v in g.items() if k != "variant"},
              {k: v for k, v in w.items() if k != "variant"})
    assert got["srm"]["p_value"] == want["srm"]["p_value"]


def test_validate_describes_the_export(capsys, exports):
    _, renamed, as_int, _ = exports
    code, out, err = _run(capsys, "validate", as_int, "--columns", MAPPING, "--format", "json")
    assert code == 0, err
    found = json.loads(out)
    s = found["tables"]["searches"]
    assert s["provided"]["user_id"] == "uid" and s["provided"]["variant"] == "arm"
    assert s["extra"] == ["topic"]
    assert found["tables"]["results"]["absent"] == ["team"]
    assert [(v["variant"], v["experiment"]) for v in found["variants"]] == \
        [(0, EXPERIMENT), (1, EXPERIMENT)]
    # the units per arm as counted directly from the export
    con = duckdb.connect()
    direct = con.execute(f"SELECT arm, count(DISTINCT uid), count(*) FROM "
                         f"read_parquet('{as_int / 'searches.parquet'}') GROUP BY arm ORDER BY arm"
                         ).fetchall()
    assert [(v["variant"], v["units"], v["searches"]) for v in found["variants"]] == direct
    first, last = con.execute(f"SELECT min(event_time), max(event_time) FROM "
                              f"read_parquet('{as_int / 'searches.parquet'}')").fetchone()
    assert found["time_range"]["first_ts"] == first.isoformat()
    assert found["time_range"]["last_ts"] == last.isoformat()
    assert found["exclusions"] == [] and found["status"] == 0
    code, out, _ = _run(capsys, "validate", renamed, "--columns", MAPPING)
    assert code == 0
    assert "user_id <- uid" in out and "excluded rows: none" in out
