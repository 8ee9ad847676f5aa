"""The onlineeval.offline package: compare() loads lazily and stays the function."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> list[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split()


def test_evaluate_does_not_import_scipy():
    # compare() needs scipy.stats (about half a second to import); evaluate() does not
    out = _run("import sys\nfrom onlineeval.offline import evaluate, read_run\n"
               "print('scipy.stats' in sys.modules)\n"
               "from onlineeval.offline import compare\n"
               "print('scipy.stats' in sys.modules, callable(compare))\n")
    assert out == ["False", "True", "True"]


def test_compare_attribute_is_the_function_whatever_is_imported_first():
    out = _run("import onlineeval.offline.compare as m\nimport onlineeval.offline as o\n"
               "from onlineeval.offline.compare import paired_arrays\n"
               "print(type(o.compare).__name__, o.compare is m, o.compare.__module__)\n")
    assert out == ["function", "True", "onlineeval.offline.compare"]
