"""Differential check against a real trec_eval 10.0 binary, on random collections.

Skipped unless ``TREC_EVAL`` names a trec_eval 10.0 executable (build it from
https://github.com/usnistgov/trec_eval, tag/commit of version 10.0, with ``make``; its code is
not part of this repository). ``TREC_EVAL_SEEDS`` sets how many random collections to try
(default 40). Every collection is evaluated with several flag sets and the outputs must be
identical byte for byte; differences found this way are kept as golden files in
``tests/data/trec_eval/`` (see PROVENANCE.md) so that the default test run checks them
without the binary.

The collections are hostile on purpose: grades -1..4 (negative = in the pool, unjudged),
queries judged all 0 or only -1, score ties, scores written in several notations, long
docnos and qids that sort differently as numbers and as bytes, queries the run lacks and run
queries nobody judged, tab or space separators.
"""

from __future__ import annotations

import difflib
import io
import os
import random
import subprocess
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from onlineeval.cli import main

BINARY = os.environ.get("TREC_EVAL", "")
SEEDS = int(os.environ.get("TREC_EVAL_SEEDS", "40"))

pytestmark = pytest.mark.skipif(
    not (BINARY and Path(BINARY).is_file()),
    reason="set TREC_EVAL to a trec_eval 10.0 binary to run the differential check",
)

FLAG_SETS = [
    ["-q", "-m", "all_trec"],
    ["-q", "-c", "-m", "all_trec"],
    ["-q", "-c", "-l2", "-m", "all_trec"],
    ["-q", "-l0", "-m", "all_trec"],
    ["-q", "-c", "-l0", "-m", "all_trec"],
    ["-q", "-l3", "-M3", "-m", "all_trec"],
    ["-q", "-c", "-M1", "-m", "all_trec"],
    ["-q", "-c", "-M0", "-m", "all_trec"],
    ["-q", "-l2", "-m", "ndcg.1=0,2=3,3=-1", "-m", "Rndcg.1=0,2=0", "-m", "G.4=0",
     "-m", "P.1,2,3,50", "-m", "ndcg_cut.1,2,3", "-m", "success.1,2", "-m", "map_cut.2,3",
     "-m", "relstring.7", "-m", "utility.2,-1,0,0", "-m", "Rprec_mult.0.5,2.0",
     "-m", "rbp.p=0.5,2=4", "-m", "iprec_at_recall..33,.66", "-m", "11pt_avg..25,.5"],
    ["-c", "-m", "official"],
    ["-m", "set", "-l4"],
    ["-q", "-c", "-l5", "-M2", "-m", "all_trec"],
    ["-q", "-c", "-M1000", "-m", "P", "-m", "ndcg_cut", "-m", "map_cut", "-m", "success"],
    ["-n", "-q", "-c", "-l2", "-m", "num_rel", "-m", "num_q", "-m", "gm_map"],
]


