"""All-or-nothing runs: ``dpkit budget run --epsilon E -- CMD ARGS…`` (docs/cron.md).

The ε of a whole pipeline (a night's publish and forest on the same export) is reserved on the
ledger before CMD starts, as one transaction: refused, nothing runs and the refusal is recorded.
CMD gets ``$DPKIT_LEDGER`` and ``$DPKIT_RESERVATION`` in its environment, so every dpkit command
inside draws from the reservation (one that would pass it is refused). When CMD ends — exit,
crash or signal — the reservation is closed and what its runs did not count comes back. If this
process itself is killed (SIGKILL), the reservation names it as holder and the next access to
the ledger closes it (:meth:`dpkit.ledger.Ledger.reclaim`).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from dpkit.errors import DpkitUsageError
from dpkit.ledger import RESERVATION_ENV, Ledger, refuse_nested

#: the signals passed on to CMD (the shell's "terminate" and "interrupt")
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def run_reserved(ledger: str | os.PathLike, epsilon: float, argv: Sequence[str], *, name: str | None = None,
                 delta: float = 0.0) -> int:
    """Run ``argv`` inside a reservation of ``epsilon`` (and ``delta``) on data set ``name``;
    return its exit status (``128 + N`` when it ended on signal N, as a shell reports it).

    Raises :class:`dpkit.BudgetExceeded` (nothing run) when the reservation does not fit.
    """
    if not argv:
        raise DpkitUsageError("give the command to run after --", param="argv")
    refuse_nested()
    book = Ledger(ledger)
    group = book.open_group(epsilon, name=name, command=" ".join(argv), delta=delta)
    env = {**os.environ, "DPKIT_LEDGER": str(Path(ledger).resolve()), RESERVATION_ENV: group.env}
    previous = {}
    child: subprocess.Popen | None = None
    ended = ""
    try:
        try:
            child = subprocess.Popen(list(argv), env=env)
        except OSError as exc:
            ended = f"could not start: {exc.strerror or exc}"
            raise DpkitUsageError(f"{argv[0]}: cannot run it: {exc.strerror or exc}", param="argv") from None

        def forward(signum: int, frame: object) -> None:  # noqa: ARG001
            if child is not None and child.poll() is None:
                child.send_signal(signum)

        for sig in FORWARDED:
            previous[sig] = signal.signal(sig, forward)
        code = child.wait()
        ended = f"command exited {code}" if code >= 0 else f"command ended by signal {-code}"
        return code if code >= 0 else 128 - code
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        # however CMD ended, the reservation is closed: its runs keep what they counted
        book.close_group(group, ended)
