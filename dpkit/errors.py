"""The exceptions and warnings dpkit raises for the user — every one of them is defined here.

Every error a user can cause is a :class:`DpkitError`; the CLI turns it into one line on
stderr and its ``exit_code`` (1 a runtime refusal or data error, 2 a usage error).

They also are the builtin exceptions Python code expects, as scikit-learn's
``InvalidParameterError`` is: an error about a value (a parameter, a record, a schema) is a
:class:`ValueError`, one about a type (or an unknown keyword) also a :class:`TypeError`; so
``except ValueError`` catches ``dpkit.publish(..., epsilon=0)``. A refusal that is about no
value (a ledger's cap, a run's budget) is a :class:`DpkitError` only.

Library messages name the library's parameters (``levels``, ``epsilon``), never a command-line
flag. An error about one parameter carries its name in ``param``; the CLI then writes the flag
in its place (``levels must be ...`` becomes ``--levels must be ...``), so each front end
speaks its own language about the same check.
"""

from __future__ import annotations

#: how a message that withholds the data owner's private detail (exact counts, raw values and
#: their lines) says where to get it, in Python's words (:func:`dpkit.set_verbosity`); a front
#: end writes its own switch in its place (the command line: ``-v``)
DETAIL_HINT = " (dpkit.set_verbosity(True) shows the detail)"


class DpkitError(Exception):
    """An error caused by the user's input or request; never a bug.

    ``param``: the keyword argument (in snake_case, as the library spells it) the message is
    about, when it is about one; the message then starts with that name.
    """

    exit_code = 1

    def __init__(self, message: str = "", *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class DpkitUsageError(DpkitError, ValueError):
    """A parameter (a flag, an option, an argument) is wrong or missing (also a ValueError)."""

    exit_code = 2


class ParameterTypeError(DpkitUsageError, TypeError):
    """A parameter of the wrong type, or a keyword the function does not take (a ValueError
    and a TypeError, as scikit-learn's ``InvalidParameterError``)."""


class DataError(DpkitError, ValueError):
    """The data file cannot be used as given (unreadable, a value outside the schema, ...)."""


class SchemaError(DpkitError, ValueError):
    """A schema/taxonomy file is malformed; the message names the file, line and key."""


class ExperimentError(DpkitUsageError):
    """A malformed experiment YAML of ``dpkit evaluate sweep`` (names file, line and column),
    or an experiment task that returns no metrics."""


class LedgerError(DpkitError):
    """The ledger refuses a run or a command (exit 1): over the cap, unregistered data, ..."""


class BudgetExceeded(LedgerError):
    """A spend would pass a budget; nothing more is spent. One class for both budgets:

    - a ledger's: a run or a reservation would pass a data set's cap (or its reservation's ε
      or δ) — refused before anything is read or run, and recorded in the ledger's refusals;
      raised with the ledger's message, ``BudgetExceeded(message)``;
    - a run's own: a step would spend more than the run's ε (or δ) budget
      (:class:`dpkit.privacy.Accountant`) — raised as ``BudgetExceeded(requested, remaining,
      step, what)``, whose message states requested and remaining, kept as ``requested`` and
      ``remaining``.

    ``BudgetExceededError`` is the same class under its older name (also importable from
    :mod:`dpkit.privacy`)."""

    def __init__(self, message: str | float = "", remaining: float | None = None, step: str = "",
                 what: str = "epsilon") -> None:
        self.requested: float | None = None
        self.remaining: float | None = None
        if remaining is None:
            super().__init__(str(message))
            return
        requested = float(message)
        where = f" for {step!r}" if step else ""
        super().__init__(
            f"privacy budget exceeded{where}: requested {what}={requested:.6g}, "
            f"remaining {what}={max(remaining, 0.0):.6g}"
        )
        self.requested = requested
        self.remaining = remaining


#: the older name of :class:`BudgetExceeded` (the accountant's), kept so that code catching it
#: keeps working
BudgetExceededError = BudgetExceeded


class DpkitWarning(UserWarning):
    """Something the user should know but that does not stop the run (e.g. values clipped).

    ``param``: as for :class:`DpkitError`, the parameter the advice is about, when it is about one.
    """

    def __init__(self, message: str = "", *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class PrivacyLeakWarning(DpkitWarning):
    """The run does not carry the full guarantee (data-derived bounds, a fixed seed...)."""


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by dpkit's caller of this function point at
    the first frame outside the dpkit package: the user's own line, however deep in dpkit the
    warning arose (a fixed ``stacklevel`` points into dpkit as soon as a call path changes)."""
    import contextlib
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    # a context manager used as a decorator (dpkit.console.owner_records) adds contextlib's frame
    wrapper = os.path.abspath(contextlib.__file__)
    # frame 2 is the caller of the function that calls us: stacklevel 2 of that function's warn
    level, frame = 2, sys._getframe(2)
    while frame is not None and (os.path.abspath(frame.f_code.co_filename).startswith(package)
                                 or os.path.abspath(frame.f_code.co_filename) == wrapper):
        frame, level = frame.f_back, level + 1
    return level


def warn(message: str | Warning, category: type[Warning] = DpkitWarning, *, param: str | None = None) -> None:
    """``warnings.warn`` pointing at the user's line (:func:`caller_stacklevel`): the file and line
    a notebook or a script shows are the caller's, not dpkit's. ``message``: text (made a
    ``category`` with ``param``) or a warning instance."""
    import warnings

    if not isinstance(message, Warning):
        message = category(message, param=param) if issubclass(category, DpkitWarning) else category(message)
    warnings.warn(message, stacklevel=caller_stacklevel())
