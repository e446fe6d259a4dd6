"""The privacy ledger: the ε spent on each data set across runs (format: docs/ledger.md).

One module a job: :mod:`.book` (:class:`Ledger`: registering, checking, reserving and
booking runs), :mod:`.views` (the counting rules and what ``dpkit budget`` shows),
:mod:`.reservation` (reservations for a group of runs), :mod:`.identity` (a data set's
fingerprint), :mod:`.file` (the SQLite file) and :mod:`.schema` (its tables and migrations).
"""

from dpkit.errors import BudgetExceeded, LedgerError
from dpkit.ledger.book import (
    TOLERANCE,
    Entry,
    Ledger,
    Reservation,
    _check_cap,
    _check_delta,
    _check_delta_cap,
)
from dpkit.ledger.file import BUSY_TIMEOUT_S
from dpkit.ledger.identity import fingerprint
from dpkit.ledger.reservation import (
    LEDGER_ENV,
    RESERVATION_ENV,
    Group,
    active_reservation,
    refuse_nested,
)
from dpkit.ledger.schema import ABORTED, COMPLETE, LOST, RESERVED, SCHEMA_VERSION, STATUSES
from dpkit.ledger.views import DatasetStatus

__all__ = [
    "ABORTED", "BUSY_TIMEOUT_S", "COMPLETE", "LEDGER_ENV", "LOST", "RESERVATION_ENV", "RESERVED", "SCHEMA_VERSION",
    "STATUSES", "TOLERANCE", "BudgetExceeded", "DatasetStatus", "Entry", "Group", "Ledger", "LedgerError",
    "Reservation", "_check_cap", "_check_delta", "_check_delta_cap", "active_reservation", "fingerprint",
    "refuse_nested",
]
