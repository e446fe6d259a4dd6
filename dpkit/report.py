"""The JSON privacy-spend report every command writes (format: docs/formats.md).

Built from the accountant and public parameters only (docs/algorithms.md §0 rule 5): nothing in
it is computed from the private data except the DP release itself (``release``), so the
report may be shared alongside the released file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dpkit.privacy.accountant import Accountant
from dpkit.version import __version__

REPORT_VERSION = 1

#: the guarantee of a run seeded with a plain integer (docs/formats.md, "seeded runs")
SEEDED_GUARANTEE = "none (seeded: reproducible, not private)"


#: the neighbouring relation of a run (docs/algorithms.md §0): a record outside the schema's domain
#: makes the whole run refuse, so the guarantee is about records within it
NEIGHBOURS = "add/remove one record within the schema's domain"
#: ... unless such records are dropped, each on its own (``on_invalid="drop"``): a record-wise
#: filter, so any record may then be added or removed
NEIGHBOURS_DROPPING = "add/remove any one record (records outside the schema's domain are dropped)"


def build_report(
    *,
    command: str,
    algorithm: str,
    accountant: Accountant,
    seeded: bool,
    parameters: dict[str, Any],
    release: dict[str, Any] | None = None,
    guarantee: str | None = None,
    seed_is_key: bool = False,
    neighbours: str | None = None,
) -> dict[str, Any]:
    """A differential-privacy report: the accountant's spends plus public parameters.

    ``guarantee`` overrides the default statement, e.g. ``"none: domain read from data"``
    when the user asked for data-derived bounds. A run seeded with a plain integer
    (``seeded`` and not ``seed_is_key``) guarantees nothing: small seeds can be searched, so
    its model is ``none`` (docs/formats.md, "seeded runs"); a ≥128-bit hex key keeps ε-DP
    while the key stays secret.
    """
    acc = accountant.to_report()
    if guarantee is None and seeded and not seed_is_key:
        guarantee = SEEDED_GUARANTEE
    # (ε, δ) whenever the run has a δ budget or spent a δ (partition selection); a pure-ε run
    # keeps exactly the block it always had ("epsilon-dp", "delta": 0, no other δ key)
    approximate = "delta_budget" in acc
    if approximate:
        model = "(epsilon, delta)-dp"
        words = f"(epsilon, delta)-DP with epsilon={acc['epsilon_spent']:.6g}, delta={acc['delta_spent']:.6g}"
    else:
        model, words = "epsilon-dp", f"epsilon-DP with epsilon={acc['epsilon_spent']:.6g}"
    privacy: dict[str, Any] = {
        # a run whose domain came from the data (--allow-data-bounds) or whose noise came from
        # a guessable seed guarantees nothing
        "model": "none" if guarantee and guarantee.startswith("none") else model,
        "neighbours": neighbours or NEIGHBOURS,
        "epsilon_budget": acc["epsilon_budget"],
        "epsilon_spent": acc["epsilon_spent"],
        "epsilon_unspent": acc["epsilon_unspent"],
        "delta": acc["delta_spent"] if approximate else 0,
    }
    if approximate:
        privacy["delta_budget"] = acc["delta_budget"]
        privacy["delta_spent"] = acc["delta_spent"]
    privacy["seeded"] = bool(seeded)
    privacy["guarantee"] = guarantee or (
        f"{words} while the seed (a 128+ bit key) stays secret" if seeded else words
    )
    return {
        "dpkit_version": __version__,
        "report_version": REPORT_VERSION,
        "command": command,
        "algorithm": algorithm,
        "privacy": privacy,
        "spends": acc["spends"],
        "parameters": parameters,
        "release": release or {},
    }


def build_kanon_report(
    *,
    command: str,
    algorithm: str,
    k: int,
    parameters: dict[str, Any],
    release: dict[str, Any],
) -> dict[str, Any]:
    """A k-anonymity report: states k, never an ε (docs/algorithms.md §4)."""
    return {
        "dpkit_version": __version__,
        "report_version": REPORT_VERSION,
        "command": command,
        "algorithm": algorithm,
        "privacy": {"model": "k-anonymity", "k": int(k)},
        "parameters": parameters,
        "release": release,
    }


def _clean(obj: Any) -> Any:
    """JSON-safe copy: numpy scalars to Python, non-finite floats refused."""
    import numbers

    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        f = float(obj)
        if not math.isfinite(f):
            raise ValueError(f"report value {obj!r} is not finite")
        return f
    if hasattr(obj, "tolist"):
        return _clean(obj.tolist())
    return str(obj)


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(_clean(report), indent=2, ensure_ascii=False) + "\n"


def write_report(report: dict[str, Any], path: str | Path) -> None:
    """Write ``report`` as JSON, atomically.

    A schema the report names by a relative path is also named relative to the report's own
    directory (``parameters.schema_from_report``), so ``generalize --cut REPORT`` finds it from
    any directory; no absolute path is written (a public report would show the
    steward's directories)."""
    import os

    from dpkit.io.output import atomic_output

    params = report.get("parameters")
    named = params.get("schema") if isinstance(params, dict) else None
    if isinstance(named, str) and str(path) != "-" and not os.path.isabs(named) and os.path.isfile(named):
        where = os.path.dirname(os.path.abspath(path))
        report = {**report, "parameters": {**params, "schema_from_report":
                                           os.path.relpath(os.path.abspath(named), where)}}
    text = dumps(report)
    with atomic_output(path) as fh:
        fh.write(text)


def read_report(path: str | Path) -> dict[str, Any]:
    """Load a report written by :func:`write_report`, with a clear error if it is not one."""
    from dpkit.errors import DataError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: report file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a dpkit report (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or "dpkit_version" not in data:
        raise DataError(f"{path}: not a dpkit report (no dpkit_version)")
    return data
