"""How many buckets of users DuckDB reads the interleaving page outcomes in under a memory
limit (onlineeval.interleaving.outcomes.bucket_count), against the limits measured to run
out of memory, and a reproduction of the out-of-memory error the old count gave."""

from __future__ import annotations

import warnings
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from onlineeval.db import connect
from onlineeval.interleaving import outcomes
from onlineeval.logs import load_logs
from onlineeval.queries import view_parameters

ROOT = Path(__file__).resolve().parents[2]

#: (page-outcome rows, DuckDB memory_limit, threads, a bucket count that ran out of memory
#: there): DuckDB 2.0.1, the bench's generated logs in their interleaved copy (bench/README.md,
#: memory section). The 10M log (9,699,854 rows) failed with 2 buckets at 2GB, split by
#: page and by user; the 200k and 400k logs were bisected to 2 MiB (the smallest limits that
#: completed: 400k, 1 thread: 114 / 77 / 54 MiB for 1 / 2 / 4 buckets; 2 threads: 156 / 111
#: / 91 MiB), each limit below is under the one that completed
FAILED = [
    (9_699_854, "2GB", 2, 2),
    (193_917, "60MB", 2, 2),
    (193_917, "64MB", 1, 1),
    (387_882, "110MiB", 1, 1),
    (387_882, "74MiB", 1, 2),
    (387_882, "51MiB", 1, 4),
    (387_882, "153MiB", 2, 1),
    (387_882, "109MiB", 2, 2),
    (387_882, "88MiB", 2, 4),
]


@pytest.mark.parametrize(("rows", "limit", "threads", "failed"), FAILED)
def test_bucket_count_exceeds_the_counts_that_ran_out_of_memory(rows, limit, threads, failed):
    con = connect(memory_limit=limit, threads=threads)
    assert outcomes._buckets(con, rows) > failed


def test_bucket_count_follows_rows_limit_and_threads():
    count = outcomes.bucket_count
    # a bucket's rows fit what the threads leave of the limit, at BUCKET_BYTES_PER_ROW each
    room = 2000 - 2 * outcomes.BUCKET_THREAD_MB
    fits = int(room * 2**20 / outcomes.BUCKET_BYTES_PER_ROW)
    assert count(fits, 2000, 2) == 1
    assert count(fits + 1, 2000, 2) == 2
    assert count(5 * fits, 2000, 2) == 5
    assert count(5 * fits + 5, 2000, 2) == 6  # (fits is rounded down)
    # more threads, fewer rows per bucket; a limit the threads take whole: a quarter of it
    assert count(fits, 2000, 8) == 2
    assert count(10**6, 100, 4) == count(10**6, 100, 40) == -(-10**6 * 500 // (25 * 2**20))
    assert count(0, 100, 2) == 1
    # never fewer buckets for more rows, a lower limit or more threads
    for rows in (10**5, 10**6, 10**7, 10**8):
        for limit in (50, 500, 2000, 8000):
            assert count(rows, limit, 2) <= count(2 * rows, limit, 2)
            assert count(rows, limit, 2) >= count(rows, 2 * limit, 2)
            assert count(rows, limit, 1) <= count(rows, limit, 2)


def test_other_engines_and_no_limit_read_in_one_bucket():
    class Other:
        engine = "spark"

    assert outcomes._buckets(Other(), 10**9) == 1


@pytest.fixture(scope="module")
def log_200k(tmp_path_factory, load_script):
    gen = load_script(ROOT / "bench" / "_gen_online.py")
    audit = load_script(ROOT / "bench" / "scale_audit.py")
    base = tmp_path_factory.mktemp("il200k")
    gen.generate(200_000, base / "plain")
    audit.make_interleaved(base / "plain", base / "interleaved", "1GB")
    return base / "interleaved"


def _user_stats(path, limit, buckets=None, monkeypatch=None):
    con = connect(memory_limit=limit, threads=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generated log's exclusions
        logs = load_logs(path, con=con)
    if buckets is not None:
        monkeypatch.setattr(outcomes, "_buckets", lambda con, rows: buckets)
    outcomes.page_outcomes(logs)
    used = view_parameters(con, outcomes.PAGE_TABLE, ["buckets"])["buckets"]
    return used, outcomes.user_stats(logs, ["variant"])


def test_a_small_limit_reads_in_buckets_what_one_read_cannot(log_200k, monkeypatch):
    # 193,917 page rows at 64 MB and 1 thread: one read (the count the old sizing gave,
    # calibrated at 5M and 500MB) runs out of memory; the buckets the count gives complete
    # with the rows of one read at a limit that holds it
    with pytest.raises(duckdb.OutOfMemoryException, match="failed to pin block|could not "
                       "allocate|failed to allocate"):
        _user_stats(log_200k, "64MB", buckets=1, monkeypatch=monkeypatch)
    monkeypatch.undo()
    buckets, small = _user_stats(log_200k, "64MB")
    one, whole = _user_stats(log_200k, "2GB")
    assert buckets > 1 and one == 1
    assert len(whole) == 20_000
    pd.testing.assert_frame_equal(small, whole)


def test_the_bucketed_view_answers_for_every_page_when_no_bucket_is_set(monkeypatch):
    # other readers of the view (the per-query counts of the agreement) read it whole,
    # bucket unset: the same rows as the view without the bucket switch, and the counts of
    # outcomes.per_query the same
    logs = load_logs(ROOT / "sample_logs" / "interleaving")
    outcomes.page_outcomes(logs)
    sql = f'SELECT * FROM "{outcomes.PAGE_TABLE}" ORDER BY ALL'
    one = logs.con.execute(sql).df()
    teams = sorted(set(one["team_a"]) | set(one["team_b"]))
    per_query = outcomes.per_query(logs, teams[0], teams[1])
    monkeypatch.setattr(outcomes, "_buckets", lambda con, rows: 3)
    outcomes.page_outcomes(logs)
    assert view_parameters(logs.con, outcomes.PAGE_TABLE, ["buckets"])["buckets"] == 3
    assert len(one) > 100
    pd.testing.assert_frame_equal(logs.con.execute(sql).df(), one)
    pd.testing.assert_frame_equal(outcomes.per_query(logs, teams[0], teams[1]), per_query)
    # and back to one bucket on the same connection: user_stats reads the view once, not
    # three times by the count an earlier view left
    monkeypatch.undo()
    outcomes.page_outcomes(logs)
    assert view_parameters(logs.con, outcomes.PAGE_TABLE, ["buckets"])["buckets"] == 1
    stats = outcomes.user_stats(logs)
    assert stats["impressions"].sum() == len(one)
