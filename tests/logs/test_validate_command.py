"""onlineeval validate: what it prints, and its exit status 0 / 1 (--strict) / 2."""

from __future__ import annotations

import json

import pandas as pd

from onlineeval import cli


def _run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def test_exit_status_clean_strict_and_error(capsys, tiny_dir, tmp_path):
    code, out, _ = _run(capsys, "validate", tiny_dir)
    assert code == 0  # rows are excluded, but without --strict that is what loading does
    assert "excluded rows: 20" in out
    code, out, _ = _run(capsys, "validate", tiny_dir, "--strict")
    assert code == 1 and "--strict: 20 rows would be excluded (exit status 1)" in out
    code, out, _ = _run(capsys, "validate", tiny_dir, "--strict", "--format", "json")
    assert code == 1 and json.loads(out)["status"] == 1
    code, out, err = _run(capsys, "validate", tmp_path / "nothing")
    assert code == 2 and out == "" and err.count("\n") == 1
    code, _, err = _run(capsys, "validate", tiny_dir, "--columns", "searches.nope=query")
    assert code == 2 and "--columns searches.nope=query" in err
    code, _, err = _run(capsys, "validate", tiny_dir, "--unit", "country")
    assert code == 2 and "no column 'country'" in err


def test_a_clean_log_exits_0_under_strict(capsys, tmp_path):
    pd.DataFrame({"search_id": ["s1", "s2", "s3"], "user_id": ["u1", "u2", "u2"],
                  "ts": ["2024-05-01 10:00:00", "2024-05-02 11:00:00", "2024-05-03 12:00:00"],
                  "variant": [0, 1, 1]}).to_parquet(tmp_path / "searches.parquet")
    pd.DataFrame({"search_id": ["s1"], "doc_id": ["d1"]}).to_csv(tmp_path / "clicks.csv",
                                                                 index=False)
    pd.DataFrame({"search_id": ["s1", "s1"], "rank": [1, 2], "doc_id": ["d1", "d2"]}).to_csv(
        tmp_path / "results.csv", index=False)
    code, out, _ = _run(capsys, "validate", tmp_path, "--strict", "--format", "json")
    assert code == 0
    found = json.loads(out)
    assert found["exclusions"] == [] and found["status"] == 0
    s, c = found["tables"]["searches"], found["tables"]["clicks"]
    assert list(s["provided"]) == ["search_id", "user_id", "ts", "variant"]
    assert set(s["derived"]) == {"session_id", "n_results"}
    assert s["absent"] == ["query", "experiment"]
    assert list(c["provided"]) == ["search_id", "doc_id"]
    assert list(c["derived"]) == ["rank"] and "by the clicked doc_id" in c["derived"]["rank"]
    assert c["absent"] == ["ts", "dwell_ms"]
    assert found["time_range"] == {"first_ts": "2024-05-01T10:00:00",
                                   "last_ts": "2024-05-03T12:00:00",
                                   "searches_with_ts": 3, "searches": 3}
    # units by hand: variant 0 has u1 (1 search); variant 1 has u2 (2 searches)
    assert found["variants"] == [
        {"experiment": None, "variant": 0, "units": 1, "searches": 1, "units_elsewhere": 0},
        {"experiment": None, "variant": 1, "units": 1, "searches": 2, "units_elsewhere": 0}]


def test_a_unit_in_two_variants_is_counted(capsys, tmp_path):
    pd.DataFrame({"search_id": ["s1", "s2", "s3"], "user_id": ["u1", "u1", "u2"],
                  "experiment": ["e", "e", "e"], "variant": ["a", "b", "b"]}).to_csv(
        tmp_path / "searches.csv", index=False)
    pd.DataFrame({"search_id": ["s1"], "rank": [1]}).to_csv(tmp_path / "clicks.csv",
                                                           index=False)
    code, out, _ = _run(capsys, "validate", tmp_path)
    assert code == 0
    assert "time range: none (no search has a ts)" in out
    assert "results: not given" in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("e ")]
    assert rows == [["e", "a", "1", "1", "1"], ["e", "b", "2", "2", "1"]]
    assert "units also seen in another variant" in out
