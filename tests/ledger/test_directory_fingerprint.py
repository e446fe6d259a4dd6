"""A directory of Parquet files is fingerprinted by its listing (docs/spark.md)."""

from __future__ import annotations

import os

import pytest

from dpkit.errors import DataError, DpkitUsageError
from dpkit.ledger import fingerprint


def test_listing_sizes_and_mtimes(tmp_path) -> None:
    d = tmp_path / "lake"
    (d / "part=1").mkdir(parents=True)
    (d / "part=1" / "a.parquet").write_bytes(b"abc")
    (d / "b.parquet").write_bytes(b"defg")
    (d / "_SUCCESS").write_bytes(b"")
    first = fingerprint(d)
    assert first == fingerprint(d)
    (d / ".b.parquet.crc").write_bytes(b"x")  # files Spark skips do not count
    assert fingerprint(d) == first
    os.utime(d / "b.parquet", ns=(1, 1))  # a rewrite (new mtime) is a new data set
    assert fingerprint(d) != first
    touched = fingerprint(d)
    (d / "c.parquet").write_bytes(b"")
    assert fingerprint(d) != touched


def test_empty_directory_and_uri(tmp_path) -> None:
    with pytest.raises(DataError, match="no data files"):
        fingerprint(tmp_path)
    with pytest.raises(DpkitUsageError, match="local file or directory"):
        fingerprint("s3a://bucket/table")
