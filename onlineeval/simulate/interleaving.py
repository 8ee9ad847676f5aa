"""Simulated interleaving: users see the team-draft list of two rankers and click by the
same click model as the A/B logs.

Two ways to use it:

- :func:`simulate_interleaving_experiment` / :func:`simulate_interleaving_study` run the full
  traffic simulation (users, sessions, reformulations, timestamps, dwell) of
  :func:`onlineeval.simulate.traffic.simulate_experiment` with a team-draft page builder, and
  write canonical logs whose ``results.team`` names the ranker of each result (variant
  ``interleaved`` for every user). The study version rebuilds the collection and rankers of an
  A/B study from its ``manifest.json`` and simulates one interleaving experiment per A/B pair,
  with the same experiment names.
- :func:`simulate_outcomes` is the fast path for repeated experiments (validity tests,
  benchmarks): independent pages, the topic drawn by popularity, the merged list drawn from the
  exact team-draft distribution of that topic, clicks from ``ClickModel.simulate_batch``;
  returns the credit of each team per page as numpy arrays, no logs.

Run as a script to regenerate the sample interleaving logs:
``python -m onlineeval.simulate.interleaving sample_logs sample_logs/interleaving``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from datetime import datetime
from pathlib import Path

import numpy as np

from onlineeval.atomic import Output, write_text
from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.interleaving import team_draft, team_draft_distribution
from onlineeval.logs.convert.parquet import LogTables
from onlineeval.progress import Progress
from onlineeval.simulate.clickmodel import DEFAULT_CLICK_MODEL, ClickModel
from onlineeval.simulate.collection import Collection, Run
from onlineeval.simulate.events import EventModel, simulate_events
from onlineeval.simulate.study import EVENTS_STREAM, build_world, event_counts, event_model
from onlineeval.simulate.traffic import (
    ExperimentSpec,
    PageBuilder,
    TrafficConfig,
    simulate_experiment,
)
from onlineeval.simulate.writer import write_logs

VARIANT = "interleaved"
# spawn-key offset of the interleaving streams, apart from the A/B study's own streams
_STREAM = 0x1E4


def team_names(ranker_a: str, ranker_b: str) -> tuple[str, str]:
    """Team labels of a pair: the ranker names, or ``<name>/control`` and
    ``<name>/treatment`` when a ranker is interleaved with itself (A/A)."""
    if ranker_a != ranker_b:
        return ranker_a, ranker_b
    return f"{ranker_a}/control", f"{ranker_b}/treatment"


def interleaving_page_builder(runs: Mapping[str, Run], ranker_a: str, ranker_b: str,
                              k: int = 10) -> PageBuilder:
    """A page builder serving every user the team-draft list of two rankers' top documents.

    Teams are :func:`team_names`; the coin flips draw from the traffic generator's ``rng``.
    """
    for name in (ranker_a, ranker_b):
        if name not in runs:
            raise InvalidParameterError(
                f"unknown ranker {name!r}; known rankers: {', '.join(sorted(runs))}"
            )
    teams = team_names(ranker_a, ranker_b)
    run_a, run_b = runs[ranker_a], runs[ranker_b]

    def build(variant: str, qid: str, rng: np.random.Generator) -> tuple[list[str], list[str]]:
        merged = team_draft(run_a.ranking(qid)[:k], run_b.ranking(qid)[:k], k=k, rng=rng,
                            teams=teams)
        return [str(d) for d in merged.docs], [str(t) for t in merged.teams]

    return build


def simulate_interleaving_experiment(
    collection: Collection, runs: Mapping[str, Run], ranker_a: str, ranker_b: str,
    name: str, n_users: int, rng: np.random.Generator, *,
    click_model: ClickModel | None = None, traffic: TrafficConfig | None = None,
    id_prefix: str = "", progress: Progress | None = None,
) -> LogTables:
    """Canonical logs of one interleaving experiment (every user sees interleaved lists)."""
    cfg = traffic or TrafficConfig()
    return simulate_experiment(
        collection, ExperimentSpec(name, n_users),
        interleaving_page_builder(runs, ranker_a, ranker_b, cfg.k), rng,
        click_model=click_model, traffic=cfg, assign=lambda _user: VARIANT,
        id_prefix=id_prefix, progress=progress,
    )


def _click_model(params: Mapping[str, object]) -> ClickModel:
    renamed = {"attractiveness_by_grade": "attractiveness",
               "satisfaction_by_grade": "satisfaction"}
    known = {f.name for f in fields(ClickModel) if f.init}
    kw = {renamed.get(k, k): v for k, v in params.items() if renamed.get(k, k) in known}
    for key in ("attractiveness", "satisfaction"):
        if key in kw:
            kw[key] = tuple(kw[key])  # type: ignore[arg-type]
    return ClickModel(**kw)  # type: ignore[arg-type]


def _traffic(params: Mapping[str, object]) -> TrafficConfig:
    kw = dict(params)
    kw["start"] = datetime.fromisoformat(str(kw["start"]))
    for key in ("reaction_s", "think_s"):
        kw[key] = tuple(kw[key])  # type: ignore[arg-type]
    return TrafficConfig(**kw)  # type: ignore[arg-type]


def _event_model(params: Mapping[str, object]) -> EventModel:
    known = {f.name for f in fields(EventModel) if f.init}
    return EventModel(**{k: v for k, v in params.items() if k in known})  # type: ignore[arg-type]


def study_rankers(manifest: Mapping[str, object]) -> tuple[Collection, dict[str, Run]]:
    """Rebuild the collection and rankers of an A/B study from its manifest.

    The study's own :func:`onlineeval.simulate.study.build_world` with the manifest's seed,
    rankers (in manifest order) and collection size. :func:`simulate_interleaving_study`
    checks the rebuilt runs against the study's run files, so a change in the study generator
    cannot go unnoticed.
    """
    rankers: Mapping[str, Mapping[str, object]] = manifest["rankers"]  # type: ignore[assignment]
    coll: Mapping[str, object] = manifest["collection"]  # type: ignore[assignment]
    return build_world(
        int(manifest["seed"]),  # type: ignore[arg-type]
        {name: float(spec["noise_sd"]) for name, spec in rankers.items()},  # type: ignore[arg-type]
        int(coll["n_queries"]), int(coll["docs_per_query"]),  # type: ignore[arg-type]
    )


def _check_runs(study_dir: Path, manifest: Mapping[str, object], runs: Mapping[str, Run]) -> None:
    for name, spec in manifest["rankers"].items():  # type: ignore[union-attr]
        path = study_dir / str(spec["run"])
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        expected = [
            f"{qid} Q0 {d} {r + 1} {s:.6f} {name}"
            for qid, docs in runs[name].docs.items()
            for r, (d, s) in enumerate(zip(docs, runs[name].scores[qid], strict=True))
        ]
        if lines[: len(expected)] != expected[: len(lines)]:
            raise InputError(
                f"{path}: the ranker rebuilt from {study_dir / 'manifest.json'} differs from "
                "the study's run file; regenerate the study and the interleaving logs together"
            )


def simulate_interleaving_study(study_dir: str | Path, outdir: str | Path, *,
                                users_per_experiment: int | None = None,
                                events: bool | EventModel | None = None) -> dict:
    """Simulate interleaving logs for every ranker pair of an A/B study; return a manifest.

    Reads ``study_dir/manifest.json`` (written by :func:`onlineeval.simulate.simulate`),
    rebuilds its collection and rankers, and writes ``outdir/{searches,results,clicks}.parquet``
    and ``outdir/manifest.json``: one experiment per A/B pair with the same name, team A = the
    pair's control ranker, team B = its treatment ranker (see :func:`team_names`), the same
    number of users (unless ``users_per_experiment``), click model and traffic parameters.
    Users are ``i<NN>-u<NNNNN>``. Deterministic: the streams are spawned from the study's seed.

    ``events`` (CLI ``--events/--no-events``): None (default) follows the study, writing
    ``outdir/events.parquet`` with the study's event model when its manifest has one; True
    does so with the study's model or else the default :class:`EventModel`; False writes no
    events; a model is used as given. An experiment's events draw from their own stream
    (spawn key ``(i, EVENTS_STREAM)``), so the other tables are the same either way.
    """
    study_dir, outdir = Path(study_dir), Path(outdir)
    path = study_dir / "manifest.json"
    if not path.is_file():
        raise InputError(f"{path} does not exist; point at a study written by "
                         "`onlineeval simulate OUTDIR --seed N`")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    collection, runs = study_rankers(manifest)
    _check_runs(study_dir, manifest, runs)
    model = _click_model(manifest["click_model"])
    cfg = _traffic(manifest["traffic"])
    n_users = int(users_per_experiment or manifest["users_per_experiment"])
    if events is None or events is True:
        ev_model = (_event_model(manifest["events"]) if "events" in manifest
                    else event_model(bool(events)))
    else:
        ev_model = event_model(events)
    pairs = [(e["name"], e["control"], e["treatment"]) for e in manifest["experiments"]]
    streams = np.random.SeedSequence([int(manifest["seed"]), _STREAM]).spawn(len(pairs))
    parts, experiments = [], []
    inputs = [path, *(study_dir / str(r["run"]) for r in manifest["rankers"].values())]
    # built next to outdir and moved into it when complete (replacing earlier logs there)
    with Output(inputs=inputs) as output, \
            Progress("simulating interleaving users", n_users * len(pairs)) as bar:
        # an events table of earlier logs there goes even when these have none
        stage = output.directory(outdir, overwrite=True, replaces=("events.parquet",))
        for i, (name, a, b) in enumerate(pairs):
            tables = simulate_interleaving_experiment(
                collection, runs, a, b, name, n_users, np.random.default_rng(streams[i]),
                click_model=model, traffic=cfg, id_prefix=f"i{i + 1:02d}-", progress=bar,
            )
            if ev_model is not None:
                seq = np.random.SeedSequence(streams[i].entropy,
                                             spawn_key=(*streams[i].spawn_key, EVENTS_STREAM))
                tables.events = simulate_events(collection, tables,
                                                np.random.default_rng(seq), ev_model)
            parts.append(tables)
            team_a, team_b = team_names(a, b)
            ndcg = {r: manifest["rankers"][r]["ndcg10"] for r in (a, b)}
            experiments.append({
                "name": name, "team_a": team_a, "team_b": team_b, "ranker_a": a,
                "ranker_b": b, "ndcg10_a": ndcg[a], "ndcg10_b": ndcg[b],
                "ndcg10_delta_b_minus_a": ndcg[b] - ndcg[a], "users": n_users,
                "searches": int(len(tables.searches)), "clicks": int(len(tables.clicks)),
                **({"events": event_counts(tables.events)} if tables.events is not None
                   else {}),
            })
        logs = LogTables.concat(parts)
        write_logs(logs, stage)
        out = {
            "generator": "onlineeval.simulate.interleaving",
            "seed": manifest["seed"], "stream": _STREAM,
            "method": "team_draft", "k": cfg.k, "variant": VARIANT,
            "users_per_experiment": n_users, "experiments": experiments,
            "click_model": model.params(), "traffic": cfg.params(),
            "logs": {"searches": int(len(logs.searches)), "results": int(len(logs.results)),
                     "clicks": int(len(logs.clicks))},
        }
        if ev_model is not None and logs.events is not None:
            out["events"] = ev_model.params()
            out["logs"]["events"] = event_counts(logs.events)
        write_text(stage / "manifest.json", json.dumps(out, indent=2) + "\n")
    return out


class _QueryLists:
    """Per topic, the team-draft distribution as arrays: grades (-1 past the end), a mask of
    team A's positions, and the probability of each merged list."""

    def __init__(self, collection: Collection, run_a: Run, run_b: Run, k: int) -> None:
        self.grades: list[np.ndarray] = []
        self.is_a: list[np.ndarray] = []
        self.probs: list[np.ndarray] = []
        for qid in collection.qids:
            dist = team_draft_distribution(run_a.ranking(qid)[:k], run_b.ranking(qid)[:k], k=k)
            g = np.full((len(dist), k), -1, dtype=np.int64)
            a = np.zeros((len(dist), k), dtype=bool)
            for j, ((docs, teams), _) in enumerate(dist):
                g[j, : len(docs)] = collection.grades(qid, [str(d) for d in docs])
                a[j, : len(docs)] = [t == "A" for t in teams]
            self.grades.append(g)
            self.is_a.append(a)
            self.probs.append(np.array([p for _, p in dist]))


