"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Callable

import pytest


class FakeTTY:
    """A stderr stand-in that says it is a terminal and keeps what was written."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    @property
    def text(self) -> str:
        return "".join(self.parts)


@pytest.fixture
def tty_stderr(monkeypatch: pytest.MonkeyPatch) -> Callable[[], FakeTTY]:
    """Call it inside the test to replace sys.stderr by a fake terminal.

    (Patching in the fixture itself would not last: pytest's output capture re-installs its own
    sys.stderr when the test body starts.)
    """

    def install() -> FakeTTY:
        tty = FakeTTY()
        monkeypatch.setattr("sys.stderr", tty)
        return tty

    return install
