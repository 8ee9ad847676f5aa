"""The study-file reader: defaults, relative paths, and errors naming the file and key."""

from __future__ import annotations

import pytest

from onlineeval.errors import InputError
from onlineeval.study import DEFAULT_MEASURES, read_study


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "ab").mkdir()
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    for r in ("a", "b", "c"):
        (tmp_path / "runs" / f"{r}.run").write_text("q1 Q0 d1 1 1.0 x\n")
    return tmp_path


def write(tree, text):
    p = tree / "study.toml"
    p.write_text(text)
    return p


GOOD = """
title = "T"
qrels = "qrels.txt"
ab_logs = "ab"
measures = ["ndcg_cut_10", "map"]
alpha = 0.1
large_margin = 0.05

[[experiment]]
name = "a_vs_b"
control_run = "runs/a.run"
treatment_run = "runs/b.run"

[[experiment]]
name = "a_vs_c"
control_run = "runs/a.run"
treatment_run = "runs/c.run"
ab_experiment = "exp2"
treatment_team = "C"
"""


def test_reads_defaults_and_resolves_paths(tree):
    s = read_study(write(tree, GOOD))
    assert s.title == "T" and s.alpha == 0.1 and s.large_margin == 0.05
    assert s.measures == ("ndcg_cut_10", "map")
    assert s.test == "t" and s.correction == "holm"
    e1, e2 = s.experiments
    assert e1.qrels == (tree / "qrels.txt").resolve()
    assert e1.ab_logs == (tree / "ab").resolve() and e1.interleaving_logs is None
    assert (e1.ab_experiment, e2.ab_experiment) == ("a_vs_b", "exp2")
    assert (e1.control_team, e1.treatment_team, e2.treatment_team) == ("a", "b", "C")
    assert e1.control_variant == "control"


def test_minimal_study_uses_default_measures(tree):
    s = read_study(write(tree, 'qrels = "qrels.txt"\n[[experiment]]\nname = "x"\n'
                               'control_run = "runs/a.run"\ntreatment_run = "runs/b.run"\n'))
    assert s.measures == DEFAULT_MEASURES and s.large_margin is None


@pytest.mark.parametrize("text,message", [
    (GOOD.replace('alpha = 0.1', 'alpah = 0.1'),
     r"study.toml: alpah: unknown key; did you mean 'alpha'\?"),
    (GOOD.replace('alpha = 0.1', 'alpha = "x"'), r"study.toml: alpha: expected int or float"),
    (GOOD.replace('alpha = 0.1', 'alpha = 2'),
     r"study.toml: alpha must be a number in \(0, 1\); got 2"),
    (GOOD.replace('"runs/c.run"', '"runs/zz.run"'),
     r"study.toml: experiment\[2\] \(a_vs_c\).treatment_run: file 'runs/zz.run' does not exist"),
    (GOOD.replace('name = "a_vs_c"', 'name = "a_vs_b"'), r"experiment\[2\].name: .* used twice"),
    (GOOD.replace('control_run = "runs/a.run"\ntreatment_run = "runs/c.run"', ''),
     r"experiment\[2\].control_run: required key is missing"),
    (GOOD.replace('ab_logs = "ab"', 'ab_logs = "nolog"'),
     r"experiment\[1\] \(a_vs_b\).ab_logs: directory 'nolog' does not exist"),
    (GOOD.replace('measures = ["ndcg_cut_10", "map"]', 'measures = []'),
     r"study.toml: measures: expected a non-empty list"),
    ('qrels = "qrels.txt"\n', r"study.toml: experiment: a study needs at least one"),
    (GOOD + '\ntest = "t"\n', r"experiment\[2\].test: unknown key\. Allowed keys: ab_exp"),
    (GOOD.replace('title = "T"', 'title = "T"\ntest = "wilcox"'), r"test: unknown paired test"),
    (GOOD.replace('treatment_team = "C"', 'treatment_tem = "C"'),
     r"experiment\[2\].treatment_tem: unknown key; did you mean 'treatment_team'"),
    ("title = [", r"study.toml: not valid TOML"),
    (GOOD.replace('alpha = 0.1', 'alpha = true'), r"alpha: expected int or float, got bool"),
    # names are checked when the file is read, and the error names the key holding them
    (GOOD.replace('"ndcg_cut_10", "map"', '"ndgc@10", "map"'),
     r"study.toml: measures: unknown trec_eval measure 'ndgc'; did you mean 'ndcg'"),
    (GOOD.replace('"ndcg_cut_10", "map"', '"ndcg_cut_10", "gm_map"'),
     r"study.toml: measures: measure 'gm_map' is a geometric mean"),
    (GOOD.replace('alpha = 0.1', 'online_metrics = ["ctr", "clickmrr"]'),
     r"study.toml: online_metrics: unknown metric 'clickmrr'; did you mean 'click_mrr'"),
    (GOOD.replace('name = "a_vs_c"', 'name = "  "'), r"experiment\[2\].name: must not be empty"),
    (GOOD.replace('qrels = "qrels.txt"', 'qrels = "runs"'),
     r"experiment\[1\] \(a_vs_b\).qrels: file 'runs' is not a file"),
])
def test_errors_name_file_and_key(tree, text, message):
    with pytest.raises(InputError, match=message):
        read_study(write(tree, text))


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_study(tmp_path / "none.toml")


def test_test_and_correction_names_are_stored_canonically(tree):
    s = read_study(write(tree, GOOD.replace(
        'title = "T"', 'title = "T"\ntest = "Permutation"\ncorrection = "BH"')))
    assert s.test == "randomization" and s.correction == "bh"
    with pytest.raises(InputError, match=r"study.toml: correction: unknown correction "
                                         r"'bonferroni'; use one of bh, holm, none"):
        read_study(write(tree, GOOD.replace('title = "T"', 'correction = "bonferroni"')))
