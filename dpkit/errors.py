"""The exceptions and warnings dpkit raises for the user.

Every error a user can cause is a :class:`DpkitError`; the CLI turns it into one line on
stderr and its ``exit_code`` (1 a runtime refusal or data error, 2 a usage error).
"""

from __future__ import annotations


class DpkitError(Exception):
    """An error caused by the user's input or request; never a bug."""

    exit_code = 1


class DpkitUsageError(DpkitError):
    """The command line itself is wrong (a flag value, a missing option)."""

    exit_code = 2


class DataError(DpkitError):
    """The data file cannot be used as given (unreadable, a value outside the schema, ...)."""


class SchemaError(DpkitError):
    """A schema/taxonomy file is malformed; the message names the file, line and key."""


class DpkitWarning(UserWarning):
    """Something the user should know but that does not stop the run (e.g. values clipped)."""


class PrivacyLeakWarning(DpkitWarning):
    """The run does not carry the full guarantee (data-derived bounds, a fixed seed...)."""
