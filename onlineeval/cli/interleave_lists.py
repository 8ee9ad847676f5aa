"""``onlineeval interleave-lists RUN_A RUN_B``: team-draft merged lists per query, as a file."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

NAME = "interleave-lists"
HELP = ("merge two TREC runs per query by team-draft interleaving (three or more: team-draft "
        "multileaving) and write a TREC-run-like file with a team column")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="TREC run files (qid Q0 docno rank score tag); two or more")
    parser.add_argument("--k", type=int, default=10, help="results per query (default 10)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the coin flips (default 0); each query draws from a "
                             "generator derived from the seed and its qid")
    parser.add_argument("--teams", default=None, metavar="NAME,NAME",
                        help="team names of the runs, in order (default: file names without "
                             "extension)")
    parser.add_argument("--no-fill", action="store_true",
                        help="stop a query's list as soon as any run has no unplaced document "
                             "left (Radlinski et al. 2008's rule; a query missing from a run "
                             "then gets no list). Default: the other runs keep filling the list")
    parser.add_argument("-o", "--output", default=None, metavar="FILE",
                        help="write here instead of stdout")


def run(args: argparse.Namespace) -> int:
    from onlineeval.atomic import Output
    from onlineeval.errors import InvalidParameterError
    from onlineeval.interleaving import team_draft, team_draft_multileave
    from onlineeval.interleaving._random import derived_generator
    from onlineeval.offline.ranked_lists import ranked_lists

    if len(args.runs) < 2:
        raise InvalidParameterError(f"interleave-lists needs two or more runs; got "
                                    f"{len(args.runs)}")
    if args.k < 1:
        raise InvalidParameterError(f"--k must be >= 1; got {args.k}")
    if args.seed < 0:
        raise InvalidParameterError(f"--seed must be >= 0; got {args.seed}")
    teams = ([t.strip() for t in args.teams.split(",")] if args.teams
             else [Path(p).name.split(".")[0] for p in args.runs])
    if len(teams) != len(args.runs) or len(set(teams)) != len(teams) or "" in teams:
        raise InvalidParameterError(
            f"need one distinct, non-empty team name per run ({len(args.runs)}); got "
            f"{teams}. Name them with --teams A,B"
        )
    if any(any(ch.isspace() for ch in t) for t in teams):
        raise InvalidParameterError(f"team names cannot contain whitespace; got {teams}")
    # each run as {qid: [docno, ...]} in trec_eval's order (score desc, docno desc)
    lists = [ranked_lists(p) for p in args.runs]
    qids = sorted(set().union(*lists))
    with contextlib.ExitStack() as stack:
        out = sys.stdout
        if args.output:
            # checked against the runs before writing; the file appears only when complete
            output = stack.enter_context(Output(inputs=args.runs))
            out = stack.enter_context(open(output.file(args.output), "w", encoding="utf-8"))
        for qid in qids:
            rankings = [lst.get(qid, []) for lst in lists]
            rng = derived_generator(args.seed, qid)
            try:
                if len(rankings) == 2:
                    merged = team_draft(rankings[0], rankings[1], k=args.k, rng=rng,
                                        teams=(teams[0], teams[1]), fill=not args.no_fill)
                else:
                    merged = team_draft_multileave(dict(zip(teams, rankings, strict=True)),
                                                   k=args.k, rng=rng,
                                                   fill=not args.no_fill)
            except InvalidParameterError as exc:
                raise InvalidParameterError(
                    f"query {qid} of {', '.join(args.runs)}: {exc}"
                ) from None
            n = len(merged.docs)
            for i, (doc, team) in enumerate(zip(merged.docs, merged.teams, strict=True)):
                # score n - i keeps trec_eval's order equal to the merged order
                out.write(f"{qid} Q0 {doc} {i + 1} {n - i} interleaved {team}\n")
    return 0
