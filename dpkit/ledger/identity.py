"""How the ledger identifies a data set: its content's fingerprint, and a label for the runs.

The fingerprint is the only thing a run reads before the ledger's check (a file's or a
directory's bytes, an in-memory frame's values; :mod:`dpkit.io.fingerprint`); the label
is what the ledger records as where a run's data came from. Fingerprints are private (a
hash of the private input is a membership oracle): they live only in the ledger file.
"""

from __future__ import annotations

import os
from typing import Any

from dpkit.errors import DpkitUsageError
from dpkit.io.fingerprint import file_digest


def fingerprint(data: Any) -> str:
    """The data set's fingerprint (the only thing read before the check): the sha256 of a
    file's bytes or of a directory's files; of a pandas DataFrame's or a numpy array's values,
    column names and types; of a Spark DataFrame's content (dpkit/io/fingerprint.py)."""
    from dpkit.io.fingerprint import in_memory, input_digest, is_spark

    if in_memory(data) or is_spark(data):
        return input_digest(data)
    if not isinstance(data, str | os.PathLike):
        raise DpkitUsageError(f"data must be a path, a pandas DataFrame, a numpy array or a Spark DataFrame, got "
                              f"{type(data).__name__}", param="data")
    path = data
    if str(path) == "-":
        raise DpkitUsageError(
            "ledger needs the data as a file, not stdin: the ledger identifies a data set by "
            "its bytes before reading it", param="ledger"
        )
    if "://" in str(path):
        raise DpkitUsageError(
            f"ledger needs the data as a local file or directory, not the URI {path}: the ledger "
            "identifies a data set by its bytes (a file's or a directory's) before reading it"
        )
    return file_digest(path)


def _label(data: Any) -> str:
    """How the ledger records where a run's data came from: a path, or what kind of object."""
    if isinstance(data, str | os.PathLike):
        return os.path.realpath(data)
    return f"<{type(data).__module__.split('.')[0]} {type(data).__name__}>"