def simulate_outcomes(
    collection: Collection, run_a: Run, run_b: Run, n_pages: int,
    rng: np.random.Generator, *, click_model: ClickModel | None = None, k: int = 10,
    propensity_sd: float = 0.8, pages_per_user: int = 1, users: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Credit of each team on ``n_pages`` simulated interleaved pages (fast, no logs).

    Each page: a topic drawn by the collection's popularity, a merged list drawn from the
    exact team-draft distribution of the two rankers' top ``k`` (same as sampling the coin
    flips), clicks from ``click_model.simulate_batch`` with the user's propensity
    ``Normal(0, propensity_sd)``. Page ``i`` belongs to user ``i // pages_per_user``, or to
    ``users[i]`` when given (integer codes 0..U-1, one per page).

    Returns arrays ``user``, ``topic`` (index into ``collection.qids``), ``credit_a``,
    ``credit_b`` and ``clicks`` (clicked results per page).
    """
    if n_pages < 0 or pages_per_user < 1:
        raise InvalidParameterError("need n_pages >= 0 and pages_per_user >= 1")
    if users is not None and (np.shape(users) != (n_pages,) or (n_pages and np.min(users) < 0)):
        raise InvalidParameterError("users must hold one non-negative user code per page")
    model = click_model or DEFAULT_CLICK_MODEL
    lists = _QueryLists(collection, run_a, run_b, k)
    topic = rng.choice(len(collection.qids), size=n_pages, p=collection.popularity)
    grades = np.full((n_pages, k), -1, dtype=np.int64)
    is_a = np.zeros((n_pages, k), dtype=bool)
    for q in np.unique(topic):
        rows = np.flatnonzero(topic == q)
        pick = rng.choice(len(lists.probs[q]), size=rows.size, p=lists.probs[q])
        grades[rows] = lists.grades[q][pick]
        is_a[rows] = lists.is_a[q][pick]
    user = (np.arange(n_pages) // pages_per_user if users is None
            else np.asarray(users, dtype=np.int64))
    propensity = rng.normal(0.0, propensity_sd, size=int(user.max()) + 1 if n_pages else 0)
    clicked, _, _ = model.simulate_batch(grades, rng, propensity[user] if n_pages else 0.0)
    present = grades >= 0
    return {
        "user": user, "topic": topic,
        "credit_a": (clicked & is_a).sum(axis=1),
        "credit_b": (clicked & ~is_a & present).sum(axis=1),
        "clicks": clicked.sum(axis=1),
    }
