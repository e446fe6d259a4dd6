"""A header with one name fewer than its rows' fields — R's write.table with row names — is read
as pandas reads it: the first field of each row is its row name, left out, with a one-line
notice (issue 43 papercut: it was refused as ragged). A row of another width is still ragged."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run
from dpkit.errors import DataError
from dpkit.io.source import ReadOptions
from dpkit.io.table import read_table

ADULT = Path(__file__).resolve().parents[2] / "sample_data" / "adult" / "train.csv"
SCHEMA = Path(__file__).resolve().parents[2] / "taxonomies" / "adult.yaml"


def _r_style(src: Path, dst: Path, n: int = 2000, quoted: bool = False) -> None:
    lines = src.read_text().splitlines()[: n + 1]
    name = (lambda i: f'"{i}"') if quoted else str
    dst.write_text("\n".join([lines[0]] + [f"{name(i)},{ln}" for i, ln in enumerate(lines[1:], start=1)]) + "\n")


@pytest.mark.parametrize("quoted", [False, True])
def test_row_names_are_read_as_pandas_reads_them(tmp_path: Path, quoted: bool) -> None:
    data = tmp_path / "r.csv"
    _r_style(ADULT, data, 50, quoted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = read_table(ReadOptions(str(data)))
    expected = pd.read_csv(ADULT, dtype=str, keep_default_na=False, nrows=50)
    assert list(df.columns) == list(expected.columns)
    assert df.astype(str).to_numpy().tolist() == expected.astype(str).apply(lambda c: c.str.strip()).to_numpy().tolist()
    assert df.index.tolist() == list(range(50))
    (msg,) = [str(w.message) for w in caught if "row name" in str(w.message)]
    assert "header names 15 columns and every row holds 16 fields" in msg


def test_publish_reads_an_r_table(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    data = tmp_path / "r.csv"
    _r_style(ADULT, data)
    code = run(cli, ["publish", str(data), "--schema", str(SCHEMA), "--epsilon", "1", "-o", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert sum("read as its row name" in line for line in err.splitlines()) == 1


def test_a_row_of_another_width_is_still_ragged(tmp_path: Path) -> None:
    data = tmp_path / "r.csv"
    _r_style(ADULT, data, 20)
    lines = data.read_text().splitlines()
    lines[5] = lines[5].split(",", 1)[1]  # this row has no row name
    data.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="ragged row"):
        read_table(ReadOptions(str(data)))
