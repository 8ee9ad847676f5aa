"""Every name the top-level API promises resolves to a callable or class, whatever the
import order (several exported functions share their name with a subpackage)."""

import subprocess
import sys

import onlineeval
import onlineeval.offline


def test_every_export_resolves():
    for name in onlineeval._EXPORTS:
        obj = getattr(onlineeval, name)
        assert callable(obj), name


def test_offline_functions_win_over_same_named_submodules():
    code = (
        "import onlineeval.offline.compare, onlineeval.offline.rbo, onlineeval.offline as o;"
        "import types;"
        "assert not isinstance(o.compare, types.ModuleType);"
        "assert not isinstance(o.rbo, types.ModuleType);"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_package_named_exports_are_callable_after_their_subpackage_is_imported():
    code = (
        "import onlineeval.simulate, onlineeval.abtest, onlineeval.agreement, onlineeval as oe;"
        "assert callable(oe.simulate) and callable(oe.abtest) and callable(oe.agreement);"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
    assert callable(onlineeval.offline.evaluate)
