"""Every example in README.md and docs/ runs and prints what the page shows.

How a page is read (the rules a page author follows):

* ```` ```console ```` blocks hold commands, each on a line starting with ``$ `` (a trailing
  ``\\`` continues it on the next line), followed by exactly what it prints: stderr and stdout
  as a terminal shows them, in the order written. ``onlineeval ...`` commands run in this
  process through :func:`onlineeval.cli.main` (the console script's own function); two shell
  endings are understood, ``| head -N`` and ``|| echo "exit status $?"``. Any other command
  runs in ``bash``.
* ```` ```python ```` blocks run in one namespace per page, in page order. What a block
  prints is compared with the ```` ```text ```` block right after it (only blank lines
  between); a block that prints something must be followed by one. A warning escaping an
  example fails it: show warnings on purpose (``warnings.catch_warnings(record=True)``).
* In expected output, a line ``...`` stands for any number of lines and ``...`` inside a line
  for any text (paths of temporary directories, for instance). Nothing else is normalised:
  numbers are compared as printed.
* ```` ```bash ```` blocks are never run, so they appear only as the README's first two blocks
  (install and demo; the test command, which ``.ci/run`` executes). Command synopses with
  placeholders go in ```` ```text ```` blocks.

Each page runs in a fresh directory holding links to the repository's ``sample_logs/`` and
``tests/data/``; examples write only below it, and the test checks that ``sample_logs/`` is
unchanged afterwards. The sample study's report is built once per session (the
``sample_study`` fixture of tests/conftest.py): ``onlineeval demo`` and ``onlineeval report``
on ``sample_logs/study.toml`` reuse it and its HTML, and do everything else (output checks,
JSON, summary, the atomic writes) for real.

``ONLINEEVAL_UPDATE_DOCS=1 pytest tests/test_docs.py`` rewrites the expected outputs that
differ with what the examples print now; review the diff before committing it.

Also here: the generated online metrics reference is what the registry generates, and every
link between the pages points at a file that exists.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
UPDATE = os.environ.get("ONLINEEVAL_UPDATE_DOCS", "") not in ("", "0")
#: generated pages: their own tests compare them with their generators
REFERENCE = DOCS / "reference"
#: the offline measures reference, its generator (python -m onlineeval.offline.measures.docs)
#: and its test land with the engine refactor; until then the paths allowed to be missing
def guide_pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if REFERENCE not in p.parents)


PAGES = [ROOT / "README.md", *guide_pages()]


# --------------------------------------------------------------------------- reading a page

@dataclass
class Block:
    lang: str
    start: int            # index of the opening fence line
    end: int              # index of the closing fence line
    lines: list[str]


def blocks(lines: list[str]) -> list[Block]:
    found, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[i])
        if m is None:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        if j == len(lines):
            raise AssertionError(f"line {i + 1}: code block never closed")
        found.append(Block(m.group(1), i, j, lines[i + 1:j]))
        i = j + 1
    return found


@dataclass
class Command:
    line: int             # index in the page of the line holding "$ "
    text: str
    expected: list[str] = field(default_factory=list)
    first: int = 0        # page index of the first expected line
    last: int = 0         # page index after the last expected line


def commands(block: Block) -> list[Command]:
    out: list[Command] = []
    i = 0
    body = block.lines
    while i < len(body):
        if not body[i].startswith("$ "):
            if not out:
                raise AssertionError(f"line {block.start + i + 2}: a console block starts "
                                     f"with a '$ ' command")
            out[-1].expected.append(body[i])
            i += 1
            continue
        start = i
        text = body[i][2:]
        while text.endswith("\\"):
            i += 1
            text = text[:-1].rstrip() + " " + body[i].strip()
        out.append(Command(block.start + 1 + start, text.strip()))
        out[-1].first = block.start + 2 + i
        i += 1
    for c in out:
        while c.expected and not c.expected[-1].strip():
            c.expected.pop()
        c.last = c.first + len(c.expected)
    return out


def _line_matches(pattern: str, line: str) -> bool:
    if "..." not in pattern:
        return pattern == line
    parts = [re.escape(p) for p in pattern.split("...")]
    return re.fullmatch(".*".join(parts), line, flags=re.S) is not None


def matches(expected: list[str], got: list[str]) -> bool:
    """``got`` fits ``expected`` line by line; an ``...`` line takes any number of lines."""
    if not expected:
        return not got
    head = expected[0]
    if head.strip() == "...":
        return any(matches(expected[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and _line_matches(head.rstrip(), got[0]) and matches(expected[1:], got[1:])


def _clean(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


# --------------------------------------------------------------------------- running examples

_HEAD = re.compile(r"^(.*?)\s*\|\s*head -(?:n\s*)?(\d+)$")
_STATUS = re.compile(r'^(.*?)\s*\|\|\s*echo "exit status \$\?"$')


def run_command(text: str, cwd: Path) -> tuple[list[str], int]:
    """What the command prints (stderr and stdout interleaved, as a terminal shows them)."""
    show_status = _STATUS.match(text)
    head = _HEAD.match(show_status.group(1) if show_status else text)
    core = head.group(1) if head else (show_status.group(1) if show_status else text)
    if not (core.startswith("onlineeval ") and not re.search(r"[|;&<>`$()]", core)):
        bin_dir = str(Path(sys.executable).parent)
        env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
        done = subprocess.run(["bash", "-c", text], cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env, check=False)
        if done.returncode != 0:
            raise AssertionError(f"$ {text}\nexited with status {done.returncode}:\n"
                                 f"{done.stdout}")
        return _clean(done.stdout), done.returncode
    from onlineeval.cli import main

    written: list[tuple[str, str]] = []
    before = warnings.showwarning
    try:
        with contextlib.redirect_stdout(_Stream("out", written)), \
                contextlib.redirect_stderr(_Stream("err", written)), warnings.catch_warnings():
            # as in a fresh process: default filters, no warning shown before
            warnings.simplefilter("default")
            status = main(shlex.split(core)[1:])
    finally:
        warnings.showwarning = before
    lines = _terminal(written, int(head.group(2)) if head else None)
    if status != 0:
        if not show_status:
            raise AssertionError(f"$ {text}\nexited with status {status}:\n"
                                 + "\n".join(lines))
        lines.append(f"exit status {status}")
    return lines, status


class _Stream(io.TextIOBase):
    """stdout or stderr of an in-process command: what is written, in order, with its stream."""

    def __init__(self, name: str, written: list[tuple[str, str]]) -> None:
        self.name, self.written = name, written

    def write(self, text: str) -> int:
        self.written.append((self.name, text))
        return len(text)


def _terminal(written: list[tuple[str, str]], head: int | None) -> list[str]:
    """The lines a terminal shows, in the order written; ``| head -N`` keeps the first N
    lines of stdout only (stderr is not piped)."""
    lines: list[tuple[str, str]] = []
    pending = {"out": "", "err": ""}
    for stream, text in written:
        pending[stream] += text
        *complete, pending[stream] = pending[stream].split("\n")
        lines += [(stream, line) for line in complete]
    lines += [(stream, rest) for stream, rest in pending.items() if rest]
    shown, out = [], 0
    for stream, line in lines:
        if stream == "out":
            out += 1
            if head is not None and out > head:
                continue
        shown.append(line)
    return _clean("\n".join(shown))


def run_python(code: str, namespace: dict, where: str) -> list[str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(code, where, "exec"), namespace)  # noqa: S102 (the page's own example)
    if caught:
        shown = "; ".join(f"{w.category.__name__}: {w.message}" for w in caught)
        raise AssertionError(f"{where}: the example raised warnings it does not show: {shown}")
    return _clean(buffer.getvalue())


# --------------------------------------------------------------------------- the page test

def _sample_logs_state() -> dict[str, tuple[int, int]]:
    out = {}
    for p in (ROOT / "sample_logs").rglob("*"):
        if p.is_file():
            st = p.stat()
            out[str(p)] = (st.st_size, st.st_mtime_ns)
    return out


def _uses_sample_study(page: Path) -> bool:
    text = page.read_text(encoding="utf-8")
    return bool(re.search(r"^\$ onlineeval (demo|report sample_logs/study\.toml)", text, re.M))


def _page_param(page: Path):
    # the pages that reuse the sample study run on the xdist worker that builds it
    marks = [pytest.mark.xdist_group("sample_study")] if _uses_sample_study(page) else []
    return pytest.param(page, id=str(page.relative_to(ROOT)), marks=marks)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "sample_logs").symlink_to(ROOT / "sample_logs", target_is_directory=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _reuse_sample_report(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                         ) -> None:
    """``write_report`` on the sample study gets the session's build of it and that build's
    HTML, rendered once by the ``sample_study`` fixture (with the warnings the rendering
    raised, raised again): the HTML is a function of the report but for the minute in its
    header, and drawing its plots takes a third of the report's time."""
    import onlineeval.report as report_module

    rendered = request.getfixturevalue("sample_study")
    cached = rendered.report
    real, real_render = report_module.build_report, report_module.render_html
    sample = (ROOT / "sample_logs" / "study.toml").resolve()

    def build_report(study, *args, **kwargs):
        path = getattr(study, "path", None)
        if not args and not kwargs and path is not None and Path(path).resolve() == sample:
            return cached
        return real(study, *args, **kwargs)

    def render_html(report, *args, **kwargs):
        if report is not cached or args or kwargs:
            return real_render(report, *args, **kwargs)
        for w in rendered.render_warnings:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return rendered.html

    monkeypatch.setattr(report_module, "build_report", build_report)
    monkeypatch.setattr(report_module, "render_html", render_html)


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES])
def test_every_example_prints_what_the_page_shows(page: Path, workdir: Path,
                                                  request: pytest.FixtureRequest,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if _uses_sample_study(page):
        _reuse_sample_report(request, monkeypatch)
    lines = page.read_text(encoding="utf-8").split("\n")
    name = str(page.relative_to(ROOT))
    found = blocks(lines)
    before = _sample_logs_state()
    namespace: dict = {"__name__": "__docs__"}
    failures: list[str] = []
    edits: list[tuple[int, int, list[str]]] = []   # (first, last, new lines) page indices
    for n, block in enumerate(found):
        where = f"{name}:{block.start + 1}"
        if block.lang == "console":
            for cmd in commands(block):
                got, _ = run_command(cmd.text, workdir)
                if not matches(cmd.expected, got):
                    failures.append(_diff(f"{name}:{cmd.line + 1}: $ {cmd.text}",
                                          cmd.expected, got))
                    edits.append((cmd.first, cmd.last, got))
        elif block.lang == "python":
            got = run_python("\n".join(block.lines) + "\n", namespace, where)
            nxt = found[n + 1] if n + 1 < len(found) else None
            follows = (nxt is not None and nxt.lang == "text"
                       and all(not s.strip() for s in lines[block.end + 1:nxt.start]))
            expected = nxt.lines if follows else []
            if not matches(_clean("\n".join(expected)), got):
                failures.append(_diff(f"{where}: python example", expected, got))
                if follows:
                    edits.append((nxt.start + 1, nxt.end, got))
                else:
                    edits.append((block.end + 1, block.end + 1, ["", "```text", *got, "```"]))
        elif block.lang in ("bash", "sh", "shell"):
            allowed = page.name == "README.md" and page.parent == ROOT and n < 2
            if not allowed:
                failures.append(f"{where}: a ```{block.lang} block is never run; write a "
                                f"```console example with its output (or a ```text synopsis)")
    assert _sample_logs_state() == before, "an example changed sample_logs/"
    if UPDATE and edits:
        here = {str(workdir), str(workdir.resolve())}
        for first, last, new in sorted(edits, reverse=True):
            for path in here:
                new = [line.replace(path, "...") for line in new]
            lines[first:last] = new
        page.write_text("\n".join(lines), encoding="utf-8")
    assert not failures, "\n\n".join(failures)


def _diff(title: str, expected: list[str], got: list[str]) -> str:
    import difflib

    body = "\n".join(difflib.unified_diff(expected, got, "page", "printed", lineterm=""))
    return f"{title}\n{body}"


# --------------------------------------------------------------------------- the harness itself

def test_the_harness_reads_commands_outputs_and_wildcards() -> None:
    page = ["```console", "$ onlineeval a \\", "  --b", "out 1", "", "$ onlineeval c", "```"]
    (block,) = blocks(page)
    cmds = commands(block)
    assert [c.text for c in cmds] == ["onlineeval a --b", "onlineeval c"]
    assert cmds[0].expected == ["out 1"] and cmds[1].expected == []
    assert page[cmds[0].first:cmds[0].last] == ["out 1"]
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert not matches(["a", "...", "d"], ["a", "b"])
    assert matches(["report: .../report.html"], ["report: /tmp/x/y/report.html"])
    assert not matches(["p = 0.05"], ["p = 0.050"])
    assert not matches(["x"], ["x", "y"])
    # "| head -N" cuts stdout only; stderr reaches the terminal whole, in the order written
    written = [("err", "a\n"), ("out", "1\n2"), ("out", "\n"), ("err", "b\n"), ("out", "3\n")]
    assert _terminal(written, 1) == ["a", "1", "b"]
    assert _terminal(written, None) == ["a", "1", "2", "b", "3"]


def test_the_harness_fails_on_a_wrong_output(workdir: Path) -> None:
    got, status = run_command('onlineeval trec-eval nothing.txt nothing.run || echo '
                              '"exit status $?"', workdir)
    assert status == 2 and got[-1] == "exit status 2" and "error" in got[0]
    with pytest.raises(AssertionError, match="exited with status 2"):
        run_command("onlineeval trec-eval nothing.txt nothing.run", workdir)
    assert run_command("echo a; echo b | head -1", workdir)[0] == ["a", "b"]
    assert run_command("printf 'a\\nb\\n' | head -1", workdir)[0] == ["a"]


def test_pages_exist_for_every_area() -> None:
    names = {p.name for p in guide_pages()}
    assert {"README.md", "loading-logs.md", "online-metrics.md", "offline-evaluation.md",
            "interleaving.md", "ab-tests.md", "agreement.md", "simulation.md",
            "click-models.md", "scaling.md", "guarantees.md", "architecture.md"} <= names


# --------------------------------------------------------------------------- generated pages

def test_online_metrics_reference_is_what_the_registry_generates() -> None:
    from onlineeval.online.reference import reference_page

    committed = (REFERENCE / "online-metrics.md").read_text(encoding="utf-8")
    assert committed == reference_page(), (
        "docs/reference/online-metrics.md is stale: run "
        "python -m onlineeval.online.reference > docs/reference/online-metrics.md")


def test_online_metrics_reference_documents_every_field_of_every_metric() -> None:
    from onlineeval.online.definitions import COLUMNS, METRICS
    from onlineeval.online.reference import reference_page

    page = reference_page()
    for name in COLUMNS:
        m = METRICS.get(name)
        section = page.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
        assert m.definition in section and m.edge_cases in section and m.formula in section
        for line in ("**Grain:**", "**Needs:**", "**Range:**", "**better:**"):
            assert line in section, (name, line)


# --------------------------------------------------------------------------- links and README

_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", [*PAGES, *sorted(REFERENCE.glob("*.md"))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in _LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        path = (page.parent / target).resolve()
        assert path.exists(), f"{page.relative_to(ROOT)}: link {target}"


def test_readme_is_the_front_door() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 12 * 1024
    found = blocks(text.split("\n"))
    assert found[0].lang == "bash" and "onlineeval demo" in found[0].lines[0]
    assert found[1].lang == "bash"
    marked = text.split("<!-- test-command:start -->\n", 1)[1].split(
        "<!-- test-command:end -->", 1)[0]
    assert marked.strip() == "\n".join(["```bash", *found[1].lines, "```"])
    for page in guide_pages():
        assert f"(docs/{page.relative_to(DOCS)})" in text or page.name == "README.md", page


# --------------------------------------------------------------------------- architecture

def _named_paths(text: str) -> list[str]:
    """Repository paths a page names in backquotes: ``onlineeval/x.py``, ``sql/``, ..."""
    found = []
    for token in re.findall(r"`([^`\s]+)`", text):
        token = token.rstrip(",.;:")
        if "<" in token or "*" in token or token.startswith(("-", "$", "http")):
            continue
        if "/" in token and re.fullmatch(r"[\w./-]+", token):
            found.append(token)
    return found


def test_every_path_the_architecture_page_names_exists() -> None:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    paths = _named_paths(text)
    # the extraction works: the page names the layers' homes
    assert {"onlineeval/cli/", "sql/", "onlineeval/online/definitions.py",
            "onlineeval/offline/measures/", "tests/test_invariance.py"} <= set(paths)
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_architecture_layers_are_those_tests_test_layers_enforces() -> None:
    """The page's layer table, row by row, names exactly the modules of each layer of
    ``LAYERS`` in tests/test_layers.py (which checks them against the imports)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_layers", ROOT / "tests" / "test_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.split("\n")
            if line.startswith("| ") and not line.startswith(("| layer", "| ---"))]
    named = []
    for row in rows:
        where = row.rstrip(" |").rsplit(" | ", 1)[1]
        tops = set()
        for path in re.findall(r"`onlineeval/([^`]+)`", where):
            top = path.split("/", 1)[0].removesuffix(".py")
            tops.add("onlineeval" if top == "__init__" else top)
        named.append(frozenset(tops))
    assert named == list(module.LAYERS)


def test_every_repository_path_a_guide_page_names_exists() -> None:
    # paths the examples create (study/, cm/ab, ...) are not repository paths: only those
    # under the repository's own top-level folders are checked
    tops = ("onlineeval/", "sql/", "tests/", "bench/", "docs/", "sample_logs/")
    for page in PAGES:
        for path in _named_paths(page.read_text(encoding="utf-8")):
            if path.startswith(tops):
                assert (ROOT / path).exists(), f"{page.relative_to(ROOT)} names {path}"
