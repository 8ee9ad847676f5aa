"""--columns and --columns-file: parsed into the API's columns= mapping, so the rules are one;
errors name the option or the file and line, and say how to fix it in the CLI's spelling."""

from __future__ import annotations

import json

import pytest

import onlineeval
from onlineeval import cli
from onlineeval.errors import SchemaError
from onlineeval.logs.mapping_text import parse

RENAMES = {
    "searches": {"search_id": "qid", "user_id": "uid", "ts": "time", "variant": "arm"},
    "results": {"search_id": "qid", "rank": "position"},
    "clicks": {"search_id": "qid", "rank": "position", "ts": "time"},
}
OPTION = ("searches.qid=search_id,searches.uid=user_id,searches.time=ts,searches.arm=variant,"
          "results.qid=search_id,results.position=rank,"
          "clicks.qid=search_id,clicks.position=rank,clicks.time=ts")
TOML = """\
# the export's own names
[searches]
qid = "search_id"
uid = "user_id"
time = "ts"
arm = "variant"

[results]
qid = "search_id"
position = "rank"

[clicks]
qid = "search_id"
position = "rank"
time = "ts"
"""


@pytest.fixture
def renamed(tmp_path, tiny_frames):
    """The tiny log exported under other column names, as CSV files."""
    out = tmp_path / "export"
    out.mkdir()
    for t, df in tiny_frames().items():
        df.rename(columns=RENAMES[t]).to_csv(out / f"{t}.csv", index=False)
    return out


