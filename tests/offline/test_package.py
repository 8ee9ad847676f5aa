"""The onlineeval.offline package: compare loads lazily; the name is the module, callable."""

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


def test_compare_is_the_module_in_every_import_order_and_calls_the_function(fresh_interpreters):
    # onlineeval.namespace: a module named like its function is that module, callable
    check = ("import sys\n"
             "print(o.compare is m, m is sys.modules['onlineeval.offline.compare'], callable(m),"
             " hasattr(m, 'paired_arrays'))\n")
    orders = ("import onlineeval.offline.compare as m\nimport onlineeval.offline as o\n",
              "import onlineeval.offline as o\nfrom onlineeval.offline import compare as m\n",
              "import onlineeval\no = onlineeval.offline\nm = o.compare\n")
    outs = fresh_interpreters([first + check for first in orders])
    assert [out.split() for out in outs] == [["True"] * 4] * 3
