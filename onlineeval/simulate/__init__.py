"""Simulated search studies: a judged collection, rankers of known quality, users who click.

Everything is deterministic from a seed, and every function that draws random numbers takes a
``numpy.random.Generator`` (never the global RNG), so the pieces can be reused one at a time by
the interleaving and A/B code and by benchmarks.

Pieces (each small and pure; import from ``onlineeval.simulate``)
-----------------------------------------------------------------
Collection and rankers (:mod:`onlineeval.simulate.collection`)
    ``make_collection(rng, n_queries=100, docs_per_query=30, ...) -> Collection``
        Topics ``q001..`` with graded judgments 0..4, query texts (a usual text, reformulation
        texts, a zero-result misspelling) and a Zipf-like topic popularity.
        ``Collection.grades(qid, docnos) -> list[int]`` (unjudged -> 0),
        ``Collection.qrels_frame() -> DataFrame[qid, docno, rel]``.
    ``make_run(collection, name, noise_sd, rng) -> Run``
        score(d) = grade(d) + Normal(0, noise_sd), rounded to 6 decimals; larger noise, worse
        ranker. ``Run.ranking(qid) -> list[str]`` in rank order, ``Run.frame()``.
    ``ndcg_at_k(collection, run, k=10) -> float`` and ``ndcg_per_query(...) -> dict``
        A small independent NDCG@k (trec_eval ``ndcg_cut.k`` definition, linear gain).
    ``write_qrels(collection, path)``, ``write_run(run, path)``: TREC text formats.

Click model (:mod:`onlineeval.simulate.clickmodel`)
    ``ClickModel(attractiveness=..., satisfaction=..., continuation=0.8, ...)``: a DBN-style
    cascade with position bias and a per-user click propensity; formulas in its docstring.
    ``ClickModel.simulate(grades, rng, propensity=0.0) -> PageOutcome(clicks, satisfied)``
    ``ClickModel.click_probabilities(grades, propensity=0.0) -> np.ndarray`` (exact marginals)
    ``ClickModel.simulate_batch(grades_2d, rng, propensity_1d) -> (clicked, satisfied, dwell_ms)``
    ``simulate_clicks(grades, rng, propensity=0.0, model=None) -> list[Click(rank, dwell_ms)]``

Users and traffic (:mod:`onlineeval.simulate.traffic`)
    ``assign_variant(user_id, salt, treatment_share=0.5) -> "control" | "treatment"``
        SHA-256 of ``f"{salt}:{user_id}"``; stable across runs, machines and Python versions.
    ``ab_page_builder(runs, control, treatment, k=10) -> PageBuilder``
        A ``PageBuilder`` is ``(variant, qid, rng) -> (docnos, teams_or_None)``; interleaving
        plugs in its own builder (teams filled) and its own ``assign``.
    ``simulate_experiment(collection, experiment, page_builder, rng, *, click_model=None,
    traffic=None, assign=None, id_prefix="", progress=None, propensity_shift=None)
    -> LogTables``
        Users with a propensity random effect, sessions, tasks, reformulations, zero-result
        searches, timestamps, clicks with dwell. ``propensity_shift={"treatment": 0.3}``
        adds a known effect (logit scale) on the pages of a variant;
        ``TrafficConfig(pre_days=14)`` adds a pre-period served as control (for CUPED).
    ``LogTables(searches, results, clicks)`` pandas frames in the canonical schema;
    ``LogTables.concat([...])``.

Downstream events (:mod:`onlineeval.simulate.events`)
    ``EventModel(purchase_max=0.15, cart_max=0.30, value_median=40.0, value_sigma=0.8,
    fast_share=0.7, fast_mean_s=600.0, slow_mean_s=86400.0, share_search_id=0.6,
    share_doc_id=0.25)``: after a click on a result of grade g a ``purchase`` with
    probability ``purchase_max * (2^g - 1) / 15`` and a log-normal value, an ``add_to_cart``
    with ``cart_max * (2^g - 1) / 15``, each a two-exponential delay later; formulas in its
    docstring. ``simulate_events(collection, tables, rng, model=None) -> DataFrame`` in the
    ``events`` table's columns (user_id, ts, type, value, search_id, doc_id).

Writing (:mod:`onlineeval.simulate.writer`)
    ``write_logs(tables, outdir) -> dict[str, Path]``: ``searches/results/clicks.parquet``
    (ids VARCHAR, ts TIMESTAMP, rank/n_results INTEGER, dwell_ms BIGINT) through DuckDB, and
    ``events.parquet`` (value DOUBLE) when ``tables.events`` is set.

The whole study (:mod:`onlineeval.simulate.study`)
    ``simulate(outdir, seed=0, *, users_per_experiment=3000, rankers=None, pairs=None, ...)
    -> dict`` writes ``qrels.txt``, ``runs/<ranker>.run``, ``ab/{searches,results,clicks}.parquet``,
    ``ab/events.parquet`` (``events=True``, the default; or an ``EventModel``) and
    ``manifest.json`` (parameters, seed, per-ranker NDCG@10, per-experiment margins and
    counts) and returns the manifest. CLI: ``onlineeval simulate OUTDIR --seed N``.
    ``build_world(seed, rankers=None, n_queries=100, docs_per_query=30)
    -> (Collection, dict[str, Run])``: the same collection and runs as ``simulate`` for that
    seed. ``simulate_pairs(collection, runs, pairs, seed, *, users_per_experiment=3000,
    stream=0, page_builder_factory=None, assign_factory=None, click_model=None, traffic=None,
    events=None) -> (LogTables, list[dict])``: one experiment per :class:`Pair` (``stream=0``
    reproduces the A/B logs of ``simulate``; another stream, e.g. 1 for interleaving, draws afresh;
    ``page_builder_factory(runs, pair, k) -> PageBuilder``, ``assign_factory(pair) ->
    (user_id -> variant)``). ``DEFAULT_RANKERS`` (name -> noise sd) and ``DEFAULT_PAIRS``.
"""

