"""Suite-wide fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import settings

# No per-example deadline (CI machines are slow and shared) and a fixed example sequence, so
# a property test fails the same way on every run; explicit @settings still override this.
settings.register_profile("dpkit", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("dpkit")


@pytest.fixture(autouse=True)
def _fresh_console():
    """The owner's verbosity is process-wide: one test's must not leak into the next (the CLI's
    -q/-v are reset by tests/cli/conftest.py)."""
    from dpkit.console import set_verbose

    set_verbose(False)
    yield
    set_verbose(False)


@pytest.fixture
def owner_verbose():
    """As with -v: messages carry exact counts and values (dpkit.console.private)."""
    from dpkit.console import set_verbose

    set_verbose(True)
    yield
    set_verbose(False)


ROOT = Path(__file__).resolve().parents[1]

_RUN = """
import json, sys
import pandas as pd
import pycanon.anonymity as anonymity
path, name, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
df = pd.read_csv(path, dtype=str, keep_default_na=False)
print(json.dumps(float(getattr(anonymity, name)(df, *args))))
"""


def oracle_python() -> Path | None:
    """The oracles venv's interpreter, or None where it is not built.

    The k-anonymity oracle (pycanon) is reached in its own venv: pycanon pins numpy 2.0 and pandas 2.3, so it cannot live beside the versions dpkit's users
    install (the tests run on those). ``make test`` builds ``.venv-oracles`` from
    ``requirements/oracles.lock`` and names its interpreter in ``$DPKIT_ORACLES_PYTHON``; a test takes
    the :func:`pycanon` fixture, a stand-in of ``pycanon.anonymity`` whose functions take the same arguments,
    write the table to a CSV and run the real function there. Outside ``make test`` (no venv) the
    test is skipped with the command that builds it; under CI (``$CI`` set) a missing oracle fails.
    """
    named = os.environ.get("DPKIT_ORACLES_PYTHON")
    path = Path(named) if named else ROOT / ".venv-oracles" / "bin" / "python"
    return path if path.exists() else None


class _Anonymity:
    """``pycanon.anonymity`` as seen from this venv: each call runs in the oracles venv."""

    def __init__(self, python: Path) -> None:
        self._python = python

    def __getattr__(self, name: str) -> Any:
        def call(df: pd.DataFrame, *args: Any) -> float:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "table.csv"
                df.astype(str).to_csv(path, index=False)
                done = subprocess.run(
                    [str(self._python), "-c", _RUN, str(path), name, json.dumps(list(args))],
                    capture_output=True, text=True, check=False,
                )
            if done.returncode != 0:
                raise RuntimeError(f"pycanon.anonymity.{name} failed in {self._python}:\n{done.stderr}")
            return json.loads(done.stdout)

        return call


@pytest.fixture
def pycanon() -> _Anonymity:
    """A stand-in for ``pycanon.anonymity`` (``k_anonymity``, ``l_diversity``, …): the
    k-anonymity oracle, run in its own venv (see :func:`oracle_python`)."""
    python = oracle_python()
    if python is None:
        msg = "the pycanon oracle's venv is missing: `make oracles` builds .venv-oracles"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return _Anonymity(python)
