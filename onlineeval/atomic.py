"""Writing outputs so that no file is half-written, no input overwritten, nothing lost.

Every file onlineeval writes goes through this module:

- :func:`temp_path` / :func:`open_text` / :func:`write_text` write one file under a temporary
  name in the target's own directory and rename it onto the target only when it is complete
  (a rename within one directory is atomic: a reader sees the old file or the new one, never
  part of one). On an error or an interruption the temporary file is removed.
- :class:`Output` is what a command writes as a whole — a report and its JSON, a directory of
  tables, a simulated study. Before any work it checks every output path (not an input, not
  inside an input directory, a file where a file is expected and a directory where a
  directory is, no path named twice) and takes a lock, so a second process writing the same
  output is refused instead of mixing two results. Files are written to temporary names and a
  directory is built in a temporary directory next to it; when the block ends without error
  everything is renamed into place (with Ctrl-C and SIGTERM held back for those renames, see
  :mod:`onlineeval.interrupt`). An existing directory receives the new files one by one, and
  keeps every file the command did not write. On an error or an interruption every temporary
  file and directory is removed and nothing changes under the output names.

Temporary names and lock files start with ``.`` (``.report.html.1a2b3c4d.onlineeval-tmp``,
``.report.html.onlineeval-lock``), so the log readers, which skip hidden files, never see them.
An operating-system error while writing (no space, read-only file system, permission) is an
:class:`~onlineeval.errors.OutputError` naming the output and the cause.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from onlineeval import interrupt
from onlineeval.errors import OutputError

TMP_SUFFIX = ".onlineeval-tmp"
LOCK_SUFFIX = ".onlineeval-lock"

#: errors of a write that does not name its file (``write()`` on an open file object)
_WRITE_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EIO")
    if hasattr(errno, name)
)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the lock file is created exclusively
    fcntl = None  # type: ignore[assignment]


def os_error_text(exc: OSError) -> str:
    """The cause of an OS error in words, with its symbolic name: ``No space left on device
    (ENOSPC)``."""
    cause = exc.strerror or str(exc) or type(exc).__name__
    name = errno.errorcode.get(exc.errno) if exc.errno is not None else None
    return f"{cause} ({name})" if name else cause


def _real(path: str | Path) -> Path:
    # the path the bytes would land at: symlinks and .. resolved, relative to the cwd
    return Path(os.path.realpath(os.path.abspath(os.fspath(path))))


def _same(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)  # hard links, bind mounts
    except OSError:
        return False


def _inside(path: Path, directory: Path) -> bool:
    return directory in path.parents


def _mkdir(directory: Path, target: Path) -> list[Path]:
    """Create ``directory`` and missing parents; returns those created, top first."""
    missing = [d for d in [directory, *directory.parents] if not d.exists()][::-1]
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputError(
            f"cannot write {target}: {directory} (or a folder above it) is a file, not a "
            "directory"
        ) from None
    except OSError as exc:
        raise OutputError(f"cannot create the directory {directory} for {target}: "
                          f"{os_error_text(exc)}") from None
    return missing


def _short(name: str) -> str:
    """``name`` for a temporary or lock file beside it: a long name is cut and a digest
    appended, so that the hidden name stays within the file system's limit."""
    if len(name) <= 100:
        return name
    return f"{name[:80]}~{hashlib.sha256(name.encode()).hexdigest()[:12]}"


def _new_temp(target: Path, kind: str) -> Path:
    # created with the mode a plain open()/mkdir() would give (the umask applies), not
    # mkstemp's private 0600
    while True:
        tmp = target.parent / f".{_short(target.name)}.{secrets.token_hex(4)}{TMP_SUFFIX}"
        try:
            if kind == "dir":
                os.mkdir(tmp, 0o777)
            else:
                os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputError(f"cannot write {target}: {os_error_text(exc)}") from None


def _remove_stale(target: Path) -> None:
    """Remove temporary files of ``target`` left by a writer that was killed outright (kill -9,
    power loss): we hold its lock, so no live writer owns them."""
    stale = re.compile(rf"\.{re.escape(_short(target.name))}\.[0-9a-f]{{8}}"
                       rf"{re.escape(TMP_SUFFIX)}")
    with os.scandir(target.parent) as found:
        for entry in found:
            if stale.fullmatch(entry.name):
                _remove(Path(entry.path))


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()


