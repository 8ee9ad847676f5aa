"""Writes never lose data: every command's output appears complete or not at all, never
replaces an input or a file the command did not write, refuses a second writer, and reports
an OS error as one line naming the output. A full disk is a real small tmpfs where the
machine allows mounting one, and a writer that fails half-way with ENOSPC everywhere."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from onlineeval.cli import main

ROOT = Path(__file__).resolve().parents[1]
AOL = ROOT / "tests" / "data" / "aol" / "sample.txt"
YANDEX = ROOT / "tests" / "data" / "yandex_wscd" / "testSample.head5000"
RUNS = ROOT / "sample_logs" / "runs"


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (hidden ones too) with a digest of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def entries(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def one_error_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"onlineeval {command}: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """A tiny complete simulated study (two rankers, 20 users), so a report takes seconds."""
    from onlineeval.simulate import simulate

    d = tmp_path / "study"
    simulate(d, 1, users_per_experiment=20, n_queries=3, docs_per_query=5,
             rankers={"a": 0.5, "b": 1.5}, pairs=[("a", "b")])
    (d / "study.toml").write_text(
        'qrels = "qrels.txt"\nab_logs = "ab"\nmeasures = ["P@1"]\nonline_metrics = ["ctr"]\n'
        '[[experiment]]\nname = "a_vs_b"\ncontrol_run = "runs/a.run"\n'
        'treatment_run = "runs/b.run"\n')
    return d


# -- an output that is an input, or the wrong kind of path -----------------------------


@pytest.mark.parametrize("output", [
    "study.toml",                 # the study file itself
    "sub/../qrels.txt",           # an input named another way
    "link.html",                  # a symlink to an input
    "ab/report.html",             # inside an input log directory (the loader would read it)
])
def test_report_never_writes_over_an_input(study: Path, output: str, capsys,
                                           monkeypatch) -> None:
    (study / "sub").mkdir()
    (study / "link.html").symlink_to(study / "qrels.txt")
    monkeypatch.chdir(study)
    before = tree(study)
    assert main(["report", "study.toml", "-o", output]) == 2
    line = one_error_line(capsys.readouterr().err, "report")
    assert output in line and "input" in line
    assert tree(study) == before


def test_report_json_equal_to_html_is_refused(study: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(study)
    before = tree(study)
    assert main(["report", "study.toml", "-o", "r.html", "--json", "./r.html"]) == 2
    assert "named for two outputs" in one_error_line(capsys.readouterr().err, "report")
    assert tree(study) == before


def test_a_directory_where_a_file_goes_and_the_reverse_are_one_line_errors(
        study: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("mine\n")
    runs = [str(study / "runs" / "a.run"), str(study / "runs" / "b.run")]
    cases = [
        (["report", str(study / "study.toml"), "-o", str(tmp_path / "adir")], "is a directory"),
        (["interleave-lists", *runs, "-o", str(tmp_path / "adir")], "is a directory"),
        (["simulate", str(tmp_path / "afile"), "--seed", "1"], "is a file"),
        (["convert", "--from", "aol", str(AOL), str(tmp_path / "afile")], "is a file"),
        (["demo", "--study", str(study / "study.toml"), "-o", str(tmp_path / "afile")],
         "is a file"),
    ]
    for argv, words in cases:
        assert main(argv) == 2, argv
        assert words in one_error_line(capsys.readouterr().err, argv[0])
    assert entries(tmp_path / "adir") == []
    assert (tmp_path / "afile").read_text() == "mine\n"


def test_interleave_lists_refuses_to_write_over_a_run(study: Path, capsys) -> None:
    runs = [str(study / "runs" / "a.run"), str(study / "runs" / "b.run")]
    before = tree(study)
    assert main(["interleave-lists", *runs, "-o", runs[1]]) == 2
    assert "is also an input" in one_error_line(capsys.readouterr().err, "interleave-lists")
    assert tree(study) == before


def test_convert_refuses_its_input_directory_as_output(tmp_path: Path, capsys) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "part1.txt").write_bytes(AOL.read_bytes())
    before = tree(raw)
    assert main(["convert", "--from", "aol", str(raw), str(raw)]) == 2
    assert "is also an input" in one_error_line(capsys.readouterr().err, "convert")
    assert tree(raw) == before


# -- --force replaces only what the command writes, and only when the new one is complete -


def test_simulate_force_keeps_files_it_did_not_write(tmp_path: Path, capsys) -> None:
    out = tmp_path / "study"
    argv = ["simulate", str(out), "--seed", "3", "--users", "30", "--queries", "5",
            "--rankers", "a=0.5,b=1.5", "--pairs", "a:b"]
    assert main(argv) == 0
    (out / "runs" / "bm25.run").write_text("q1 Q0 d1 1 1 bm25\n")
    (out / "notes.txt").write_text("my notes\n")
    first = (out / "ab" / "searches.parquet").read_bytes()
    assert main([*argv[:3], "4", *argv[4:], "--force"]) == 0
    err = capsys.readouterr().err
    assert (out / "runs" / "bm25.run").read_text() == "q1 Q0 d1 1 1 bm25\n"
    assert (out / "notes.txt").read_text() == "my notes\n"
    assert (out / "ab" / "searches.parquet").read_bytes() != first  # seed 4 replaced seed 3
    assert "bm25.run" in err and "left as they were" in err
    assert not [e for e in entries(tmp_path) if "onlineeval-" in e]


def test_convert_force_keeps_the_old_tables_until_the_new_ones_are_complete(
        tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "out"
    assert main(["convert", "--from", "yandex-wscd", str(YANDEX), str(out)]) == 0
    before = tree(out)
    assert sorted(before) == ["clicks.parquet", "results.parquet", "searches.parquet"]
    # the disk fills after the first table of the new conversion is written
    from onlineeval.logs.convert import parquet

    real = parquet.TableWriter.finish

    def first_table_then_enospc(self, *args, **kwargs):
        self.columns = dict(list(self.columns.items())[:1])
        real(self, *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(parquet.TableWriter, "finish", first_table_then_enospc)
    capsys.readouterr()
    assert main(["convert", "--from", "aol", str(AOL), str(out), "--force"]) == 2
    line = one_error_line(capsys.readouterr().err, "convert")
    assert "No space left on device (ENOSPC)" in line and str(out) in line
    assert tree(out) == before  # the yandex tables, untouched
    assert entries(tmp_path) == ["out", *(f"out/{t}" for t in sorted(before))]


# -- a full disk, half-way -------------------------------------------------------------


def test_report_on_a_disk_that_fills_half_way_leaves_nothing(study: Path, tmp_path: Path,
                                                             monkeypatch, capsys) -> None:
    real = Path.write_text

    def half_then_enospc(self, data, *args, **kwargs):
        if self.suffix in (".html", ".json") or "onlineeval-tmp" in self.name:
            real(self, data[: len(data) // 2], *args, **kwargs)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", half_then_enospc)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["report", str(study / "study.toml"), "-o", str(out / "r.html"),
                 "--json", str(out / "r.json")]) == 2
    line = one_error_line(capsys.readouterr().err, "report")
    assert "r.html" in line and "No space left on device (ENOSPC)" in line
    assert entries(out) == []


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 64 KiB tmpfs: a real full disk (skipped where mounting is not permitted)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here; the monkeypatched ENOSPC tests cover this")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_every_writer_on_a_full_disk(small_disk: Path, study: Path, capsys) -> None:
    runs = [str(RUNS / "s100.run"), str(RUNS / "s080.run")]  # ~120 KB merged
    cases = [
        (["interleave-lists", *runs, "--k", "1000", "-o", str(small_disk / "il.run")],
         "il.run"),
        (["simulate", str(small_disk / "study"), "--seed", "1", "--users", "300"], "study"),
        (["convert", "--from", "yandex-wscd", str(YANDEX), str(small_disk / "yx")], "yx"),
    ]
    for argv, name in cases:
        assert main(argv) == 2, argv
        line = one_error_line(capsys.readouterr().err, argv[0])
        assert f"cannot write {small_disk / name}" in line, line
        assert "No space left on device (ENOSPC)" in line
        assert entries(small_disk) == []  # no output, no temporary file, no lock file


def test_a_read_only_file_system_is_one_line(small_disk: Path, study: Path, capsys) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    assert main(["report", str(study / "study.toml"), "-o", str(small_disk / "r.html")]) == 2
    line = one_error_line(capsys.readouterr().err, "report")
    assert str(small_disk / "r.html") in line and "Read-only file system (EROFS)" in line


# -- two writers -----------------------------------------------------------------------


def test_a_second_writer_of_one_output_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from onlineeval.atomic import Output\n"
         "with Output() as o:\n"
         f"    o.directory({str(out)!r})\n"
         "    print('writing', flush=True)\n"
         "    time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "writing"
        assert main(["convert", "--from", "aol", str(AOL), str(out)]) == 2
        line = one_error_line(capsys.readouterr().err, "convert")
        assert f"being written by process {holder.pid}" in line
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
    # the operating system released the killed writer's lock: the next run goes ahead, and
    # removes the temporary directory the killed writer left behind
    assert [e for e in entries(tmp_path) if e.endswith(".onlineeval-tmp")]
    assert main(["convert", "--from", "aol", str(AOL), str(out)]) == 0
    assert entries(tmp_path) == ["out", "out/clicks.parquet", "out/searches.parquet"]


# -- Ctrl-C and SIGTERM ----------------------------------------------------------------


@pytest.mark.parametrize("signum,status", [(2, 130), (15, 143)])
def test_interrupting_a_large_write_leaves_nothing(tmp_path: Path, signum: int,
                                                   status: int) -> None:
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}  # DuckDB's spill directories go here
    child = subprocess.Popen(
        [sys.executable, "-m", "onlineeval", "simulate", "study", "--seed", "1",
         "--users", "20000"],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # wait until the study is being built (its temporary directory exists)
        deadline = time.monotonic() + 120
        while not any(p.name.endswith(".onlineeval-tmp") for p in work.iterdir()):
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()
            time.sleep(0.05)
        child.send_signal(signum)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == status, err
    name = "SIGINT" if signum == 2 else "SIGTERM"
    assert err.strip() == f"onlineeval simulate: interrupted by {name}; unfinished output " \
                          "was removed"
    assert entries(work) == []   # no study, no temporary directory, no lock
    assert entries(tmp) == []    # no DuckDB temporary directory


def test_special_files_are_written_directly(study: Path) -> None:
    # /dev/null must stay a device: a rename onto it would replace it with a regular file
    assert main(["report", str(study / "study.toml"), "-o", "/dev/null"]) == 0
    assert Path("/dev/null").is_char_device()


def test_the_readme_states_these_guarantees_in_the_words_the_commands_use() -> None:
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "## What happens on bad input, interruption and a full disk" in text
    for words in ("interrupted by SIGINT; unfinished output was removed",
                  "exit status 130 (143 for SIGTERM)",
                  "cannot write out/report.html: No space left on device (ENOSPC)",
                  "ONLINEEVAL_DEBUG=1"):
        assert words in text, words


def test_a_file_that_appears_while_the_output_is_built_is_not_overwritten(tmp_path) -> None:
    from onlineeval.atomic import Output
    from onlineeval.errors import OutputError

    target = tmp_path / "out"
    with pytest.raises(OutputError, match="x.txt already exists there"):
        with Output() as out:
            stage = out.directory(target)
            (stage / "x.txt").write_text("new\n")
            target.mkdir()  # someone else's file arrives meanwhile
            (target / "x.txt").write_text("theirs\n")
    assert (target / "x.txt").read_text() == "theirs\n"
    assert entries(tmp_path) == ["out", "out/x.txt"]
