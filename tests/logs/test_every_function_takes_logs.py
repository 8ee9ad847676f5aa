"""Every public function taking a log accepts what load_logs reads: a path, a Logs and a dict
of table DataFrames, with the same result; variants are named in the log's own type."""

from __future__ import annotations

import importlib
import inspect
import json
import math
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import InvalidParameterError, UnknownNameError

PACKAGES = ("onlineeval", "onlineeval.logs", "onlineeval.online", "onlineeval.abtest",
            "onlineeval.interleaving", "onlineeval.clickmodels", "onlineeval.counterfactual",
            "onlineeval.agreement")

#: functions whose result is a view on the log's own connection: a Logs only (a path would
#: leave the view on a connection nobody holds), refused clearly otherwise
LOADED_ONLY = {"onlineeval.online.search_facts": {},
               "onlineeval.clickmodels.split_searches": {}}


def _frame(x: Any) -> Any:
    """The comparable part of a function's result."""
    if isinstance(x, pd.DataFrame):
        return x.reset_index(drop=True)
    for attr in ("table", "summary", "position_bias", "counts"):
        value = getattr(x, attr, None)
        value = value() if callable(value) else value
        if isinstance(value, pd.DataFrame):
            return value.reset_index(drop=True)
    if hasattr(x, "weight") and hasattr(x, "pairs"):  # click patterns
        return pd.DataFrame({"weight": x.weight, "clicks": x.click.sum(axis=1),
                             "positions": x.mask.sum(axis=1)})
    if hasattr(x, "report"):  # a Logs
        return pd.DataFrame([x.report.rows_read])
    raise AssertionError(f"no comparable table in {type(x).__name__}")


#: public function -> keyword arguments of a small call on the simulated log
CALLS: dict[str, dict[str, Any]] = {
    "onlineeval.online.online_metrics": {},
    "onlineeval.online.metric_sums": {},
    "onlineeval.online.position_ctr": {},
    "onlineeval.online.top_queries": {"n": 3},
    "onlineeval.online.queries_over_time": {},
    "onlineeval.online.attribute_events": {"event_type": "purchase"},
    "onlineeval.abtest.abtest": {"metrics": "ctr", "control": "a"},
    "onlineeval.abtest.power": {"metrics": "ctr"},
    "onlineeval.abtest.effect_over_time": {"control": "a", "treatment": "b"},
    "onlineeval.abtest.segment_effects": {"column": "query", "control": "a", "treatment": "b"},
    "onlineeval.abtest.quantile_effects": {"control": "a", "treatment": "b"},
    "onlineeval.abtest.sequential_readout": {"control": "a", "treatment": "b"},
    "onlineeval.abtest.aa_test": {"splits": 20},
    "onlineeval.interleaving.interleaving_readout": {"n_resamples": 20},
    "onlineeval.clickmodels.fit": {"model": "pbm", "max_iter": 5},
    "onlineeval.clickmodels.compare": {"models": "ctr,pbm", "max_iter": 5},
    "onlineeval.clickmodels.harvest_position_bias": {"n_boot": 5},
    "onlineeval.clickmodels.read_patterns": {},
    "onlineeval.counterfactual.evaluate": {"run": "RUN", "metric": "clicks@3",
                                           "query": "qid"},
    "onlineeval.counterfactual.compare": {"control_run": "RUN", "treatment_run": "RUN",
                                          "metric": "clicks@3", "query": "qid"},
    "onlineeval.counterfactual.compare_pairs": {"pairs": {"x": ("RUN", "RUN")},
                                                "metric": "clicks@3", "query": "qid"},
    "onlineeval.agreement.per_query_ab_ctr": {"experiment": "a_vs_b", "control": "a",
                                              "treatment": "b"},
    "onlineeval.agreement.per_query_interleaving": {"experiment": "a_vs_b", "team": "a",
                                                    "other": "b"},
    "onlineeval.logs.as_logs": {},
}