from __future__ import annotations

from onlineeval.namespace import lazy_submodules, make_callable
from onlineeval.simulate.clickmodel import Click, ClickModel, PageOutcome, simulate_clicks
from onlineeval.simulate.collection import (
    Collection,
    Run,
    make_collection,
    make_run,
    ndcg_at_k,
    ndcg_per_query,
    write_qrels,
    write_run,
)
from onlineeval.simulate.events import EventModel, simulate_events
from onlineeval.simulate.study import (
    DEFAULT_PAIRS,
    DEFAULT_RANKERS,
    Pair,
    build_world,
    simulate,
    simulate_pairs,
)
from onlineeval.simulate.traffic import (
    ExperimentSpec,
    LogTables,
    PageBuilder,
    TrafficConfig,
    ab_page_builder,
    assign_variant,
    simulate_experiment,
)
from onlineeval.simulate.writer import write_logs

__all__ = [
    "DEFAULT_PAIRS",
    "DEFAULT_RANKERS",
    "Click",
    "ClickModel",
    "Collection",
    "EventModel",
    "ExperimentSpec",
    "LogTables",
    "PageBuilder",
    "PageOutcome",
    "Pair",
    "Run",
    "TrafficConfig",
    "ab_page_builder",
    "assign_variant",
    "build_world",
    "make_collection",
    "make_run",
    "ndcg_at_k",
    "ndcg_per_query",
    "simulate",
    "simulate_clicks",
    "simulate_events",
    "simulate_experiment",
    "simulate_pairs",
    "write_logs",
    "write_qrels",
    "write_run",
]


# onlineeval.simulate(outdir, seed) runs simulate(); onlineeval.simulate.interleaving etc.
# load on first use (onlineeval.namespace)
make_callable(__name__)
__getattr__ = lazy_submodules(__name__)
