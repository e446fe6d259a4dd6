"""What stderr may say: exact counts and values only to the data owner's own terminal.

Messages that quote the private data — how many rows were dropped or clipped, a raw value
with its line number — are for the person running dpkit, not for a log file that cron keeps.
:func:`private` gives the exact text when stderr is a terminal or ``-v`` was given, and the
same message without the numbers otherwise ("…; -v shows how many"). Set by the CLI
(``set_verbose``); library callers get the quiet form unless they opt in.
"""

from __future__ import annotations

import sys

_VERBOSE = False


def set_verbose(value: bool) -> None:
    global _VERBOSE
    _VERBOSE = bool(value)


def verbose() -> bool:
    """True when -v was given (the CLI) or a library caller opted in."""
    return _VERBOSE


def owner_watching() -> bool:
    """True when exact detail may be printed: ``-v``, or stderr is a terminal."""
    if _VERBOSE:
        return True
    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def private(exact: str, summary: str) -> str:
    """``exact`` for the data owner's terminal (or -v), else ``summary`` + a pointer to -v."""
    if owner_watching():
        return exact
    return f"{summary} (-v shows the detail)"
