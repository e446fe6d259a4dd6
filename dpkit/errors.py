"""The exceptions and warnings dpkit raises for the user.

Every error a user can cause is a :class:`DpkitError`; the CLI turns it into one line on
stderr and its ``exit_code`` (1 a runtime refusal or data error, 2 a usage error).

Library messages name the library's parameters (``levels``, ``epsilon``), never a command-line
flag. An error about one parameter carries its name in ``param``; the CLI then writes the flag
in its place (``levels must be ...`` becomes ``--levels must be ...``), so each front end
speaks its own language about the same check.
"""

from __future__ import annotations


class DpkitError(Exception):
    """An error caused by the user's input or request; never a bug.

    ``param``: the keyword argument (in snake_case, as the library spells it) the message is
    about, when it is about one; the message then starts with that name.
    """

    exit_code = 1

    def __init__(self, message: str = "", *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class DpkitUsageError(DpkitError):
    """A parameter (a flag, an option, an argument) is wrong or missing."""

    exit_code = 2


class DataError(DpkitError):
    """The data file cannot be used as given (unreadable, a value outside the schema, ...)."""


class SchemaError(DpkitError):
    """A schema/taxonomy file is malformed; the message names the file, line and key."""


class DpkitWarning(UserWarning):
    """Something the user should know but that does not stop the run (e.g. values clipped).

    ``param``: as for :class:`DpkitError`, the parameter the advice is about, when it is about one.
    """

    def __init__(self, message: str = "", *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class PrivacyLeakWarning(DpkitWarning):
    """The run does not carry the full guarantee (data-derived bounds, a fixed seed...)."""