def _special(path: Path) -> bool:
    """Is ``path`` an existing file that is neither regular nor a directory?"""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _keep_mode(tmp: Path, target: Path) -> None:
    # a replaced file keeps its permissions
    with contextlib.suppress(FileNotFoundError):
        os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))


@contextlib.contextmanager
def temp_path(target: str | Path) -> Iterator[Path]:
    """A temporary path next to ``target`` for a writer that takes a path (DuckDB,
    ``open``); renamed onto ``target`` when the block ends without error, else removed.
    Standing alone (an API writer), it checks only that ``target`` is not a directory; a
    command plans its outputs with :class:`Output`, which checks the rest."""
    with Output() as out:
        tmp = out.file(target, lock=False)
        yield tmp


@contextlib.contextmanager
def open_text(target: str | Path, newline: str | None = "\n") -> Iterator[TextIO]:
    """Open ``target`` for writing UTF-8 text under a temporary name (see
    :func:`temp_path`)."""
    with temp_path(target) as tmp, open(tmp, "w", encoding="utf-8", newline=newline) as fh:
        yield fh


def write_text(target: str | Path, text: str) -> Path:
    """Write ``text`` to ``target`` atomically; returns ``target`` as a Path."""
    with open_text(target) as fh:
        fh.write(text)
    return Path(target)


def fill(tmp: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to a temporary path of an :class:`Output`. An OS error names
    the path (a failing ``write()`` names none), so the output's name reaches the user."""
    try:
        tmp.write_text(text, encoding="utf-8")
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror, str(tmp)) from None
        raise


