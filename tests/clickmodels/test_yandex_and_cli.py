"""The real Yandex WSCD slice (tests/data/yandex_wscd) and the clickmodel command."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import onlineeval
from onlineeval.cli import main
from onlineeval.clickmodels import ClickModelFit, fit, read_patterns

SLICE = Path(__file__).parents[1] / "data" / "yandex_wscd" / "testSample.head5000"


@pytest.fixture(scope="module")
def yandex(tmp_path_factory):
    out = tmp_path_factory.mktemp("yandex") / "logs"
    onlineeval.convert(SLICE, out, "yandex-wscd")
    return out


def _raw_patterns() -> Counter:
    """Click patterns counted straight from the text, without the converter or SQL."""
    found: Counter = Counter()
    for record in SLICE.read_text().split(";"):
        if not record.strip():
            continue
        token, rest = record.strip().split("\t", 1)
        docs_text, clicks_text = rest.split(":", 1)
        docs = tuple(d.strip() for d in docs_text.split(","))
        clicked = {c.strip() for c in clicks_text.split(",") if c.strip()}
        found[(token.rsplit("_", 1)[0], docs, tuple(d in clicked for d in docs))] += 1
    return found


def test_patterns_of_the_yandex_slice_match_the_raw_text(yandex):
    p = read_patterns(onlineeval.load_logs(yandex))
    raw = _raw_patterns()
    assert p.pages == sum(raw.values()) == 5000
    assert p.n_patterns == len(raw)
    got = Counter()
    for i in range(p.n_patterns):
        idx = p.pair[i][p.mask[i]]
        q = p.pairs["query"].iloc[idx[0]]
        docs = tuple(str(d) for d in p.pairs["doc_id"].iloc[idx])
        got[(str(q), docs, tuple(bool(c) for c in p.click[i][p.mask[i]]))] += int(p.weight[i])
    assert got == raw


def test_every_model_fits_the_yandex_slice(yandex):
    logs = onlineeval.load_logs(yandex)
    pos = onlineeval.position_ctr(logs).set_index("rank")["ctr"]
    lls = {}
    for model in ("ctr", "pbm", "cascade", "dcm", "ubm", "sdbn", "dbn"):
        f = fit(logs, model, prior=(0.0, 0.0) if model == "ctr" else (1.0, 1.0))
        assert f.pages == 5000 and f.trace.converged
        lls[model] = f.log_likelihood
        if model == "ctr":
            assert f.params.rank["ctr"][1:] == pytest.approx(pos.to_numpy(), rel=1e-12)
    # 1,200+ pages have clicks below the first one, which the cascade model cannot explain
    assert lls["cascade"] == float("-inf")
    assert min(lls["ubm"], lls["dbn"]) > max(lls["ctr"], lls["sdbn"])


def test_cli_fit_writes_a_model_and_prints_the_position_bias(yandex, tmp_path, capsys):
    out = tmp_path / "dbn.json"
    assert main(["clickmodel", "fit", str(yandex), "--model", "dbn", "-o", str(out),
                 "--format", "json"]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    assert [r["rank"] for r in rows] == list(range(1, 11))
    assert rows[0]["relative"] == 1.0
    assert "dbn: 5000 pages" in captured.err and "converged" in captured.err
    f = ClickModelFit.from_json(out)
    assert f.model == "dbn" and [r["examination"] for r in rows] == pytest.approx(
        list(f.position_bias["examination"]), rel=1e-12)
    assert not list(tmp_path.glob(".*.tmp"))


def test_cli_refuses_to_write_into_the_log_and_names_bad_models(yandex, capsys):
    before = sorted(p.name for p in yandex.iterdir())
    assert main(["clickmodel", "fit", str(yandex), "--model", "dbn", "-o",
                 str(yandex / "searches.json")]) == 2
    assert main(["clickmodel", "fit", str(yandex), "--model", "dbx"]) == 2
    err = capsys.readouterr().err
    assert "would change the input" in err
    assert "did you mean 'dbn'" in err
    assert sorted(p.name for p in yandex.iterdir()) == before


def test_cli_compare_is_deterministic(yandex, capsys):
    args = ["clickmodel", "compare", str(yandex), "--models", "pbm,ubm", "--test-share",
            "0.3", "--seed", "5", "--format", "json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert [r["model"] for r in first] == ["pbm", "ubm"]
    assert first[0]["test_pages"] == 1500 and first[0]["train_pages"] == 3500
    assert main(args + ["--per-rank"]) == 0
    per_rank = json.loads(capsys.readouterr().out)
    assert len(per_rank) == 20