def _public_log_functions() -> set[str]:
    found = set()
    for name in PACKAGES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if not inspect.isfunction(obj):
                continue
            params = list(inspect.signature(obj).parameters)
            if params[:1] == ["logs"]:
                found.add(f"{obj.__module__.rsplit('.', 1)[0]}.{obj.__name__}"
                          if name == "onlineeval" else f"{name}.{attr}")
    return found


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """A small simulated A/B log (variants a and b, by the rankers' names), whose results
    also carry a team, so the interleaving and click-model functions run on it too."""
    base = tmp_path_factory.mktemp("sim")
    onlineeval.simulate(base / "s", seed=3, users_per_experiment=60, n_queries=8,
                        docs_per_query=8, rankers={"a": 0.5, "b": 1.5}, pairs=[("a", "b")])
    logs = base / "s" / "ab"
    results = pd.read_parquet(logs / "results.parquet")
    results["team"] = np.where(results["rank"] % 2 == 1, "a", "b")
    results.to_parquet(logs / "results.parquet", index=False)
    searches = pd.read_parquet(logs / "searches.parquet")
    # the experiment's variants by the rankers' names (the simulator writes control/treatment)
    searches["variant"] = searches["variant"].map({"control": "a", "treatment": "b"})
    searches.to_parquet(logs / "searches.parquet", index=False)
    # a purchase of every other clicked result an hour later (the simulator may write its
    # own events table; this one stands in when it does not)
    if not (logs / "events.parquet").exists():
        clicks = pd.read_parquet(logs / "clicks.parquet").merge(
            searches[["search_id", "user_id", "ts"]], on="search_id", suffixes=("", "_s"))
        bought = clicks.iloc[::2]
        pd.DataFrame({"user_id": bought["user_id"],
                      "ts": bought["ts"].fillna(bought["ts_s"]) + pd.Timedelta(hours=1),
                      "type": "purchase", "value": 10.0,
                      "doc_id": bought["doc_id"]}).to_parquet(logs / "events.parquet",
                                                               index=False)
    return logs, base / "s" / "runs" / "b.run"


