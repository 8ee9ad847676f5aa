"""Damaged files: a Parquet page that does not decode, a Parquet or gzip file cut short.

Each gives one line naming the file — at load time, or, since the views read their files
lazily, when a later query is the first to read the damaged page (then through
``onlineeval.logs.locate.file_error``, which the command line calls).
"""

from __future__ import annotations

import gzip
import shutil

import duckdb
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import onlineeval
from onlineeval.errors import LogFormatError

N = 2_000


def _log(folder):
    """A clean log whose searches carry a variant (read at load only by the metrics)."""
    folder.mkdir(parents=True, exist_ok=True)
    i = np.arange(N)
    searches = pd.DataFrame({
        "search_id": [f"s{k}" for k in i], "user_id": [f"u{k % 50}" for k in i],
        "ts": pd.Timestamp("2024-05-01") + pd.to_timedelta(i, unit="s"),
        "variant": np.where(i % 2 == 0, "control", "treatment")})
    clicks = pd.DataFrame({"search_id": searches.search_id[::3], "rank": np.int32(1)})
    searches.to_parquet(folder / "searches.parquet", index=False)
    clicks.to_parquet(folder / "clicks.parquet", index=False)
    return searches, clicks


def _damage_page(path, column):
    """Overwrite the header of the first page of ``column``: it no longer decodes."""
    meta = pq.ParquetFile(path).metadata
    names = [meta.schema.column(k).name for k in range(meta.num_columns)]
    chunk = meta.row_group(0).column(names.index(column))
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(path.read_bytes())
    for k in range(8):
        data[start + k] ^= 0xFF
    path.write_bytes(bytes(data))


def _cut(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_a_damaged_page_found_at_load_names_the_file(tmp_path):
    _log(tmp_path)
    _damage_page(tmp_path / "searches.parquet", "user_id")
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(tmp_path)
    text = str(err.value)
    assert text.startswith(f"{tmp_path / 'searches.parquet'}: cannot read the searches table: "
                           "the file is damaged or cut short (")
    assert "\n" not in text


def test_a_damaged_part_of_a_folder_is_named(tmp_path):
    searches, clicks = _log(tmp_path / "src")
    (tmp_path / "log" / "searches").mkdir(parents=True)
    searches.iloc[: N // 2].to_parquet(tmp_path / "log" / "searches" / "part-0.parquet")
    searches.iloc[N // 2:].to_parquet(tmp_path / "log" / "searches" / "part-1.parquet")
    clicks.to_parquet(tmp_path / "log" / "clicks.parquet")
    bad = tmp_path / "log" / "searches" / "part-1.parquet"
    _damage_page(bad, "user_id")
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(tmp_path / "log")
    assert str(err.value).startswith(f"{bad}: cannot read the searches table: the file is "
                                     "damaged or cut short")


@pytest.mark.parametrize("name", ["clicks.parquet", "clicks.csv.gz", "clicks.jsonl.gz"])
def test_a_file_cut_short_names_the_file(tmp_path, name):
    _, clicks = _log(tmp_path)
    (tmp_path / "clicks.parquet").unlink()
    path = tmp_path / name
    if name.endswith(".parquet"):
        clicks.to_parquet(path, index=False)
    else:
        text = (clicks.to_csv(index=False) if ".csv" in name
                else clicks.to_json(orient="records", lines=True))
        path.write_bytes(gzip.compress(text.encode()))
    _cut(path)
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(tmp_path)
    text = str(err.value)
    assert text.startswith(f"{path}: cannot read ")
    assert "the file is damaged or cut short (" in text
    assert "check that every line" not in text  # no hint about fields for a damaged file
    assert "\n" not in text


def test_damage_found_by_a_later_query_names_the_file(tmp_path):
    from onlineeval.logs.locate import file_error

    _log(tmp_path)
    bad = tmp_path / "searches.parquet"
    _damage_page(bad, "variant")
    logs = onlineeval.load_logs(tmp_path)  # validation does not read the variant
    with pytest.raises(duckdb.Error) as raised:
        logs.con.execute("SELECT variant, count(*) FROM searches GROUP BY ALL").fetchall()
    err = file_error(raised.value)
    assert isinstance(err, LogFormatError)
    assert str(err).startswith(f"{bad}: cannot read the file: the file is damaged or cut short")
    # an error that is not about a file stays as it is
    with pytest.raises(duckdb.Error) as other:
        logs.con.execute("SELECT no_such_column FROM searches").fetchall()
    assert file_error(other.value) is None


def test_the_cli_names_the_damaged_file_in_one_line(tmp_path, capsys):
    from onlineeval.cli import main

    _log(tmp_path)
    _damage_page(tmp_path / "searches.parquet", "variant")
    assert main(["online", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith(f"onlineeval online: error: {tmp_path / 'searches.parquet'}: "
                              "cannot read the file: the file is damaged or cut short")
    assert not any("Traceback" in line for line in err)


def test_a_clean_copy_of_the_same_log_loads(tmp_path):
    searches, _ = _log(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    logs = onlineeval.load_logs(tmp_path / "b")
    got = dict(logs.con.execute("SELECT variant, count(*) FROM searches GROUP BY ALL").fetchall())
    assert got == searches.variant.value_counts().to_dict()