class _Lock:
    """An exclusive lock on one output, held in a hidden file next to it. The operating
    system releases it when the process ends in any way, so a killed process leaves no
    lock that blocks the next run (only the empty file, which the next run reuses)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.path = target.parent / f".{_short(target.name)}{LOCK_SUFFIX}"
        self.fd: int | None = None

    def _busy(self) -> OutputError:
        try:
            holder = self.path.read_text(encoding="utf-8").strip()
        except OSError:
            holder = ""
        who = f"process {holder}" if holder.isdigit() else "another process"
        return OutputError(
            f"{self.target} is being written by {who} (lock file {self.path}); wait for it "
            "to finish or write to another path — two writers would mix their outputs"
        )

    def acquire(self) -> None:
        while True:
            try:
                if fcntl is None:  # pragma: no cover
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                else:
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except FileExistsError:  # pragma: no cover
                raise self._busy() from None
            except OSError as exc:
                raise OutputError(f"cannot write {self.target}: {os_error_text(exc)}") \
                    from None
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    raise self._busy() from None
                # the holder before us may have removed the file between our open and our
                # lock: then we locked a file nobody else can see; start again
                try:
                    same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    same = False
                if not same:
                    os.close(fd)
                    continue
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            self.fd = fd
            return

    def release(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        os.close(self.fd)
        self.fd = None


class _Planned:
    """One output of an :class:`Output`: its target, kind and temporary path."""

    def __init__(self, target: Path, shown: str, kind: str, tmp: Path, lock: _Lock,
                 overwrite: bool, replaces: tuple[str, ...]) -> None:
        self.target, self.shown, self.kind, self.tmp, self.lock = target, shown, kind, tmp, lock
        self.overwrite, self.replaces = overwrite, replaces


class Output:
    """The outputs of one command, written to temporary names and put in place together.

    ``inputs`` are the files and directories the command reads: no output may be one of
    them or lie inside an input directory, and a file inside an output directory is never
    replaced if it is an input. Use as a context manager::

        with Output(inputs=[study_file, qrels]) as out:
            html = out.file("report.html")       # a temporary path; write the report there
            stage = out.directory("tables/", overwrite=force)   # a temporary directory
            ...
        # here report.html and tables/ hold the new outputs; after an exception, nothing
        # changed
    """

    def __init__(self, inputs: Iterable[str | Path] = ()) -> None:
        self.inputs = [_real(p) for p in inputs if p is not None]
        self.planned: list[_Planned] = []
        self.created: list[Path] = []  # parent directories made for the outputs

    def __enter__(self) -> Output:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        committed = False
        try:
            if exc is None:
                with interrupt.deferred():
                    self._commit()
                committed = True
            elif (message := self._explain(exc)) is not None:
                raise OutputError(message) from None
        finally:
            with interrupt.deferred():
                for p in self.planned:
                    _remove(p.tmp)
                    p.lock.release()
                if not committed:  # directories made for outputs that never came
                    for d in reversed(self.created):
                        with contextlib.suppress(OSError):
                            d.rmdir()

    def _final(self, path: str | Path) -> str | None:
        """Where a temporary path of ours would have ended up (None if it is not ours)."""
        p = _real(path)
        for planned in self.planned:
            if p == planned.tmp:
                return planned.shown
            if _inside(p, planned.tmp):
                return os.path.join(planned.shown, os.fspath(p.relative_to(planned.tmp)))
        return None

    def _explain(self, exc: BaseException) -> str | None:
        """The one-line message for an error while writing an output, naming the output
        (never its temporary name); None for errors that are not about our outputs (e.g.
        an input that cannot be read), which keep their own message."""
        if isinstance(exc, OSError):
            names = [n for n in (exc.filename, exc.filename2) if isinstance(n, str | Path)]
            finals = [f for n in names if (f := self._final(n)) is not None]
            if not names and exc.errno in _WRITE_ERRNOS:
                # a write() on an open file does not say which file; all we write is ours
                finals = [p.shown for p in self.planned]
            if finals:
                return f"cannot write {', '.join(finals)}: {os_error_text(exc)}"
            return None
        text = str(exc)
        hits = [p for p in self.planned if str(p.tmp) in text]
        if not hits:
            return None
        for p in hits:
            text = text.replace(str(p.tmp), p.shown)
        if isinstance(exc, OutputError):
            return text
        # DuckDB's IO errors carry the OS error number as JSON: '"errno":"28"'
        number = re.search(r'"errno"\s*:\s*"?(\d+)', text)
        if number:
            code = int(number.group(1))
            cause = os_error_text(OSError(code, os.strerror(code)))
        else:
            cause = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return f"cannot write {hits[0].shown}: {cause}"

    def _check(self, target: Path, shown: str, kind: str) -> None:
        for other in self.planned:
            if _same(other.target, target):
                also = "" if other.shown == shown else f" (also as {other.shown})"
                raise OutputError(f"{shown} is named for two outputs{also}; give each output "
                                  "its own path")
            if other.kind == "dir" and _inside(target, other.target) \
                    or kind == "dir" and _inside(other.target, target):
                raise OutputError(f"{shown} and {other.shown}: one output lies inside the "
                                  "other; give each output its own path")
        for src in self.inputs:
            if _same(src, target):
                real = "" if os.fspath(src) == shown else f" ({src})"
                raise OutputError(
                    f"{shown} is also an input of this command{real}; writing it would "
                    "destroy the input. Choose another output path"
                )
            if src.is_dir() and _inside(target, src):
                raise OutputError(
                    f"{shown} lies inside the input directory {src}; writing there would "
                    "change the input. Choose an output path outside it"
                )
        if kind == "file" and target.is_dir():
            raise OutputError(f"{shown} is a directory; expected a file name for the output")
        if kind == "dir" and target.exists() and not target.is_dir():
            raise OutputError(f"{shown} is a file; expected a directory for the output")

    def _plan(self, target: str | Path, kind: str, overwrite: bool,
              replaces: Iterable[str], lock_it: bool) -> Path:
        shown = os.fspath(target)
        if not shown:
            raise OutputError("an output path is empty; give a file or directory name")
        if kind == "file" and _special(Path(target)):
            # a device or pipe (/dev/null, /dev/stdout, a FIFO) is written directly: it
            # cannot be replaced by a rename, and must not be
            return Path(target)
        real = _real(target)
        self._check(real, shown, kind)
        self.created += _mkdir(real.parent, real)
        lock = _Lock(real)
        # held back from signals, so a lock or temporary file is never left unrecorded
        with interrupt.deferred():
            if lock_it:
                lock.acquire()
            try:
                if lock_it:
                    _remove_stale(real)
                tmp = _new_temp(real, kind)
            except BaseException:
                lock.release()
                raise
            self.planned.append(_Planned(real, shown, kind, tmp, lock, overwrite,
                                         tuple(replaces)))
        return tmp

    def file(self, target: str | Path, *, lock: bool = True) -> Path:
        """Plan the file ``target``; returns the temporary path to write it to. An existing
        ``target`` is replaced when the block ends without error. ``lock=False`` skips the
        lock (for a file written inside a directory that is itself planned)."""
        return self._plan(target, "file", True, (), lock)

    def directory(self, target: str | Path, *, overwrite: bool = False,
                  replaces: Iterable[str] = ()) -> Path:
        """Plan the directory ``target``; returns a temporary directory to build it in.

        If ``target`` does not exist, the temporary directory is renamed to it. Otherwise
        every file built is moved into ``target`` (subdirectories merged), replacing a file
        of the same name only if ``overwrite``; files of ``target`` that were not built stay,
        except the names listed in ``replaces`` (relative paths of files the new output
        supersedes), which are removed when the new files are in place."""
        return self._plan(target, "dir", overwrite, replaces, True)

    # -- putting outputs in place -------------------------------------------------------

    def _moves(self, src: Path, dest: Path, planned: _Planned) -> list[tuple[Path, Path]]:
        """The renames that merge the built tree ``src`` into ``dest``, after checking that
        none of them replaces what it must not."""
        moves: list[tuple[Path, Path]] = []
        for entry in sorted(src.iterdir()):
            to = dest / entry.name
            rel = to.relative_to(planned.target)
            if entry.is_dir() and not entry.is_symlink():
                if not to.exists():
                    moves.append((entry, to))
                elif to.is_dir():
                    moves.extend(self._moves(entry, to, planned))
                else:
                    raise OutputError(f"cannot write {planned.shown}: {rel} is a file in the "
                                      "output directory, where a directory must go")
                continue
            if to.is_dir():
                raise OutputError(f"cannot write {planned.shown}: {rel} is a directory in "
                                  "the output directory, where a file must go")
            if to.exists() or to.is_symlink():
                if any(_same(src_in, to) for src_in in self.inputs):
                    raise OutputError(
                        f"cannot write {planned.shown}: {rel} there is also an input of "
                        "this command; writing it would destroy the input"
                    )
                if not planned.overwrite:
                    raise OutputError(
                        f"cannot write {planned.shown}: {rel} already exists there; replace "
                        "it with overwrite (CLI: --force) or choose another directory"
                    )
            moves.append((entry, to))
        return moves

    def _commit(self) -> None:
        steps: list[tuple[_Planned, list[tuple[Path, Path]], list[Path]]] = []
        for p in self.planned:  # check everything before the first rename
            if p.kind == "dir" and p.target.is_dir():
                built = {q.relative_to(p.tmp) for q in p.tmp.rglob("*")}
                stale = [p.target / r for r in p.replaces
                         if Path(r) not in built and (p.target / r).is_file()]
                steps.append((p, self._moves(p.tmp, p.target, p), stale))
            else:
                steps.append((p, [], []))
        for p, moves, stale in steps:
            try:
                if p.kind == "file":
                    _keep_mode(p.tmp, p.target)
                    os.replace(p.tmp, p.target)
                elif not moves and not p.target.exists():
                    os.rename(p.tmp, p.target)
                else:
                    for src, dest in moves:
                        if not src.is_dir():
                            _keep_mode(src, dest)
                        os.replace(src, dest)
                    for path in stale:
                        path.unlink()
            except IsADirectoryError:
                raise OutputError(f"{p.shown} is a directory; expected a file name for the "
                                  "output") from None
            except OSError as exc:
                raise OutputError(f"cannot write {p.shown}: {os_error_text(exc)}") from None