def _call(path: str, logs: Any, kwargs: dict[str, Any], run: Path) -> Any:
    module, name = path.rsplit(".", 1)
    func = getattr(importlib.import_module(module), name)
    def fill(v: Any) -> Any:  # "RUN", also inside a mapping of pairs, is the run's path
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        if isinstance(v, tuple):
            return tuple(fill(x) for x in v)
        return str(run) if isinstance(v, str) and v == "RUN" else v

    kw = {k: fill(v) for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(logs, **kw)


def test_the_table_lists_every_public_function_taking_logs():
    found = _public_log_functions()
    assert len(found) >= 15  # the discovery works
    assert found == set(CALLS) | set(LOADED_ONLY)


@pytest.mark.parametrize("path", sorted(CALLS))
def test_a_path_a_logs_and_dataframes_give_the_same_result(path, sim):
    directory, run = sim
    frames = {t: pd.read_parquet(directory / f"{t}.parquet")
              for t in ("searches", "results", "clicks", "events")}
    loaded = onlineeval.load_logs(directory)
    results = [_call(path, given, CALLS[path], run)
               for given in (str(directory), directory, loaded, frames)]
    first = _frame(results[0])
    assert len(first) > 0
    for other in results[1:]:
        pd.testing.assert_frame_equal(_frame(other), first)


def test_the_readout_takes_a_path_a_logs_and_dataframes(sim):
    directory, _ = sim
    frames = {t: pd.read_parquet(directory / f"{t}.parquet")
              for t in ("searches", "results", "clicks", "events")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = [onlineeval.readout(given, control="a", treatment="b", design="ab").to_dict()
                for given in (str(directory), onlineeval.load_logs(directory), frames)]
    # a warning names the log as given (a path, or the tables): the rest must be equal
    names = (str(directory), ", ".join(f"{t}=DataFrame" for t in frames))
    outs = [json.loads(_unnamed(json.dumps(out), names)) for out in outs]
    assert outs[0]["metrics"]
    for other in outs[1:]:
        _same(other, outs[0])


def _unnamed(text: str, names: tuple[str, ...]) -> str:
    for name in names:
        text = text.replace(json.dumps(name)[1:-1], "<log>")
    return text


def _same(a: Any, b: Any) -> None:
    """Equal structures; numbers equal up to summation order (1e-9 relative), NaN to NaN."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert isinstance(b, list | tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, float) and isinstance(b, float):
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9)
    else:
        assert a == b


@pytest.mark.parametrize("path", sorted(LOADED_ONLY))
def test_view_functions_need_a_loaded_log(path, sim):
    directory, run = sim
    with pytest.raises(InvalidParameterError, match="needs a log loaded with "
                                                    "onlineeval.load_logs"):
        _call(path, directory, LOADED_ONLY[path], run)
    view = _call(path, onlineeval.load_logs(directory), LOADED_ONLY[path], run)
    assert view


def test_what_is_not_a_log_is_named():
    with pytest.raises(InvalidParameterError, match="one DataFrame is one table"):
        onlineeval.online_metrics(pd.DataFrame({"a": [1]}))
    with pytest.raises(InvalidParameterError, match="got 'serches'.*load first"):
        onlineeval.online_metrics({"serches": pd.DataFrame()})
    with pytest.raises(InvalidParameterError, match="logs must be a Logs.*got int"):
        onlineeval.online_metrics(3)


def test_load_logs_takes_the_dict_of_tables_every_function_takes(sim):
    # load_logs({...}) raised a bare TypeError (a traceback) although every function taking
    # a log accepts that dict
    directory, _ = sim
    tables = {t: pd.read_parquet(directory / f"{t}.parquet")
              for t in ("searches", "results", "clicks")}
    by_dict = onlineeval.load_logs(tables)
    by_keywords = onlineeval.load_logs(**tables)
    assert by_dict.source == by_keywords.source
    # the same log: the same numbers (to rounding: DuckDB's parallel sums may add in
    # another order)
    pd.testing.assert_frame_equal(onlineeval.online_metrics(by_dict),
                                  onlineeval.online_metrics(by_keywords), rtol=1e-12)
    with pytest.raises(InvalidParameterError, match="got 'serches'.*load first"):
        onlineeval.load_logs({"serches": tables["searches"]})
    with pytest.raises(InvalidParameterError, match="'clicks' is given twice"):
        onlineeval.load_logs(tables, clicks=tables["clicks"])
    with pytest.raises(InvalidParameterError, match="a table goes in searches="):
        onlineeval.load_logs(tables["searches"])


def test_online_metrics_of_a_path_is_no_attribute_error(sim):
    # issue 19: online_metrics("logs/") raised AttributeError while abtest took a path
    directory, _ = sim
    df = onlineeval.online_metrics(str(directory), by="variant")
    assert list(df["variant"]) == ["a", "b"]


# --- variants in the log's own type ---------------------------------------------------------

@pytest.fixture(scope="module")
def int_arms(sim, tmp_path_factory):
    """The simulated log with its arms written 0 (a) and 1 (b), as integers."""
    directory, _ = sim
    out = tmp_path_factory.mktemp("int") / "ab"
    shutil.copytree(directory, out)
    s = pd.read_parquet(out / "searches.parquet")
    s["variant"] = s["variant"].map({"a": 0, "b": 1}).astype("int64")
    s.to_parquet(out / "searches.parquet", index=False)
    return out


def test_integer_arms_are_named_as_integers(sim, int_arms):
    directory, _ = sim
    text = onlineeval.abtest(directory, control="a", metrics="ctr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ints = onlineeval.abtest(int_arms, control=0, metrics="ctr")
        one = onlineeval.abtest(int_arms, control=0, treatment=1, metrics="ctr")
    assert list(ints["variant"]) == [1] and ints.attrs["control"] == 0
    pd.testing.assert_frame_equal(ints.drop(columns="variant"), text.drop(columns="variant"))
    pd.testing.assert_frame_equal(one, ints)
    online = onlineeval.online_metrics(int_arms, by="variant")
    assert list(online["variant"]) == [0, 1]


def test_a_variant_of_the_other_type_is_an_error_listing_the_values(sim, int_arms):
    directory, _ = sim
    with pytest.raises(UnknownNameError) as err:
        onlineeval.abtest(int_arms, control="0", metrics="ctr")
    assert str(err.value) == ("control='0' is a str, but the log's variant column holds whole "
                              "numbers (0, 1): pass control=0")
    with pytest.raises(UnknownNameError, match=r"treatment='x' is a str, but the log's variant "
                                               r"column holds whole numbers \(0, 1\); pass one"):
        onlineeval.abtest(int_arms, control=0, treatment="x", metrics="ctr")
    with pytest.raises(UnknownNameError, match=r"control=0 is a int, but the log's variant "
                                               r"column holds text \('a', 'b'\)"):
        onlineeval.abtest(directory, control=0, metrics="ctr")
    with pytest.raises(UnknownNameError, match=r"variant='0' is a str.*pass variant=0"):
        onlineeval.power(int_arms, variant="0", metrics="ctr")


def test_integer_arms_in_the_readout_over_time_segments_quantiles_and_sequential(sim, int_arms):
    # readout(control=0) read 0 as "no control" (control or "control"), and the functions
    # over time compared the arms as text: sequential_readout(logs, 0, 1) said "unknown
    # control variant 0; the experiment's variants are: 0, 1" while "0" was taken
    directory, _ = sim
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_text = onlineeval.readout(directory, control="a", design="ab")
        by_int = onlineeval.readout(int_arms, control=0, design="ab")
        assert by_int.control == 0 and list(by_int.treatments) == [1]
        assert [(m.metric, m.result.estimate) for m in by_int.metrics] == \
            [(m.metric, m.result.estimate) for m in by_text.metrics]
        for name, kw in (("sequential_readout", {"design": "ab"}), ("effect_over_time", {"metric": "ctr"}),
                         ("segment_effects", {"column": "query"}),
                         ("quantile_effects", {})):
            f = getattr(onlineeval.abtest, name)
            text = f(directory, control="a", treatment="b", **kw)
            ints = f(int_arms, control=0, treatment=1, **kw)
            assert ints.attrs["control"] == 0 and ints.attrs["treatment"] == 1, name
            if "variant" in ints:
                assert set(ints["variant"]) == {1}, name
                ints, text = ints.drop(columns="variant"), text.drop(columns="variant")
            pd.testing.assert_frame_equal(ints, text, obj=name)
        with pytest.raises(UnknownNameError, match=r"control='0' is a str.*pass control=0"):
            onlineeval.abtest.sequential_readout(int_arms, "0", "1", design="ab")


def test_the_readout_command_reads_integer_arms(int_arms, capsys, tmp_path):
    import json

    from onlineeval import cli

    assert cli.main(["readout", str(int_arms), "--sequential", "--design", "ab", "--control", "0",
                     "--treatment", "1", "--format", "csv"]) == 0
    out = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert len(out) > 0 and set(out["metric"]) == {"ctr"}
    json_path = tmp_path / "r.json"
    assert cli.main(["readout", str(int_arms), "--design", "ab", "--control", "0",
                     "--treatment", "1", "--json", str(json_path)]) == 0
    got = json.loads(json_path.read_text(encoding="utf-8"))
    assert got["control"] == 0 and got["treatments"] == [1]


def test_the_old_treatments_keyword_still_works_with_a_warning(sim):
    directory, _ = sim
    with pytest.warns(DeprecationWarning, match="use treatment="):
        old = onlineeval.abtest(directory, control="a", treatments=["b"], metrics="ctr")
    new = onlineeval.abtest(directory, control="a", treatment="b", metrics="ctr")
    pd.testing.assert_frame_equal(old, new)
    with pytest.raises(InvalidParameterError, match="treatment= only"):
        onlineeval.abtest(directory, control="a", treatment="b", treatments=["b"])


def test_cli_reads_a_variant_with_the_columns_type(sim, int_arms, capsys):
    from onlineeval import cli

    assert cli.main(["abtest", str(int_arms), "--control", "0", "--treatment", "1",
                     "--metrics", "ctr", "--format", "json"]) == 0
    import json

    got = json.loads(capsys.readouterr().out)
    assert [r["variant"] for r in got["results"]] == [1]
    assert cli.main(["abtest", str(int_arms), "--control", "zero", "--metrics", "ctr"]) == 2
    err = capsys.readouterr().err
    assert "control='zero' is a str, but the log's variant column holds whole numbers (0, 1)" \
        in err


def test_per_query_ab_ctr_checks_the_arms(sim, int_arms):
    # an arm the log lacks used to give a table of empty arms without a word
    directory, _ = sim
    with pytest.raises(UnknownNameError, match=r"unknown treatment variant 'c'; the log's "
                                               r"variants are: 'a', 'b'"):
        onlineeval.agreement.per_query_ab_ctr(directory, "a_vs_b", "a", "c")
    with pytest.raises(UnknownNameError, match=r"control='0' is a str.*pass control=0"):
        onlineeval.agreement.per_query_ab_ctr(int_arms, "a_vs_b", "0", 1)
    by_int = onlineeval.agreement.per_query_ab_ctr(int_arms, "a_vs_b", 0, 1).table
    by_text = onlineeval.agreement.per_query_ab_ctr(directory, "a_vs_b", "a", "b").table
    pd.testing.assert_frame_equal(by_int, by_text)
