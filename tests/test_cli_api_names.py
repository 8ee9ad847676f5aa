"""A command's options are spelled as the keywords of the API function it calls
(``--n-resamples`` sets ``n_resamples=``), so the two cannot drift apart: every long option of
each command below is a keyword of its function, or is listed here as the command line's own
(with why). The former spellings (onlineeval.cli._options.RENAMED) still work, with a
warning naming the new one, and are hidden from --help."""

from __future__ import annotations

import argparse
import inspect
import json

import pytest

from onlineeval.cli import build_parser, main
from onlineeval.cli._options import RENAMED

#: options of every log-reading command that are the command line's way to give what the
#: API takes as an object (the log, its mapping) or to shape the output
CLI_ONLY = {"--help", "--columns", "--columns-file", "--strict", "--format", "--output",
            "--json"}

#: options of one command that are not keywords of its function, and why
OWN = {
    ("interleave",): {"--treatment": "an alias of --team-a (the readout's spelling)",
                      "--matrix": "prints preference_matrix() of the records instead"},
    ("compare",): {"--measure": "repeatable -m; the measures are the API's third argument"},
    ("readout",): {"--sequential": "runs sequential_readout() instead",
                   "--looks": "sequential_readout(looks=) with --sequential",
                   "--cuped": "sequential_readout(cuped=) with --sequential",
                   "--pre-period": "sequential_readout(pre_period=) with --sequential"},
    ("clickmodel", "harvest"): {"--no-pbm": "skips the PBM fit printed beside the harvest",
                                "--prior": "of that PBM fit (fit(prior=))",
                                "--max-iter": "of that PBM fit (fit(max_iter=))"},
    ("clickmodel", "compare"): {"--split": "compare(by=): session or query",
                                "--per-rank": "prints the per-rank table of the result"},
    ("qrels-from-clicks",): {"--grades": "qrels_from_clicks(grades=) after fit()",
                             "--min-impressions": "qrels_from_clicks(min_impressions=)"},
}


def _functions():
    from onlineeval.abtest import abtest
    from onlineeval.clickmodels import compare as compare_models
    from onlineeval.clickmodels import fit
    from onlineeval.clickmodels.harvest import harvest_position_bias
    from onlineeval.counterfactual import evaluate
    from onlineeval.interleaving import interleaving_readout
    from onlineeval.offline.compare import compare
    from onlineeval.online import online_metrics
    from onlineeval.readout import readout

    return {("online",): online_metrics, ("interleave",): interleaving_readout,
            ("compare",): compare, ("readout",): readout, ("abtest",): abtest,
            ("counterfactual",): evaluate, ("clickmodel", "fit"): fit,
            ("clickmodel", "harvest"): harvest_position_bias,
            ("clickmodel", "compare"): compare_models, ("qrels-from-clicks",): fit}


def _sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def _parser(path: tuple[str, ...]) -> argparse.ArgumentParser:
    p = build_parser()
    for name in path:
        p = _sub(p, name)
    return p


def _options(p: argparse.ArgumentParser, hidden: bool = False) -> list[str]:
    return [o for a in p._actions if (a.help == argparse.SUPPRESS) == hidden
            for o in a.option_strings if o.startswith("--")]


@pytest.mark.parametrize("path", list(OWN) + [("online",), ("abtest",), ("counterfactual",),
                                              ("clickmodel", "fit")])
def test_every_option_is_a_keyword_of_the_function(path):
    function = _functions()[path]
    keywords = set(inspect.signature(function).parameters)
    own = OWN.get(path, {})
    options = _options(_parser(path))
    drift = [o for o in options if o not in CLI_ONLY and o not in own
             and o[2:].replace("-", "_") not in keywords]
    assert drift == [], f"{' '.join(path)}: options that are no keyword of " \
                        f"{function.__module__}.{function.__name__}: {drift}"
    # the exceptions are still options (a stale entry would hide a new drift)
    assert set(own) <= set(options)


def test_every_renamed_option_is_a_hidden_alias_of_its_new_name():
    seen = set()
    for path in _functions():
        p = _parser(path)
        shown, hidden = _options(p), _options(p, hidden=True)
        for old, new in RENAMED.items():
            assert old not in shown
            if new in shown:
                assert old in hidden, (path, old)
                seen.add(old)
            else:
                assert old not in hidden, (path, old)
    assert seen == set(RENAMED)


def test_an_old_spelling_still_works_and_warns(tmp_path, capsys):
    from pathlib import Path

    # the smaller of the two sample logs: the test is about option spelling, not scale
    logs = str(Path(__file__).resolve().parents[1] / "sample_logs" / "interleaving")
    assert main(["online", logs, "--by", "variant", "--format", "json",
                 "--sat-dwell", "5", "--session-gap", "20"]) == 0
    old = capsys.readouterr()
    assert "warning: --sat-dwell is deprecated; use --sat-dwell-s" in old.err
    assert "warning: --session-gap is deprecated; use --session-gap-min" in old.err
    assert main(["online", logs, "--by", "variant", "--format", "json",
                 "--sat-dwell-s", "5", "--session-gap-min", "20"]) == 0
    new = capsys.readouterr()
    assert "deprecated" not in new.err
    # (DuckDB's parallel sums may differ in the last bits between runs)
    for a, b in zip(json.loads(old.out), json.loads(new.out), strict=True):
        assert a.keys() == b.keys()
        for k in a:
            same = a[k] == pytest.approx(b[k], rel=1e-12) if isinstance(a[k], float) \
                else a[k] == b[k]
            assert same, (k, a[k], b[k])
    # and the value reaches the function: a shorter satisfying dwell makes more sessions
    # successful
    assert main(["online", logs, "--by", "variant", "--format", "json"]) == 0
    default = json.loads(capsys.readouterr().out)
    for a, b in zip(default, json.loads(new.out), strict=True):
        assert b["session_success_rate"] > a["session_success_rate"] + 1e-6
