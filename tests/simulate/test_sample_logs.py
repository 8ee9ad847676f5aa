"""sample_logs/ is exactly what the command in its README generates."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import duckdb

from onlineeval.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs"


def _command() -> list[str]:
    text = (SAMPLE / "README.md").read_text(encoding="utf-8")
    found = re.findall(r"^onlineeval simulate sample_logs .*$", text, flags=re.M)
    assert len(found) == 1, found
    return shlex.split(found[0])[1:]


def test_sample_logs_regenerate_identically(tmp_path: Path, capsys) -> None:
    argv = _command()
    argv[1] = str(tmp_path / "regen")
    assert main(argv) == 0
    capsys.readouterr()
    regen = tmp_path / "regen"
    assert json.loads((regen / "manifest.json").read_text()) == \
        json.loads((SAMPLE / "manifest.json").read_text())
    assert (regen / "qrels.txt").read_bytes() == (SAMPLE / "qrels.txt").read_bytes()
    names = sorted(p.name for p in (SAMPLE / "runs").iterdir())
    assert names == sorted(p.name for p in (regen / "runs").iterdir())
    for name in names:
        assert (regen / "runs" / name).read_bytes() == (SAMPLE / "runs" / name).read_bytes()
    con = duckdb.connect()
    for table in ("searches", "results", "clicks", "events"):
        a = con.read_parquet(str(SAMPLE / "ab" / f"{table}.parquet"))
        b = con.read_parquet(str(regen / "ab" / f"{table}.parquet"))
        assert a.columns == b.columns and a.types == b.types
        a.create_view("committed", replace=True)
        b.create_view("regenerated", replace=True)
        # EXCEPT ALL keeps duplicate rows, so equal multisets are required, not equal sets
        for x, y in (("committed", "regenerated"), ("regenerated", "committed")):
            assert con.sql(f"SELECT count(*) FROM (FROM {x} EXCEPT ALL FROM {y})"
                           ).fetchall() == [(0,)], (table, x, y)
        assert a.aggregate("count(*)").fetchall() == b.aggregate("count(*)").fetchall()


def test_sample_logs_readme_tables_match_manifest() -> None:
    text = (SAMPLE / "README.md").read_text(encoding="utf-8")
    manifest = json.loads((SAMPLE / "manifest.json").read_text())
    for name, info in manifest["rankers"].items():
        assert f"| {name} | {info['noise_sd']} | {info['ndcg10']:.4f} |" in text
    for e in manifest["experiments"]:
        row = next(line for line in text.splitlines() if line.startswith(f"| {e['name']} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1:3] == [e["control"], e["treatment"]]
        if e["ndcg10_delta"] != 0:
            assert cells[3].split()[0].replace("−", "-") == f"{e['ndcg10_delta']:+.4f}"
        assert cells[4] == f"{e['users']['control']} / {e['users']['treatment']}"
        assert cells[5] == str(e["searches"])
    assert len(manifest["experiments"]) >= 8
    events = manifest["logs"]["events"]
    assert (f"holds {sum(events.values()):,} events ({events['purchase']:,} purchases, "
            f"{events['add_to_cart']:,} add-to-carts)") in text
    # the A/B study itself stays small (other log kinds are added beside it)
    mine = [SAMPLE / "qrels.txt", SAMPLE / "manifest.json", *(SAMPLE / "runs").iterdir(),
            *(SAMPLE / "ab").iterdir()]
    assert sum(p.stat().st_size for p in mine) < 5_000_000
