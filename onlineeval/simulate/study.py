"""A whole simulated study: collection, rankers, A/B logs for several ranker pairs, manifest."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from onlineeval.atomic import Output, write_text
from onlineeval.errors import InvalidParameterError, OutputError
from onlineeval.progress import Progress
from onlineeval.simulate.clickmodel import ClickModel
from onlineeval.simulate.collection import (
    Collection,
    Run,
    make_collection,
    make_run,
    ndcg_at_k,
    write_qrels,
    write_run,
)
from onlineeval.simulate.events import EventModel, simulate_events
from onlineeval.simulate.traffic import (
    ExperimentSpec,
    LogTables,
    PageBuilder,
    TrafficConfig,
    ab_page_builder,
    simulate_experiment,
)
from onlineeval.simulate.writer import write_logs

#: ranker name -> noise standard deviation (score = grade + Normal(0, sd)); ``sNNN`` = sd*100.
#: ``s080b`` has the same noise as ``s080`` with its own draw: a near-zero offline margin.
DEFAULT_RANKERS: dict[str, float] = {
    "s040": 0.4, "s060": 0.6, "s080": 0.8, "s080b": 0.8, "s100": 1.0, "s130": 1.3,
    "s160": 1.6, "s200": 2.0, "s260": 2.6,
}


@dataclass(frozen=True)
class Pair:
    """A ranker pair run as one experiment: control ranker vs treatment ranker."""

    control: str
    treatment: str

    @property
    def name(self) -> str:
        return f"{self.control}_vs_{self.treatment}"


#: experiments of the default study: large, medium, small, negative, near-zero and zero margins
DEFAULT_PAIRS: tuple[Pair, ...] = (
    Pair("s260", "s040"),
    Pair("s200", "s100"),
    Pair("s080", "s040"),
    Pair("s130", "s080"),
    Pair("s160", "s130"),
    Pair("s100", "s080"),
    Pair("s060", "s100"),
    Pair("s080", "s080b"),
    Pair("s100", "s100"),
    Pair("s200", "s160"),
)


def parse_pairs(text: str) -> tuple[Pair, ...]:
    """Parse ``"ctrl:treat,ctrl:treat"`` into pairs."""
    pairs = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        parts = item.split(":")
        if len(parts) != 2 or not all(parts):
            raise InvalidParameterError(
                f"a ranker pair must look like CONTROL:TREATMENT; got {item!r} in {text!r}"
            )
        pairs.append(Pair(parts[0], parts[1]))
    if not pairs:
        raise InvalidParameterError(f"no ranker pairs in {text!r}")
    return tuple(pairs)


def parse_rankers(text: str) -> dict[str, float]:
    """Parse ``"name=sd,name=sd"`` into a ranker table."""
    out: dict[str, float] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, sd = item.partition("=")
        try:
            value = float(sd)
        except ValueError:
            value = float("nan")
        if not sep or not name or not value >= 0:
            raise InvalidParameterError(
                f"a ranker must look like NAME=NOISE_SD with NOISE_SD >= 0; got {item!r}"
            )
        out[name] = value
    if not out:
        raise InvalidParameterError(f"no rankers in {text!r}")
    return out


_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


#: spawn-key suffix of the events streams: an experiment's events draw from
#: ``key + (EVENTS_STREAM,)``, apart from the draws of its searches and clicks
EVENTS_STREAM = 0xE7E


def _stream(seed: int, *key: int) -> np.random.Generator:
    # SeedSequence(seed, spawn_key=(i,)) is exactly SeedSequence(seed).spawn(n)[i]
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def as_pairs(pairs: Sequence[Pair | tuple[str, str]]) -> tuple[Pair, ...]:
    """The pairs as :class:`Pair`; a ``(control, treatment)`` tuple of names is accepted."""
    if isinstance(pairs, str | bytes):
        raise InvalidParameterError(
            f"pairs must be a sequence of Pair or (control, treatment) tuples, not the string "
            f"{pairs!r}; parse a 'ctrl:treat,...' text with parse_pairs"
        )
    out = []
    for p in pairs:
        if isinstance(p, Pair):
            out.append(p)
        elif (isinstance(p, tuple | list) and len(p) == 2
              and all(isinstance(x, str) for x in p)):
            out.append(Pair(p[0], p[1]))
        else:
            raise InvalidParameterError(
                f"each ranker pair must be a Pair or a (control, treatment) tuple of ranker "
                f"names; got {p!r}"
            )
    return tuple(out)


def _check_pairs(rankers: Mapping[str, object],
                 given: Sequence[Pair | tuple[str, str]]) -> tuple[Pair, ...]:
    """The pairs as :class:`Pair` (:func:`as_pairs`), each naming known rankers, no repeats."""
    pairs = as_pairs(given)
    for p in pairs:
        for name in (p.control, p.treatment):
            if name not in rankers:
                raise InvalidParameterError(
                    f"pair {p.control}:{p.treatment} names unknown ranker {name!r}; "
                    f"rankers: {', '.join(rankers)}"
                )
    names = [p.name for p in pairs]
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"duplicate ranker pairs: {names}")
    return pairs


def build_world(seed: int, rankers: Mapping[str, float] | None = None, n_queries: int = 100,
                docs_per_query: int = 30) -> tuple[Collection, dict[str, Run]]:
    """The collection and the rankers' runs of the study with this seed (as :func:`simulate`
    makes them): the collection from stream ``(0,)``, ranker i from stream ``(1 + i,)`` of
    ``SeedSequence(seed)``, rankers in the given order."""
    if not isinstance(seed, int) or seed < 0:
        raise InvalidParameterError(f"seed must be a non-negative integer; got {seed!r}")
    rankers = dict(DEFAULT_RANKERS if rankers is None else rankers)
    if not rankers:
        raise InvalidParameterError("need at least one ranker")
    for name in rankers:
        if not _NAME.fullmatch(name):
            raise InvalidParameterError(
                f"ranker name {name!r} is not usable as a run file name and TREC tag; use "
                "letters, digits, '_', '-' and '.', not starting with '.'"
            )
    collection = make_collection(_stream(seed, 0), n_queries, docs_per_query)
    runs = {
        name: make_run(collection, name, sd, _stream(seed, 1 + i))
        for i, (name, sd) in enumerate(rankers.items())
    }
    return collection, runs


PageBuilderFactory = Callable[[Mapping[str, Run], Pair, int], PageBuilder]
AssignFactory = Callable[[Pair], Callable[[str], str]]


def simulate_pairs(
    collection: Collection, runs: Mapping[str, Run], pairs: Sequence[Pair | tuple[str, str]],
    seed: int, *,
    users_per_experiment: int = 3000, stream: int = 0,
    page_builder_factory: PageBuilderFactory | None = None,
    assign_factory: AssignFactory | None = None, click_model: ClickModel | None = None,
    traffic: TrafficConfig | None = None, label: str = "simulating users",
    events: EventModel | None = None,
) -> tuple[LogTables, list[dict]]:
    """Simulate one experiment per ranker pair; return the stacked tables and per-pair facts.

    Pair i gets users ``e<NN>-u<NNNNN>`` (NN = i + 1) and the random stream
    ``(1 + len(runs) + i,)`` of ``SeedSequence(seed)`` when ``stream == 0`` (what
    :func:`simulate` uses for the A/B logs), else ``(1 + len(runs) + i, stream)``, so another
    kind of log for the same pairs (e.g. interleaving, ``stream=1``) has its own draws.
    ``page_builder_factory(runs, pair, k)`` defaults to :func:`ab_page_builder`;
    ``assign_factory(pair)`` returns the ``assign`` for :func:`simulate_experiment`
    (default: the hash split salted with the pair's name). Progress shows on a TTY.

    With an ``events`` model, each pair's clicks are followed by events
    (:func:`~onlineeval.simulate.events.simulate_events`) drawn from the stream
    ``key + (EVENTS_STREAM,)``, so the searches, results and clicks are the same with or
    without them; the facts then count the events by type.
    """
    pairs = _check_pairs(runs, pairs)
    if users_per_experiment < 1:
        raise InvalidParameterError(f"users_per_experiment must be >= 1; got {users_per_experiment}")
    model = click_model or ClickModel()
    cfg = traffic or TrafficConfig()
    parts: list[LogTables] = []
    facts: list[dict] = []
    with Progress(label, users_per_experiment * len(pairs)) as bar:
        for i, pair in enumerate(pairs):
            spec = ExperimentSpec(pair.name, users_per_experiment)
            if page_builder_factory is None:
                builder = ab_page_builder(runs, pair.control, pair.treatment, cfg.k)
            else:
                builder = page_builder_factory(runs, pair, cfg.k)
            key = (1 + len(runs) + i,) if stream == 0 else (1 + len(runs) + i, stream)
            tables = simulate_experiment(
                collection, spec, builder, _stream(seed, *key), click_model=model,
                traffic=cfg, assign=assign_factory(pair) if assign_factory else None,
                id_prefix=f"e{i + 1:02d}-", progress=bar,
            )
            s = tables.searches
            fact = {
                "name": pair.name, "control": pair.control, "treatment": pair.treatment,
                "hash_salt": spec.hash_salt, "treatment_share": spec.treatment_share,
                "users": {str(v): int(n) for v, n in
                          s.groupby("variant")["user_id"].nunique().sort_index().items()},
                "searches": int(len(s)), "clicks": int(len(tables.clicks)),
            }
            if events is not None:
                tables.events = simulate_events(collection, tables,
                                                _stream(seed, *key, EVENTS_STREAM), events)
                fact["events"] = event_counts(tables.events)
            parts.append(tables)
            facts.append(fact)
    return LogTables.concat(parts), facts


def event_counts(events: pd.DataFrame) -> dict[str, int]:
    """Events by type (sorted by type), for a manifest."""
    return {str(t): int(n) for t, n in events.groupby("type").size().sort_index().items()}


def event_model(events: bool | EventModel) -> EventModel | None:
    """The model behind an ``events=`` argument: True -> the default :class:`EventModel`,
    False -> None (no events), a model -> itself."""
    if isinstance(events, EventModel):
        return events
    if isinstance(events, bool):
        return EventModel() if events else None
    raise InvalidParameterError(
        f"events must be True, False or an EventModel; got {events!r}")


def simulate(
    outdir: str | Path, seed: int = 0, *, users_per_experiment: int = 3000,
    rankers: Mapping[str, float] | None = None,
    pairs: Sequence[Pair | tuple[str, str]] | None = None,
    n_queries: int = 100, docs_per_query: int = 30, click_model: ClickModel | None = None,
    traffic: TrafficConfig | None = None, overwrite: bool = False,
    events: bool | EventModel = True,
) -> dict:
    """Generate a study into ``outdir`` deterministically from ``seed``; return the manifest.

    Writes ``qrels.txt`` (``qid 0 docno rel``), ``runs/<ranker>.run`` (``qid Q0 docno rank
    score tag``, every judged document of each topic), ``ab/{searches,results,clicks}.parquet``
    (one experiment per pair, named ``<control>_vs_<treatment>``, variants control/treatment,
    users split by :func:`~onlineeval.simulate.traffic.assign_variant` salted with the
    experiment name; each experiment has its own users ``e<NN>-u<NNNNN>``) and
    ``manifest.json`` (seed, every parameter, NDCG@10 per ranker from
    :func:`~onlineeval.simulate.collection.ndcg_at_k`, and per experiment the offline margin
    and row counts).

    ``events`` (default True; CLI ``--events/--no-events``): also write ``ab/events.parquet``,
    purchases and add-to-carts following the clicks by
    :class:`~onlineeval.simulate.events.EventModel` (True: its defaults; or pass a model),
    with the model's parameters and the counts by type in the manifest. The other files are
    the same with or without events.

    Random streams: ``numpy.random.SeedSequence(seed)`` spawns one child for the collection,
    one per ranker (in ``rankers`` order) and one per experiment (in ``pairs`` order); see
    :func:`build_world` and :func:`simulate_pairs`, which other log kinds reuse.
    """
    rankers = dict(DEFAULT_RANKERS if rankers is None else rankers)
    if not rankers:
        raise InvalidParameterError("need at least one ranker")
    pairs = _check_pairs(rankers, DEFAULT_PAIRS if pairs is None else pairs)
    if users_per_experiment < 1:
        raise InvalidParameterError(f"users_per_experiment must be >= 1; got {users_per_experiment}")
    if not isinstance(seed, int) or seed < 0:
        raise InvalidParameterError(f"seed must be a non-negative integer; got {seed!r}")
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise OutputError(f"{outdir} is a file; expected a directory for the study")
    targets = [outdir / "qrels.txt", outdir / "manifest.json", outdir / "runs", outdir / "ab"]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not overwrite:
        raise OutputError(
            f"{outdir} already holds a study ({', '.join(existing)}); pass overwrite=True "
            "(CLI: --force) to replace it, or choose an empty directory"
        )
    model = click_model or ClickModel()
    cfg = traffic or TrafficConfig()
    ev_model = event_model(events)

    # built in a temporary directory next to outdir and moved into it when complete; with
    # overwrite only the files written here are replaced (other runs in runs/ stay), and an
    # events table of the replaced study goes even when this one has none: it would be read
    # with the new logs
    with Output() as out:
        stage = out.directory(outdir, overwrite=overwrite, replaces=("ab/events.parquet",))
        collection, runs = build_world(seed, rankers, n_queries, docs_per_query)
        ndcg = {name: ndcg_at_k(collection, run, 10) for name, run in runs.items()}
        write_qrels(collection, stage / "qrels.txt")
        for name, run in runs.items():
            write_run(run, stage / "runs" / f"{name}.run")

        logs, facts = simulate_pairs(collection, runs, pairs, seed,
                                     users_per_experiment=users_per_experiment,
                                     click_model=model, traffic=cfg, events=ev_model)
        experiments = []
        for f in facts:
            experiments.append({
                "name": f["name"], "control": f["control"], "treatment": f["treatment"],
                "ndcg10_control": ndcg[f["control"]], "ndcg10_treatment": ndcg[f["treatment"]],
                "ndcg10_delta": ndcg[f["treatment"]] - ndcg[f["control"]],
                **{k: f[k] for k in ("hash_salt", "treatment_share", "users", "searches",
                                     "clicks", "events") if k in f},
            })
        write_logs(logs, stage / "ab")

        manifest = {
            "generator": "onlineeval.simulate",
            "seed": seed,
            "users_per_experiment": users_per_experiment,
            "collection": {"n_queries": n_queries, "docs_per_query": docs_per_query,
                           "qrels": "qrels.txt", "grade_counts": _grade_counts(collection)},
            "rankers": {name: {"noise_sd": rankers[name], "ndcg10": ndcg[name],
                               "run": f"runs/{name}.run"} for name in runs},
            "experiments": experiments,
            "click_model": model.params(),
            "traffic": cfg.params(),
            "logs": {"dir": "ab", "searches": int(len(logs.searches)),
                     "results": int(len(logs.results)), "clicks": int(len(logs.clicks))},
            "ndcg_definition": "mean over topics of trec_eval ndcg_cut.10 (linear gain)",
        }
        if logs.events is not None and ev_model is not None:
            # only with events, so a study without them keeps the manifest it always had
            manifest["events"] = ev_model.params()
            manifest["logs"]["events"] = event_counts(logs.events)
        write_text(stage / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    others = sorted(p.name for p in (outdir / "runs").glob("*.run")
                    if p.stem not in runs)
    if others:
        warnings.warn(
            f"{outdir / 'runs'} also holds run files this study did not write, left as they "
            f"were: {', '.join(others)}", stacklevel=2,
        )
    return manifest


def _grade_counts(collection: Collection) -> dict[str, int]:
    counts = {str(g): 0 for g in range(5)}
    for judged in collection.qrels.values():
        for g in judged.values():
            counts[str(g)] += 1
    return counts
