"""tests/conftest.py keeps compiled bytecode between runs even where the environment forbids
``__pycache__`` (PYTHONDONTWRITEBYTECODE): in a cache outside the checkout, for this process
and, through the environment, for the xdist workers and the subprocesses the tests start."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bytecode_is_written_but_never_into_the_checkout() -> None:
    assert not sys.dont_write_bytecode
    assert not os.environ.get("PYTHONDONTWRITEBYTECODE")
    if sys.pycache_prefix is not None:
        assert not Path(sys.pycache_prefix).resolve().is_relative_to(ROOT)
        assert os.environ["PYTHONPYCACHEPREFIX"] == sys.pycache_prefix