def _qid(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.5:
        return str(rng.choice([1, 2, 9, 10, 11, 100, 301, 302, 1000]))
    if kind < 0.8:
        return "".join(rng.choice("abcXYZ-_.:09éΩ") for _ in range(rng.randint(1, 6)))
    return "q" + "".join(rng.choice("0123456789abcdef") for _ in range(rng.randint(60, 120)))


def _docno(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return "DOC-" + "".join(rng.choice("ABCxyz0189") for _ in range(rng.randint(80, 300)))
    return rng.choice(["d", "D", "doc", "FBIS3-", "a.b", "zz", "é", "d0"]) + str(
        rng.randint(0, rng.choice([40, 2000])))


def _score(rng: random.Random, tied: bool) -> str:
    if tied:
        return rng.choice(["1", "2", "2.0", "+2", "2.5", "0", "-0", "-1", "3e0", "0.5", "inf",
                           "-inf", "1e308", "4.9e-324"])
    value = rng.uniform(-5, 20)
    return rng.choice([f"{value:.6f}", f"{value:.17g}", f"{value:e}", f"{value:.2f}"])


def random_collection(seed: int) -> tuple[str, str, list[str]]:
    """(qrels text, run text, judged qids) of one random collection."""
    rng = random.Random(seed)
    qids = sorted({_qid(rng) for _ in range(rng.randint(1, 7))})
    docs = sorted({_docno(rng) for _ in range(rng.randint(3, rng.choice([60, 60, 1500])))})
    qrels_lines: list[str] = []
    run_lines: list[str] = []
    sep = rng.choice([" ", "\t"])
    judged: list[str] = []
    first = min(qids, key=str.encode)
    for q in qids:
        style = rng.random()
        pool = rng.sample(docs, rng.randint(1, len(docs)))
        if style < 0.1:
            grades = [0] * len(pool)                      # judged, nothing relevant
        elif style < 0.15 and q != first:
            # in the pool only. Not the first query trec_eval evaluates: there trec_eval 10.0
            # stops ("Can't calculate measure 'num_ret'": form_res_rels.c asks for room for
            # max grade + 1 = 0 counts and takes the NULL it gets for an error); onlineeval
            # scores the query as trec_eval does in any other position
            grades = [-1] * len(pool)
        else:
            grades = [rng.choice([-1, 0, 0, 1, 1, 2, 3, 4]) for _ in pool]
        judged.append(q)
        for d, g in zip(pool, grades, strict=True):
            qrels_lines.append(sep.join([q, "0", d, str(g)]))
    run_qids = [q for q in qids if q == first or rng.random() < 0.85]
    run_qids += [_qid(rng) + "x" for _ in range(rng.randint(0, 2))]   # nobody judged these
    if not run_qids:
        run_qids = [qids[0]]
    tied = rng.random() < 0.5
    for q in run_qids:
        n = rng.randint(1, len(docs))
        for rank, d in enumerate(rng.sample(docs, n), 1):
            run_lines.append(sep.join([q, "Q0", d, str(rank), _score(rng, tied), "runtag"]))
    rng.shuffle(qrels_lines)
    if rng.random() < 0.5:
        rng.shuffle(run_lines)
    if rng.random() < 0.3:
        # messy layout, as trec_eval reads it: runs of spaces and tabs, CRLF, junk after the
        # sixth run field, '#' comment lines (qrels: one at a time, before a judgment)
        def messy(line: str) -> str:
            fields = line.split(sep)
            return "".join(f + rng.choice([" ", "  ", "\t", " \t"]) for f in fields[:-1]) \
                + fields[-1] + rng.choice(["", " ", "\r"])
        qrels_lines = [("# judged\n" if rng.random() < 0.1 else "") + messy(line)
                       for line in qrels_lines]
        run_lines = [("# a comment\n" if rng.random() < 0.1 else "") + messy(line)
                     + rng.choice(["", " extra words"]) for line in run_lines]
    return "\n".join(qrels_lines) + "\n", "\n".join(run_lines) + "\n", judged


def _ours(args: list[str]) -> subprocess.CompletedProcess:
    """``onlineeval trec-eval ARGS``, in this process (a subprocess per call is slow)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("always")
        code = main(["trec-eval", *args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def _theirs(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([BINARY, *args], capture_output=True, text=True)


def _restricted(qrels: Path, run_text: str, tmp: Path) -> Path:
    """The qrels without the queries the run lacks: what skipping them means (trec_eval
    10.0 refuses such a run without -c; onlineeval, like trec_eval 9, skips them)."""
    in_run = {line.split()[0] for line in run_text.splitlines()
              if line.strip() and not line.lstrip().startswith("#")}
    kept = [line for line in qrels.read_text().splitlines()
            if not line.startswith("#") and line.split()[0] in in_run]
    out = tmp / "qrels.restricted"
    out.write_text("\n".join(kept) + "\n")
    return out


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_collection_matches_trec_eval(tmp_path, seed):
    qrels_text, run_text, _judged = random_collection(seed)
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    failures = []
    for flags in FLAG_SETS:
        ours = _ours([*flags, str(qrels), str(run)])
        reference = qrels
        if "-c" not in flags:
            reference = _restricted(qrels, run_text, tmp_path)
            if reference.read_text().strip() == "":
                assert ours.returncode == 2 and "no query has both" in ours.stderr
                continue
        theirs = _theirs([*flags, str(reference), str(run)])
        assert theirs.returncode == 0, (flags, theirs.stderr)
        if ours.stdout != theirs.stdout or ours.returncode != 0:
            diff = difflib.unified_diff(theirs.stdout.splitlines(), ours.stdout.splitlines(),
                                        "trec_eval", "onlineeval", lineterm="", n=0)
            failures.append(f"{' '.join(flags)} (exit {ours.returncode}: "
                            f"{ours.stderr.strip()[:300]})\n" + "\n".join(list(diff)[:30]))
    assert not failures, f"seed {seed}:\n" + "\n\n".join(failures)
