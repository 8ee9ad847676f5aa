"""``onlineeval agree`` on a CSV the user brings."""

from __future__ import annotations

import json

import pytest

from onlineeval.cli import main


def test_agree_json_and_table(tmp_path, capsys):
    p = tmp_path / "exp.csv"
    p.write_text("experiment,offline_delta,online_delta,offline_p,online_p\n"
                 "a,0.1,0.2,0.01,0.02\nb,-0.1,0.1,0.2,0.01\nc,0.3,0.4,0.001,0.001\n"
                 "d,0.2,,0.01,\n")
    assert main(["agree", str(p), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    s = out["summary"]
    # a, c agree; b disagrees; d has no online delta and is excluded (and said so)
    assert (s["n"], s["n_agree"], s["n_disagree"], s["n_excluded"]) == (3, 2, 1, 1)
    assert out["excluded"] == ["d"]
    assert s["kendall_tau"] == pytest.approx(1.0)  # ranks (2,1,3) vs (2,1,3)
    counts = {d["decision"]: d["count"] for d in out["decisions"]}
    assert counts["both significant, same direction"] == 2
    assert counts["only online significant"] == 1
    assert main(["agree", str(p)]) == 0
    text = capsys.readouterr().out
    assert "sign agreement: 2/3" in text and "excluded for a missing delta: d" in text


def test_agree_bad_file_is_one_line_error(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    p.write_text("experiment,offline\na,1\n")
    assert main(["agree", str(p)]) == 2
    err = capsys.readouterr().err
    assert "missing column" in err and "offline_delta" in err and "Traceback" not in err


def test_agree_with_custom_column_names(tmp_path, capsys):
    p = tmp_path / "mine.csv"
    p.write_text("pair,d_ndcg,d_il,p_off,p_il\nx,0.2,0.1,0.01,0.02\ny,-0.1,0.05,0.03,0.9\n")
    assert main(["agree", str(p), "--offline", "d_ndcg", "--online", "d_il", "--offline-p",
                 "p_off", "--online-p", "p_il", "--experiment", "pair", "--format",
                 "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [e["experiment"] for e in out["experiments"]] == ["x", "y"]
    assert [e["decision"] for e in out["experiments"]] == [
        "both significant, same direction", "only offline significant"]
    assert main(["agree", str(p), "--offline", "d_ndcg", "--online", "d_il",
                 "--offline-p", "nope", "--online-p", "p_il"]) == 2
    err = capsys.readouterr().err
    assert "missing column" in err and "'nope'" in err


def test_agree_table_says_null_for_a_zero_delta(tmp_path, capsys):
    p = tmp_path / "z.csv"
    p.write_text("experiment,offline_delta,online_delta\na,0.1,0.2\nb,0.0,0.1\nc,-0.1,0.1\n")
    assert main(["agree", str(p)]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()
            if line.strip()[:1] in ("a", "b", "c") and len(line.split()) == 4}
    assert rows["a"][3] == "True" and rows["b"][3] == "null" and rows["c"][3] == "False"
