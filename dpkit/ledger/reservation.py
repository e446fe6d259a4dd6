"""Reservations: ε (and δ) held for a group of runs, and the process that holds them.

``with ledger.reserve(epsilon, name=...) as group:`` (:class:`~dpkit.ledger.book.Reservation`)
and ``dpkit budget run`` open a group (:meth:`~dpkit.ledger.book.Ledger.open_group`); the runs
inside it find it through ``$DPKIT_RESERVATION`` (:func:`active_reservation`). A reservation
cannot be opened inside another (:func:`refuse_nested`); a holder process that died is told
from a live one (or a new one reusing its pid) by its start time (:func:`_alive`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from dpkit.errors import LedgerError

#: the environment variable naming the reservation a run draws from: "<id>@<ledger path>"
RESERVATION_ENV = "DPKIT_RESERVATION"
#: the environment variable naming the ledger a run books on when ``ledger=`` is not given
#: (the command line's ``--ledger`` and the library read it alike)
LEDGER_ENV = "DPKIT_LEDGER"


@dataclass(frozen=True)
class Group:
    """An open reservation (:meth:`Ledger.open_group`)."""

    id: int
    dataset: str
    epsilon: float
    ledger: str
    delta: float = 0.0

    @property
    def env(self) -> str:
        """The value of ``$DPKIT_RESERVATION`` that makes runs draw from it."""
        return f"{self.id}@{os.path.realpath(self.ledger)}"


def active_reservation() -> tuple[int, str] | None:
    """(id, ledger path) of the reservation this process runs inside (``$DPKIT_RESERVATION``,
    set by ``budget run`` for its command and by ``with ledger.reserve(...)``), None outside
    one. A value that names no reservation is refused: a run must not guess it is outside."""
    value = os.environ.get(RESERVATION_ENV, "")
    if not value:
        return None
    gid, _, path = value.partition("@")
    if not gid.isdigit() or not path:
        raise LedgerError(f"${RESERVATION_ENV}={value!r} names no reservation (expected <id>@<ledger path>); "
                          "nothing was run")
    return int(gid), path


def refuse_nested() -> None:
    """Refuse to open a reservation inside another (``budget run`` or ``ledger.reserve``): it
    would draw on the cap, not on the outer reservation (or, on another ledger, escape it), and
    the outer reservation's ε would no longer bound its runs."""
    held = active_reservation()
    if held is not None:
        raise LedgerError(f"a reservation cannot be opened inside reservation {held[0]} of ledger {held[1]} "
                          f"(${RESERVATION_ENV}); its runs draw from that one; nothing was run")


def _start_time(pid: int) -> str | None:
    """The process's start time (Linux: /proc/PID/stat field 22), to tell a live holder from a
    new process that reuses its pid; None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode(errors="replace")
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    if start is not None:
        now = _start_time(pid)
        return now is None or now == start
    return True
