"""What stderr may say: exact counts and values only to the data owner's own terminal.

Messages that quote the private data — how many rows were dropped or clipped, a raw value
with its line number — are for the person running dpkit, not for a log file that cron keeps.
:func:`private` gives the exact text when stderr is a terminal or the data owner asked for it
(:func:`set_verbosity`; the command line's verbose flag), and the same message without the
numbers otherwise, ending in :data:`dpkit.errors.DETAIL_HINT` (which the command line replaces with its
own flag). Library callers get the quiet form unless they opt in.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from dpkit.defaults import DELIMITERS, LISTED_COLUMNS
from dpkit.errors import DETAIL_HINT

_VERBOSE = False


def set_verbose(value: bool) -> None:
    global _VERBOSE
    _VERBOSE = bool(value)


def set_verbosity(verbose: bool = True) -> None:
    """Show the data owner's exact detail in dpkit's warnings and errors — how many rows were
    dropped or values clipped, a raw value with its line — in this process (``False``: the
    summaries again). Off by default, unless stderr is a terminal: a notebook's output or a log
    may be shared, and those numbers are about the private data (not differentially private).

    >>> import dpkit
    >>> dpkit.set_verbosity(True)    # the exact counts, for my eyes only
    >>> dpkit.set_verbosity(False)
    """
    set_verbose(verbose)


def verbose() -> bool:
    """True when the data owner asked for the exact detail (:func:`set_verbosity`)."""
    return _VERBOSE


#: how many readings of the owner's own records (generalize, predict, evaluate) are open: there a
#: notice may appear only when something happened; anywhere else what stderr says must not depend
#: on one record (dpkit.data.encoded.load_warnings), the safe default
_OWN_RECORDS = 0


@contextlib.contextmanager
def owner_records() -> Iterator[None]:
    """Within: the records read are the owner's own, and nothing read is released (a test split
    generalized, rows scored, an evaluation), so a load's notices follow what happened."""
    global _OWN_RECORDS
    _OWN_RECORDS += 1
    try:
        yield
    finally:
        _OWN_RECORDS -= 1


def reading_owner_records() -> bool:
    """True inside :func:`owner_records`."""
    return _OWN_RECORDS > 0


def owner_watching() -> bool:
    """True when exact detail may be printed: asked for (:func:`set_verbosity`), or stderr is a terminal."""
    if _VERBOSE:
        return True
    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def private(exact: str, summary: str) -> str:
    """``exact`` for the data owner's terminal (or when asked for), else ``summary`` +
    :data:`DETAIL_HINT`."""
    if owner_watching():
        return exact
    return summary + DETAIL_HINT


def progress_bar(name: str) -> tuple[Any, Callable[[int, int], None]] | tuple[None, None]:
    """A rich progress bar on stderr for a terminal (``(bar, update)``; ``(None, None)`` on a pipe).

    The bar starts at the first ``update(done, total)``: a sweep calls it once its worker
    processes are forked, so no rendering thread exists when they fork."""
    if not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn(f"[bold]{name}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("eta"), TimeRemainingColumn(), console=Console(stderr=True), transient=False)
    task_id = bar.add_task("runs", total=None)

    def update(done: int, total: int) -> None:
        if not bar.live.is_started:
            bar.start()
        bar.update(task_id, completed=done, total=total)

    return bar, update


def have_columns(columns: object) -> str:
    """What a message about an absent column says the data has: ``(have: a, b, …)``, at most
    :data:`~dpkit.defaults.LISTED_COLUMNS` names and then how many in all; and, when a column
    name holds a delimiter (the header was split on the wrong one), that the delimiter is likely
    wrong."""
    names = [str(c) for c in columns]  # type: ignore[attr-defined]
    shown = ", ".join(names[:LISTED_COLUMNS]) + (f", … ({len(names)} in all)" if len(names) > LISTED_COLUMNS else "")
    text = f"(have: {shown})"
    held = next(((n, d) for n in names for d in DELIMITERS if d in n), None)
    if held:
        name, d = held
        text += (f"; column name {name[:40]!r} holds {d!r}: the delimiter is likely wrong "
                 f"(give delimiter={d!r})")
    return text
