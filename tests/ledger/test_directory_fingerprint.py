"""A directory of Parquet or CSV files is fingerprinted by its content (docs/spark.md): every
data file's relative name and bytes. The listing alone (names, sizes, mtimes) gave two
neighbouring directories the same run key (issue 38 finding 2)."""

from __future__ import annotations

import os

import pytest

from dpkit.errors import DataError, DpkitUsageError
from dpkit.ledger import fingerprint
from dpkit.run import PrivateRun

KEY = "0x5d1c8f0b6e3a47c29b8e1f4a7d2c6b90"


def _lake(root, first_row: str):
    """A CSV directory of two part files; ``first_row`` is the first record of part 0."""
    (root / "part=0").mkdir(parents=True)
    (root / "part=0" / "a.csv").write_text(f"age,sex\n{first_row}\n40,F\n")
    (root / "b.csv").write_text("age,sex\n50,M\n")
    (root / "_SUCCESS").write_bytes(b"")
    return root


def _same_listing(a, b) -> None:
    """Give every file of ``b`` the mtime of its twin in ``a`` (a copy that keeps times)."""
    for rel in ("part=0/a.csv", "b.csv"):
        st = os.stat(a / rel)
        os.utime(b / rel, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_one_record_changed_with_the_same_listing_is_another_fingerprint(tmp_path) -> None:
    one = _lake(tmp_path / "one", "30,M")
    two = _lake(tmp_path / "two", "30,F")  # a same-length value swap: one record differs
    _same_listing(one, two)
    assert fingerprint(one) != fingerprint(two)


def test_a_secret_key_draws_other_noise_on_a_neighbouring_directory(tmp_path) -> None:
    """At the key level: the run's ChaCha20 stream is derived from the digest."""
    one = _lake(tmp_path / "one", "30,M")
    two = _lake(tmp_path / "two", "30,F")
    _same_listing(one, two)

    def stream(data) -> list[int]:
        run = PrivateRun("publish", "maxgddp", 1.0, KEY, inputs=[str(data)], outputs=[])
        return run.rng.integers(0, 2**62, size=4).tolist()

    assert stream(one) == stream(one)  # reproducible on the same bytes
    assert stream(one) != stream(two)


def test_content_not_times_names_count(tmp_path) -> None:
    d = _lake(tmp_path / "lake", "30,M")
    first = fingerprint(d)
    assert first == fingerprint(d)
    (d / ".b.csv.crc").write_bytes(b"x")  # files Spark skips do not count
    assert fingerprint(d) == first
    os.utime(d / "b.csv", ns=(1, 1))  # same bytes, another mtime: the same data
    assert fingerprint(d) == first
    (d / "b.csv").rename(d / "c.csv")  # a file's name is part of the content
    assert fingerprint(d) != first
    renamed = fingerprint(d)
    (d / "d.csv").write_bytes(b"")
    assert fingerprint(d) != renamed


def test_empty_directory_and_uri(tmp_path) -> None:
    with pytest.raises(DataError, match="no data files"):
        fingerprint(tmp_path)
    with pytest.raises(DpkitUsageError, match="local file or directory"):
        fingerprint("s3a://bucket/table")


def test_an_unreadable_subdirectory_is_an_error(tmp_path, monkeypatch) -> None:
    """os.walk skips a directory it cannot list unless told otherwise: its files would silently
    be left out of the digest. (scandir refused here, as chmod 0 would for a non-root user.)"""
    d = _lake(tmp_path / "lake", "30,M")
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "part=0":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(DataError, match="cannot read: Permission denied"):
        fingerprint(d)


def test_budget_init_registers_a_directory(tmp_path) -> None:
    """docs/spark.md's `dpkit budget init DIR`: refused as "a directory" by 0.4's command line."""
    import subprocess
    import sys

    from dpkit.ledger import Ledger

    d = _lake(tmp_path / "lake", "30,M")
    led = tmp_path / "l.db"
    done = subprocess.run([sys.executable, "-m", "dpkit", "budget", "init", str(d), "--name", "lake", "--cap", "1",
                           "--ledger", str(led)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert Ledger(led).check(data_path=d, epsilon=0.5) == fingerprint(d)
