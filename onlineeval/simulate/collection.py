"""A synthetic judged collection, rankers of controlled quality, and their NDCG@k."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from onlineeval.atomic import open_text
from onlineeval.errors import InvalidParameterError

_SYLLABLES = (
    "ka", "lo", "mi", "ra", "ne", "to", "su", "vi", "de", "po", "ban", "tel", "gor", "fin",
    "sal", "mur", "pe", "no", "ti", "ba", "ro", "ze", "lu", "ma", "ker", "dan", "vo", "si",
)

#: default distribution of grades 0..4 among a topic's judged documents
DEFAULT_GRADE_PROBS = (0.65, 0.17, 0.09, 0.06, 0.03)


@dataclass(frozen=True)
class Collection:
    """Topics with graded judgments and the query texts users type for them.

    ``qrels[qid][docno]`` is the grade 0..4 of every judged document (all documents of a
    topic's pool are judged). ``texts[qid]`` lists query texts: ``texts[qid][0]`` is the usual
    text, the others are reformulations. ``misspelling[qid]`` is a text that returns no results.
    ``popularity`` is the probability of each topic (in ``qids`` order) being searched.
    """

    qids: tuple[str, ...]
    qrels: dict[str, dict[str, int]]
    texts: dict[str, tuple[str, ...]]
    misspelling: dict[str, str]
    popularity: np.ndarray

    def grades(self, qid: str, docnos: Sequence[str]) -> list[int]:
        """Grades of ``docnos`` for topic ``qid``; unjudged documents count as 0."""
        judged = self.qrels.get(qid, {})
        return [judged.get(d, 0) for d in docnos]

    def qrels_frame(self) -> pd.DataFrame:
        """Judgments as a DataFrame with columns qid, docno, rel."""
        rows = [(q, d, g) for q in self.qids for d, g in self.qrels[q].items()]
        return pd.DataFrame(rows, columns=["qid", "docno", "rel"])


def _word(rng: np.random.Generator) -> str:
    n = int(rng.integers(2, 4))
    return "".join(_SYLLABLES[int(i)] for i in rng.integers(0, len(_SYLLABLES), n))


def make_collection(
    rng: np.random.Generator, n_queries: int = 100, docs_per_query: int = 30,
    grade_probs: Sequence[float] = DEFAULT_GRADE_PROBS, zipf_exponent: float = 0.8,
) -> Collection:
    """A judged collection of ``n_queries`` topics with ``docs_per_query`` judged docs each.

    Grades are drawn i.i.d. from ``grade_probs``; a topic whose draw has no document of grade
    >= 1 gets one document re-drawn as grade 1..4 (uniformly), so every topic has a relevant
    document and NDCG is defined. Topic ``i`` (0-based) is searched with probability
    proportional to ``(i + 1) ** -zipf_exponent``. Document ids are ``<qid>-d<NN>``.
    """
    if n_queries < 1 or docs_per_query < 1:
        raise InvalidParameterError(
            f"need n_queries >= 1 and docs_per_query >= 1; got {n_queries}, {docs_per_query}"
        )
    p = np.asarray(grade_probs, dtype=float)
    if p.shape != (5,) or (p < 0).any() or not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
        raise InvalidParameterError(
            f"grade_probs needs 5 non-negative probabilities summing to 1; got {list(grade_probs)}"
        )
    width = max(3, len(str(n_queries)))
    qids = tuple(f"q{i + 1:0{width}d}" for i in range(n_queries))
    qrels: dict[str, dict[str, int]] = {}
    texts: dict[str, tuple[str, ...]] = {}
    misspelling: dict[str, str] = {}
    used: set[str] = set()
    for qid in qids:
        grades = rng.choice(5, size=docs_per_query, p=p)
        if grades.max() == 0:
            grades[int(rng.integers(docs_per_query))] = int(rng.integers(1, 5))
        qrels[qid] = {f"{qid}-d{j + 1:02d}": int(g) for j, g in enumerate(grades)}
        while True:  # every text names one topic only
            w1, w2, w3 = _word(rng), _word(rng), _word(rng)
            base = f"{w1} {w2}"
            # reformulations: a word added, the words swapped, a word replaced
            variants = tuple(dict.fromkeys((base, f"{base} {w3}", f"{w2} {w1}", f"{w1} {w3}")))
            typo = f"{w1}q{w2}"
            if not used.intersection((*variants, typo)):
                break
        used.update((*variants, typo))
        texts[qid] = variants
        misspelling[qid] = typo
    weights = (np.arange(n_queries) + 1.0) ** -zipf_exponent
    return Collection(qids, qrels, texts, misspelling, weights / weights.sum())


@dataclass(frozen=True)
class Run:
    """A ranker's output: per topic, documents in rank order with their scores."""

    name: str
    noise_sd: float
    docs: dict[str, tuple[str, ...]]
    scores: dict[str, tuple[float, ...]]

    def ranking(self, qid: str) -> list[str]:
        """Documents for ``qid`` in rank order (empty when the topic is not in the run)."""
        return list(self.docs.get(qid, ()))

    def frame(self) -> pd.DataFrame:
        """The run as a DataFrame with columns qid, docno, rank (1-based), score."""
        rows = [
            (q, d, r + 1, s)
            for q in self.docs
            for r, (d, s) in enumerate(zip(self.docs[q], self.scores[q], strict=True))
        ]
        return pd.DataFrame(rows, columns=["qid", "docno", "rank", "score"])


def make_run(collection: Collection, name: str, noise_sd: float,
             rng: np.random.Generator) -> Run:
    """A ranker that scores every judged document of a topic as grade + Normal(0, noise_sd).

    Scores are rounded to 6 decimals (what the run file holds) and documents are ordered the
    way trec_eval orders them: by score descending, ties by docno descending. ``noise_sd = 0``
    is the ideal ranker; larger noise gives lower NDCG.
    """
    if not noise_sd >= 0:
        raise InvalidParameterError(f"noise_sd must be >= 0; got {noise_sd}")
    docs: dict[str, tuple[str, ...]] = {}
    scores: dict[str, tuple[float, ...]] = {}
    for qid in collection.qids:
        judged = collection.qrels[qid]
        names = list(judged)
        noise = rng.normal(0.0, noise_sd, size=len(names)) if noise_sd > 0 else np.zeros(len(names))
        scored = [(round(judged[d] + float(e), 6), d) for d, e in zip(names, noise, strict=True)]
        scored.sort(key=lambda t: t[1], reverse=True)
        scored.sort(key=lambda t: t[0], reverse=True)
        docs[qid] = tuple(d for _, d in scored)
        scores[qid] = tuple(s for s, _ in scored)
    return Run(name, float(noise_sd), docs, scores)


def ndcg_per_query(collection: Collection, run: Run, k: int = 10) -> dict[str, float]:
    """NDCG@k per topic of the collection: trec_eval's ``ndcg_cut.k``, from the offline engine.

    DCG@k = sum over ranks r <= k of grade_r / log2(r + 1) (linear gain); the ideal DCG sorts
    all judged grades of the topic. The run is scored in its own rank order (``Run.docs``). A
    topic missing from the run scores 0 (trec_eval -c); a topic without a relevant document
    scores 0.
    """
    from onlineeval.offline import NoSharedQueriesWarning, evaluate

    # scores that reproduce the run's rank order exactly (no ties for trec_eval to break)
    ranks = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)}
             for q, docs in run.docs.items() if docs}
    if not ranks:
        return {qid: 0.0 for qid in collection.qids}
    with warnings.catch_warnings():
        # a run that shares no topic with the collection scores 0 everywhere, as documented
        warnings.simplefilter("ignore", NoSharedQueriesWarning)
        per = evaluate({q: collection.qrels[q] for q in collection.qids}, ranks,
                       [f"ndcg_cut.{int(k)}"], per_query=True, complete=True)
    values = dict(zip(per["qid"], per[f"ndcg_cut_{int(k)}"].astype(float), strict=True))
    return {qid: float(values.get(qid, 0.0)) for qid in collection.qids}


def ndcg_at_k(collection: Collection, run: Run, k: int = 10) -> float:
    """Mean NDCG@k over the collection's topics (see :func:`ndcg_per_query`)."""
    per = ndcg_per_query(collection, run, k)
    return sum(per.values()) / len(per) if per else 0.0


def write_qrels(collection: Collection, path: str | Path) -> Path:
    """Write TREC qrels lines ``qid 0 docno rel`` (atomically, see :mod:`onlineeval.atomic`)."""
    path = Path(path)
    with open_text(path) as fh:
        for qid in collection.qids:
            for docno, grade in collection.qrels[qid].items():
                fh.write(f"{qid} 0 {docno} {grade}\n")
    return path


def write_run(run: Run, path: str | Path, depth: int | None = None) -> Path:
    """Write TREC run lines ``qid Q0 docno rank score tag`` (tag = run name; atomically)."""
    path = Path(path)
    with open_text(path) as fh:
        for qid, docs in run.docs.items():
            for r, (docno, score) in enumerate(zip(docs, run.scores[qid], strict=True)):
                if depth is not None and r >= depth:
                    break
                fh.write(f"{qid} Q0 {docno} {r + 1} {score:.6f} {run.name}\n")
    return path
