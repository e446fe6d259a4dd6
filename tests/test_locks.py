"""The lock files: what `make demo` and `make test` install (requirements/*.lock)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQ = ROOT / "requirements"
_PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(path: Path) -> dict[str, str]:
    """name -> version of the pins that apply to this interpreter (markers on the Python version)."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _PIN.match(line)
        if not m:
            continue
        name, version, marker = m.groups()
        if marker and not _applies(marker):
            continue
        pins[_norm(name)] = version
    return pins


def _applies(marker: str) -> bool:
    from packaging.markers import Marker

    return Marker(marker).evaluate()


def _requirement_names(specs: list[str]) -> set[str]:
    return {_norm(re.split(r"[<>=!~\[; ]", s, maxsplit=1)[0]) for s in specs}


def test_every_pin_has_hashes() -> None:
    """pip installs the locks with --require-hashes: a pin without a hash would fail there."""
    for lock in REQ.glob("*.lock"):
        text = lock.read_text(encoding="utf-8")
        blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
        for block in blocks:
            if "==" in block.split("\n", 1)[0]:
                assert "--hash=sha256:" in block, f"{lock.name}: {block.splitlines()[0]} has no hash"


def test_the_demo_installs_what_the_tests_run_on() -> None:
    """run.lock (make demo) pins every package at the version dev.lock (make test) pins."""
    run, dev = _pins(REQ / "run.lock"), _pins(REQ / "dev.lock")
    assert run, "run.lock pins nothing"
    differ = {n: (v, dev.get(n)) for n, v in run.items() if dev.get(n) != v}
    assert not differ, f"run.lock and dev.lock disagree (run `make lock`): {differ}"


def test_locks_cover_pyproject() -> None:
    """Every dependency pyproject names is pinned in the lock that installs it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    wanted = {
        "run.lock": _requirement_names(project["dependencies"]),
        "dev.lock": _requirement_names(project["dependencies"] + extras["dev"] + extras["bench"] + extras["spark"]),
        "oracles.lock": _requirement_names(project["dependencies"] + extras["oracles"]),
        "lowest.lock": _requirement_names(project["dependencies"] + extras["dev"] + extras["spark"]),
    }
    for lock, names in wanted.items():
        pins = _pins(REQ / lock)
        assert names <= set(pins), f"{lock} lacks {sorted(names - set(pins))} (run `make lock`)"


def test_lowest_lock_is_the_lowest_supported() -> None:
    """lowest.lock holds the lower ends pyproject states for the core data stack."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lower = {}
    for spec in project["dependencies"]:
        m = re.match(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", spec)
        if m:
            lower[_norm(m.group(1))] = m.group(2)
    pins = _pins(REQ / "lowest.lock")
    for name in ("numpy", "pandas", "pyarrow"):
        assert pins[name].startswith(lower[name]), (name, pins[name], lower[name])


@pytest.mark.skipif(os.environ.get("DPKIT_DEPS") != "lock", reason="only `make test` (DEPS=lock) runs on the lock")
def test_installed_versions_are_the_lock() -> None:
    """Under `make test` the venv holds exactly dev.lock's versions (a stale venv would not)."""
    differ = {}
    for name, version in _pins(REQ / "dev.lock").items():
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            differ[name] = (version, None)
            continue
        if have != version:
            differ[name] = (version, have)
    assert not differ, f"{sys.prefix} is not on requirements/dev.lock: {differ}"