def _run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def test_option_and_file_parse_to_the_api_mapping(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text(TOML, encoding="utf-8")
    from_option, from_file = parse([OPTION]), parse(None, [f])
    assert dict(from_option) == dict(from_file) == {
        t: {new: old for old, new in m.items()} for t, m in RENAMES.items()}
    assert parse(["uid=user_id", "searches.extra="]) == {"uid": "user_id",
                                                         "searches": {"extra": None}}
    assert from_file.spelling.where("searches", "arm") == f"{f}:6"
    assert from_option.spelling.where("clicks", "time") == "--columns clicks.time=ts"


def test_cli_mapping_gives_the_numbers_of_the_original(capsys, tmp_path, renamed, tiny_dir):
    f = tmp_path / "m.toml"
    f.write_text(TOML, encoding="utf-8")
    want = _run(capsys, "online", tiny_dir, "--format", "json")
    assert want[0] == 0
    for options in (["--columns", OPTION], ["--columns-file", f],
                    ["--columns", OPTION[:60].rsplit(",", 1)[0],
                     "--columns", OPTION[len(OPTION[:60].rsplit(",", 1)[0]) + 1:]]):
        code, out, err = _run(capsys, "online", renamed, *options, "--format", "json")
        assert code == 0, err
        assert json.loads(out) == json.loads(want[1])


def test_without_a_mapping_the_advice_names_the_option(capsys, renamed):
    code, _, err = _run(capsys, "online", renamed)
    assert code == 2
    assert "lacks required column(s) 'search_id', 'user_id'" in err
    assert "--columns searches.<your column>=search_id" in err
    assert "--columns-file" in err and "columns={" not in err


def test_mapping_to_a_missing_column_names_the_entry(capsys, tmp_path, renamed):
    code, _, err = _run(capsys, "online", renamed, "--columns", OPTION + ",searches.qud=query")
    assert code == 2 and err.count("\n") == 1
    assert "--columns searches.qud=query maps searches column 'qud'" in err
    assert "has no column 'qud' (did you mean 'uid'?)" in err
    f = tmp_path / "m.toml"
    f.write_text(TOML.replace('arm = "variant"', 'arm = "variant"\nqud = "query"'),
                 encoding="utf-8")
    code, _, err = _run(capsys, "online", renamed, "--columns-file", f)
    assert code == 2
    assert f"{f}:7 maps searches column 'qud'" in err


def test_two_columns_mapped_to_one_name(capsys, renamed):
    code, _, err = _run(capsys, "online", renamed, "--columns", OPTION + ",searches.time=user_id")
    assert code == 2
    assert "searches.time is mapped twice (also by --columns searches.time=ts)" in err
    code, _, err = _run(capsys, "online", renamed,
                        "--columns", OPTION + ",searches.query=user_id")
    assert code == 2
    assert "both 'uid' and 'query' would become searches column 'user_id'" in err
    assert "--columns searches.query=" in err  # the fix, in the option's spelling


def test_toml_syntax_error_names_file_and_line(capsys, tmp_path, renamed):
    f = tmp_path / "bad.toml"
    f.write_text(TOML.replace('time = "ts"', 'time = ts'), encoding="utf-8")
    code, _, err = _run(capsys, "online", renamed, "--columns-file", f)
    assert code == 2 and err.count("\n") == 1
    assert f"{f}:5: column 8: not valid TOML" in err
    f.write_text("[searches]\nuid = 3\n", encoding="utf-8")
    code, _, err = _run(capsys, "online", renamed, "--columns-file", f)
    assert f"{f}:2: the value of 'uid' under [searches] must be a canonical column name" in err
    f.write_text("[search]\nuid = 'user_id'\n", encoding="utf-8")
    code, _, err = _run(capsys, "online", renamed, "--columns-file", f)
    assert "[search] is not a log table" in err
    code, _, err = _run(capsys, "online", renamed, "--columns-file", tmp_path / "none.toml")
    assert code == 2 and "--columns-file" in err and "none.toml" in err


def test_option_syntax_errors(capsys, renamed):
    for bad, words in (("searches.uid", "is not an entry"),
                       ("searches.=user_id", "no source column")):
        code, _, err = _run(capsys, "online", renamed, "--columns", bad)
        assert code == 2 and words in err and "TABLE.SOURCE=CANONICAL" in err


def test_mixing_flat_and_table_entries_is_refused_as_in_the_api(capsys, renamed):
    code, _, err = _run(capsys, "online", renamed, "--columns", "qid=search_id,searches.uid=user_id")
    assert code == 2 and "mixes per-table entries" in err
    with pytest.raises(SchemaError, match="mixes per-table entries"):
        onlineeval.load_logs(renamed, columns={"qid": "search_id",
                                               "searches": {"uid": "user_id"}})


def test_flat_option_maps_every_table_having_the_column(capsys, renamed, tiny_dir):
    want = _run(capsys, "online", tiny_dir, "--format", "json")[1]
    code, out, err = _run(capsys, "online", renamed, "--format", "json", "--columns",
                          "qid=search_id,uid=user_id,time=ts,arm=variant,position=rank")
    assert code == 0, err
    assert json.loads(out) == json.loads(want)


def _parsers(parser, name=()):
    """Every (sub)command parser under ``parser``, by its words."""
    yield name, parser
    for action in parser._actions:
        if action.__class__.__name__ == "_SubParsersAction":
            for word, sub in action.choices.items():
                yield from _parsers(sub, (*name, word))


def test_every_command_loading_logs_takes_the_mapping():
    loading = {}
    for words, p in _parsers(cli.build_parser()):
        # a log positional, or an option taking a log (agree --counterfactual LOGS)
        if any(a.dest == "logs" or a.metavar == "LOGS" for a in p._actions):
            loading[" ".join(words)] = {o for a in p._actions for o in a.option_strings}
    # the discovery finds the commands known to load logs (else this checks nothing)
    assert {"online", "positions", "top-queries", "abtest", "power", "interleave",
            "counterfactual", "qrels-from-clicks", "clickmodel fit", "clickmodel compare",
            "clickmodel harvest", "validate", "readout", "agree"} <= set(loading)
    lacking = [c for c, options in loading.items()
               if not {"--columns", "--columns-file"} <= options]
    assert lacking == []


def test_a_column_named_like_a_fact_gets_advice_that_works(capsys, tmp_path):
    # the advice used to rename to 'src_has_click', which the mapping refuses (not canonical)
    (tmp_path / "searches.csv").write_text("search_id,user_id,has_click\ns1,u1,x\n")
    (tmp_path / "clicks.csv").write_text("search_id,rank\ns1,1\n")
    code, _, err = _run(capsys, "online", tmp_path)
    assert code == 2 and "leave them out when loading, e.g. --columns searches.has_click=" in err
    code, out, err = _run(capsys, "online", tmp_path, "--columns", "searches.has_click=",
                          "--format", "json")
    assert code == 0, err
    assert json.loads(out)[0]["searches"] == 1
    with pytest.raises(SchemaError, match=r"columns=\{'searches': \{'has_click': None\}\}"):
        onlineeval.online_metrics(tmp_path)
    df = onlineeval.online_metrics(onlineeval.load_logs(
        tmp_path, columns={"searches": {"has_click": None}}))
    assert list(df["searches"]) == [1]


def test_a_mapping_file_with_bom_crlf_and_glob_characters_in_its_name(capsys, tmp_path,
                                                                      renamed, tiny_dir):
    f = tmp_path / "map[1]*.toml"
    f.write_bytes(b"\xef\xbb\xbf" + TOML.replace("\n", "\r\n").encode("utf-8"))
    (tmp_path / "map1x.toml").write_text("[searches]\nnope = 'query'\n")  # a glob would match
    want = _run(capsys, "online", tiny_dir, "--format", "json")[1]
    code, out, err = _run(capsys, "online", renamed, "--columns-file", f, "--format", "json")
    assert code == 0, err
    assert json.loads(out) == json.loads(want)
    # a line number is still found in a CRLF file: the mapping's entry on line 6
    assert parse(None, [f]).spelling.where("searches", "arm") == f"{f}:6"


def test_quoted_keys_in_the_file_name_their_line(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('results.team = ""\n[searches]\n"user id" = "user_id"\n\n[clicks]\n'
                 '\'pos\' = "rank"\n', encoding="utf-8")
    m = parse(None, [f])
    assert dict(m) == {"results": {"team": None}, "searches": {"user id": "user_id"},
                       "clicks": {"pos": "rank"}}
    assert m.spelling.where("results", "team") == f"{f}:1"
    assert m.spelling.where("searches", "user id") == f"{f}:3"
    assert m.spelling.where("clicks", "pos") == f"{f}:6"
