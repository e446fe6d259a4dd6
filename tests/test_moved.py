"""The module paths that moved (docs/architecture.md): each old one still imports, warns once
naming the new path, and is the new module; dpkit itself imports none of them."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from dpkit._moved import MOVED, REMOVED_IN

ROOT = Path(__file__).resolve().parents[1]


def _forget(name: str) -> None:
    """Drop ``name`` (an old path) from sys.modules and its parent, so the next import finds it."""
    sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    if parent in sys.modules and parent not in MOVED:
        try:
            delattr(sys.modules[parent], child)
        except AttributeError:
            pass


def test_every_new_path_exists_and_every_old_one_is_gone() -> None:
    for old, new in MOVED.items():
        assert importlib.util.find_spec(new) is not None, new
        assert not (ROOT / Path(*old.split("."))).exists(), old
        assert not (ROOT / Path(*old.split("."))).with_suffix(".py").exists(), old


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_imports_warns_and_is_the_new_module(old: str) -> None:
    new = importlib.import_module(MOVED[old])
    _forget(old)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"import {old} as module", namespace := {})  # an import statement: the warning names it
    module = namespace["module"]
    assert module is new
    ours = [w for w in caught if issubclass(w.category, DeprecationWarning) and w.message.args[0].startswith(old + " ")]
    assert [str(w.message) for w in ours] == [
        f"{old} is deprecated and will be removed in dpkit {REMOVED_IN}; import {MOVED[old]}"]
    assert ours[0].filename == "<string>"  # the importer's line, not the import system's
    public = [n for n in getattr(new, "__all__", dir(new)) if not n.startswith("_")]
    assert all(getattr(module, n) is getattr(new, n) for n in public)
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        importlib.import_module(old)
    assert not [w for w in again if issubclass(w.category, DeprecationWarning)]  # once


def test_from_old_package_import_names() -> None:
    for old in ("dpkit.release", "dpkit.release.maxgddp", "dpkit.learn", "dpkit.data.schema"):
        _forget(old)
    with pytest.warns(DeprecationWarning, match=r"dpkit\.release is deprecated"):
        from dpkit.release import make_model
    from dpkit.algorithms.publish import make_model as new_make_model

    assert make_model is new_make_model
    with pytest.warns(DeprecationWarning, match=r"dpkit\.learn is deprecated.*import dpkit\.algorithms\.forest$"):
        from dpkit.learn import DiffPRFs
    assert DiffPRFs is importlib.import_module("dpkit.algorithms.forest.dprf").DiffPRFs
    with pytest.warns(DeprecationWarning, match=r"dpkit\.data\.schema is deprecated.*import dpkit\.schema\.parse$"):
        from dpkit.data.schema import load_schema
    import dpkit

    assert load_schema is dpkit.load_schema


def test_dpkit_itself_imports_no_old_path(tmp_path: Path) -> None:
    """In a fresh process, with DeprecationWarning an error: the public names and a private CLI
    run (publish, forest, cluster, kanon-select, taxonomy infer and validate) import no old module path."""
    script = f"""
import sys, warnings
warnings.filterwarnings("error", category=DeprecationWarning, module="dpkit")
warnings.filterwarnings("error", message=r"dpkit\\..* is deprecated", category=DeprecationWarning)
import dpkit
for name in dpkit.__all__:
    getattr(dpkit, name)
from dpkit.cli import cli
from dpkit.cli.boundary import run
root = {str(ROOT)!r}
out = {str(tmp_path)!r}
runs = [
    ["publish", root + "/sample_data/iris/iris.csv", "--schema", root + "/taxonomies/iris.yaml",
     "--epsilon", "1", "--seed", "1", "-o", out + "/p.csv", "-q"],
    ["forest", "train", root + "/sample_data/iris/iris.csv", "--schema", root + "/taxonomies/iris.yaml",
     "--target", "species", "--epsilon", "1", "--seed", "1", "-o", out + "/m.json", "-q"],
    ["cluster", root + "/sample_data/iris/iris.csv", "--schema", root + "/taxonomies/iris.yaml",
     "-k", "3", "--epsilon", "1", "--seed", "1", "-o", out + "/c.csv", "-q"],
    ["kanon-select", root + "/sample_data/iris/iris.csv", "--schema", root + "/taxonomies/iris.yaml",
     "--target", "species", "-k", "5", "--seed", "1", "-o", out + "/k.csv", "-q"],
    ["taxonomy", "infer", root + "/sample_data/iris/iris.csv", "-o", out + "/s.yaml", "-q"],
    ["taxonomy", "infer", root + "/sample_data/iris/iris.csv", "--epsilon", "20", "--delta", "1e-6", "--seed", "1",
     "-o", out + "/l.yaml", "-q"],
    ["taxonomy", "validate", root + "/taxonomies/iris.yaml", root + "/sample_data/iris/iris.csv", "-q"],
]
for args in runs:
    assert run(cli, args) == 0, args
moved = __import__("dpkit._moved", fromlist=["MOVED"]).MOVED
assert not set(moved) & set(sys.modules), sorted(set(moved) & set(sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]


def test_import_module_warns_at_its_caller() -> None:
    _forget("dpkit.kmeans.eug")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        importlib.import_module("dpkit.kmeans.eug")
    ours = [w for w in caught if str(w.message).startswith("dpkit.kmeans.eug ")]
    assert len(ours) == 1 and ours[0].filename == __file__


def test_an_old_path_imports_from_python_dash_c() -> None:
    """``python -c "import dpkit.release"`` (and a REPL): the warning's source line was read through
    ``__main__``'s loader, which for ``-c`` is the built-in importer and refused with ImportError —
    the old path then did not import at all."""
    code = ("import warnings; warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import dpkit.release, dpkit.api.inputs\n"
            "print(len([x for x in w if issubclass(x.category, DeprecationWarning)]), dpkit.api.inputs.load.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "dpkit.engine.inputs"]
