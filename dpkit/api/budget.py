"""The privacy budget across runs, as functions (``dpkit budget``; docs/ledger.md).

:class:`dpkit.Ledger` keeps the books; these are the steps the ``budget`` commands take, with
their arguments checked as every front end checks them (:mod:`dpkit.validate`): register a data
set, ask whether ε still fits, run a command inside one reservation, list every event.
Laying the rows out as text is the command line's job.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpkit.errors import DataError, DpkitUsageError
from dpkit.ledger import DatasetStatus, Ledger, _check_cap, _check_delta_cap


def register_dataset(ledger: str | os.PathLike, data: str | os.PathLike, name: str, cap: float | None = None, *,
                     append: bool = False, exist_ok: bool = False, delta_cap: float | None = None) -> DatasetStatus:
    """:meth:`Ledger.register` into the ledger at ``ledger``, created (mode 0600) if needed — only
    once the arguments are known to be good, so a refused registration leaves no empty ledger.

    ``append`` + ``exist_ok`` + ``cap`` is the nightly rotation idiom (docs/cron.md): it creates
    the data set the first night, appends each new export, and is a no-op when run again.
    """
    if not Path(data).exists():  # a file, or a directory of Parquet or CSV files (docs/spark.md)
        raise DataError(f"{data}: file not found")
    if cap is not None:
        _check_cap(cap)
    elif not append:
        raise DpkitUsageError("cap is required to register a new data set", param="cap")
    _check_delta_cap(delta_cap)
    book = Ledger(ledger, create=True)
    book.register(name, data, cap, append=append, exist_ok=exist_ok, delta_cap=delta_cap)
    return {s.name: s for s in book.status()}[str(name).strip()]


def check_budget(ledger: str | os.PathLike | Ledger, epsilon: float, name: str | None = None) -> tuple[bool, float, float]:
    """Whether ``epsilon`` still fits in data set ``name``'s cap: (fits, ε remaining, ε asked).
    Nothing is booked."""
    from dpkit.run import parse_epsilon

    eps = parse_epsilon(epsilon)
    book = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    fits, left = book.fits(eps, name)
    return fits, left, eps


def run_in_reservation(ledger: str | os.PathLike, epsilon: float, argv: Sequence[str], *, name: str | None = None,
                       delta: float | None = None) -> int:
    """Run ``argv`` with ``epsilon`` (and ``delta``) reserved for it as a whole, all or nothing
    (:func:`dpkit.budget_run.run_reserved`); return its exit status."""
    from dpkit import validate
    from dpkit.budget_run import run_reserved
    from dpkit.run import parse_epsilon

    d = 0.0 if delta is None else validate.delta(delta)
    return run_reserved(ledger, parse_epsilon(epsilon), list(argv), name=name, delta=d)


def budget_events(ledger: str | os.PathLike | Ledger, name: str | None = None) -> list[dict[str, Any]]:
    """Every event as one list (``budget history --json``): runs, then reservations, then refusals,
    each with a ``kind``."""
    book = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    return ([{"kind": "run", **r} for r in book.history(name)]
            + [{"kind": "reservation", **g} for g in book.reservations(name)]
            + [{"kind": "refusal", **r} for r in book.refusals(name)])
