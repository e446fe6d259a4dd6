"""Running a command both ways on a corpus table, and the invariants every run must hold.

``cli(argv)`` runs ``dpkit ARGV`` in this process through the same error boundary as the console
script (``dpkit.cli.boundary.run``: exit codes, one-line messages, internal errors as 70), so a
crash shows as exit 70, not as a Python exception; ``lib(fn, ...)`` calls the library and turns
a :class:`dpkit.DpkitError` into its exit code. Both return an :class:`Outcome`.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import shutil
import tempfile
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from dpkit.errors import DpkitError

#: a secret key: reproducible runs that keep their ε-DP label (docs/formats.md, "Seeded runs")
KEY = "0x6b1f3c9d2e8a4f7051c6d9e2a3b4c5d6"


#: what the corpus ran: tables drawn and clean per test, command exit codes (tests/corpus/conftest.py
#: prints it at the end of a session)
TALLY: Counter = Counter()


def counted(fn: Callable[..., None]) -> Callable[..., None]:
    """Count the tables a test drew and those that held every invariant."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        TALLY[fn.__name__, "tables"] += 1
        fn(*args, **kwargs)
        TALLY[fn.__name__, "clean"] += 1

    return wrapper


@dataclass
class Outcome:
    code: int
    stdout: str = ""
    stderr: str = ""
    value: Any = None
    error: BaseException | None = None
    trace: str = ""

    def explain(self) -> str:
        return f"exit {self.code}; stderr: {self.stderr!r}{self.trace}"


def cli(argv: list[str]) -> Outcome:
    """``dpkit -q ARGV`` in this process, as the console script runs it."""
    from dpkit.cli import cli as group
    from dpkit.cli.boundary import run

    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(group, ["-q", *argv])
    TALLY[" ".join(a for a in argv[:2] if not a.startswith("/")), f"exit {code}"] += 1
    if code and os.environ.get("DPKIT_CORPUS_LOG"):  # why the commands refused, to tune the corpus
        with open(os.environ["DPKIT_CORPUS_LOG"], "a", encoding="utf-8") as fh:
            fh.write(f"{argv[0]} {argv[1] if len(argv) > 1 and not argv[1].startswith('/') else ''}: {err.getvalue()}")
    return Outcome(code, out.getvalue(), err.getvalue())


def lib(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    """``fn(*args, **kwargs)``: exit 0 with its value, a DpkitError's exit code, or 70 for
    anything else (with the traceback, for the failure message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return Outcome(0, value=fn(*args, **kwargs))
        except DpkitError as exc:
            return Outcome(exc.exit_code, stderr=str(exc), error=exc)
        except Exception as exc:  # noqa: BLE001 — the property: no other exception escapes
            return Outcome(70, stderr=f"{type(exc).__name__}: {exc}", error=exc, trace="\n" + traceback.format_exc())


_CURRENT: list[Path] = []


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    """A fresh directory per example (hypothesis runs many examples in one test call)."""
    d = Path(tempfile.mkdtemp(prefix="dpkit-corpus-"))
    _CURRENT[:] = [d]
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def keep() -> None:
    """With ``DPKIT_CORPUS_KEEP=DIR``, copy the failing example's files there to look at."""
    where = os.environ.get("DPKIT_CORPUS_KEEP")
    if where and _CURRENT and _CURRENT[0].exists():
        shutil.copytree(_CURRENT[0], tempfile.mkdtemp(prefix="corpus-fail-", dir=where), dirs_exist_ok=True)


def _fail(message: str) -> None:
    keep()
    raise AssertionError(message)


def check_clean(o: Outcome, outputs: list[Path], shape: str) -> None:
    """Exit 0, or exit 1/2 with exactly one line on stderr (never 70, never a traceback),
    and then none of ``outputs`` exists (no partial output file)."""
    if o.code not in (0, 1, 2) or "Traceback" in o.stderr:
        _fail(f"{shape}\n{o.explain()}")
    if o.code:
        lines = o.stderr.strip("\n").split("\n")
        if not (len(lines) == 1 and lines[0].startswith("dpkit: error: ")):
            _fail(f"{shape}\nnot one line: {o.explain()}")
        left = [str(p) for p in outputs if p.exists()]
        if left:
            _fail(f"{shape}\npartial output after exit {o.code}: {left}\n{o.explain()}")


def check_same_outcome(c: Outcome, lib_outcome: Outcome, shape: str) -> None:
    """The library fails exactly when the command does, with the same exit code, and never
    with anything but a DpkitError."""
    if lib_outcome.code == 70 or c.code != lib_outcome.code:
        _fail(f"{shape}\ncli: {c.explain()}\nlibrary: {lib_outcome.explain()}")


def same_bytes(a: Path, b: Path, shape: str, *, replace: tuple[str, str] | None = None) -> None:
    """``a`` and ``b`` hold the same bytes (after replacing the paths that name them)."""
    assert a.exists() == b.exists(), f"{shape}\n{a} exists: {a.exists()}, {b} exists: {b.exists()}"
    if not a.exists():
        return
    x, y = a.read_bytes(), b.read_bytes()
    if replace is not None:
        x = x.replace(replace[0].encode(), b"@").replace(json.dumps(replace[0])[1:-1].encode(), b"@")
        y = y.replace(replace[1].encode(), b"@").replace(json.dumps(replace[1])[1:-1].encode(), b"@")
    if x != y:
        keep()
        at = next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y)))
        raise AssertionError(f"{shape}\n{a.name} differs from {b.name} at byte {at}: "
                             f"{x[max(0, at - 80):at + 80]!r} vs {y[max(0, at - 80):at + 80]!r}")


def check_spend(report_path: Path, epsilon: float, shape: str, delta: float = 0.0) -> dict[str, Any]:
    """The report spends at most the budget (ε, and δ), and its spends add up to what it says."""
    import math

    report = json.loads(report_path.read_text())
    privacy = report["privacy"]
    spent = privacy["epsilon_spent"]
    assert spent <= epsilon * (1 + 1e-9), f"{shape}\nspent {spent} > budget {epsilon}"
    assert privacy["epsilon_budget"] == epsilon, shape
    assert 0 <= privacy.get("delta", 0) <= delta, f"{shape}\nδ {privacy.get('delta')} > {delta}"
    parts = math.fsum(s["epsilon"] for s in report.get("spends", []))
    assert math.isclose(parts, spent, rel_tol=1e-9, abs_tol=1e-12), f"{shape}\nspends add to {parts}, report {spent}"
    return report


def read_output(path: Path) -> pd.DataFrame:
    """A CSV dpkit wrote, as strings (nothing read as missing)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def write_schema(spec: dict[str, Any], path: Path) -> None:
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")


def env_examples(ci: int) -> int:
    """How many tables a corpus test draws: ``ci`` by default, or ``$DPKIT_CORPUS_EXAMPLES``
    per test when ``DPKIT_CORPUS=fuzz`` (``make fuzz``)."""
    if os.environ.get("DPKIT_CORPUS") == "fuzz":
        return int(os.environ.get("DPKIT_CORPUS_EXAMPLES", "400"))
    return ci
