"""The delimiter-sniffing warning (issue 23): once per file per run, never under -q — and only
when the sniff was a choice (issue 43: a ';' file warned in every command; when no other
delimiter fits, the file is read silently)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def semi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("semi")
    for name in ("train", "test"):
        text = (REPO / "sample_data" / "adult" / f"{name}.csv").read_text().splitlines()[:3000]
        # a last column whose values hold one ',' (as its name does): ',' would also split every
        # line into equal widths, so the sniff is a choice and says so
        lines = [line.replace(",", ";") + (";note,x" if i == 0 else ";a,b") for i, line in enumerate(text)]
        (d / f"{name}.csv").write_text("\n".join(lines) + "\n")
        (d / f"{name}-plain.csv").write_text("\n".join(line.replace(",", ";") for line in text) + "\n")
    return d


def _run(*argv: str) -> str:
    res = subprocess.run([sys.executable, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    return res.stderr


@pytest.mark.parametrize("quiet", [False, True])
def test_once_per_file_and_silent_under_q(semi: Path, quiet: bool) -> None:
    q = ["-q"] if quiet else []
    err = _run(*q, "publish", str(semi / "train.csv"), "--schema", "taxonomies/adult.yaml", "--epsilon", "1",
               "-o", str(semi / f"r{quiet}.csv"))
    assert err.count("sniffed") == (0 if quiet else 1)
    err = _run(*q, "evaluate", "classify", "--train", str(semi / "train.csv"), "--test", str(semi / "test.csv"),
               "--target", "income")
    assert err.count("sniffed") == (0 if quiet else 2)  # two files, one line each
    assert (err.count("train.csv: fields") == err.count("test.csv: fields")) and err.count("train.csv: fields") <= 1


def test_a_file_only_one_delimiter_fits_is_read_silently(semi: Path) -> None:
    err = _run("publish", str(semi / "train-plain.csv"), "--schema", "taxonomies/adult.yaml", "--epsilon", "1",
               "-o", str(semi / "plain.csv"))
    assert "sniffed" not in err and "separated by" not in err
    err = _run("evaluate", "classify", "--train", str(semi / "train-plain.csv"), "--test", str(semi / "test-plain.csv"),
               "--target", "income")
    assert "sniffed" not in err
    err = _run("-v", "publish", str(semi / "train-plain.csv"), "--schema", "taxonomies/adult.yaml", "--epsilon", "1",
               "-o", str(semi / "plain.csv"))
    assert err.count("separated by ';' (sniffed; pass --delimiter to choose)") == 1, err  # -v: named once


def test_the_choice_names_the_other_delimiter(semi: Path) -> None:
    import warnings

    from dpkit.io.source import ReadOptions, resolve, sniff_candidates

    assert sniff_candidates("id;amount,eur;note\n1;2,5;x\n") == [";", ","]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert resolve(ReadOptions(str(semi / "train.csv"), delimiter=None)).delimiter == ";"
        assert resolve(ReadOptions(str(semi / "train-plain.csv"), delimiter=None)).delimiter == ";"
    (msg,) = [str(w.message) for w in caught]
    assert "separated by ';' (sniffed; ',' would also fit" in msg
