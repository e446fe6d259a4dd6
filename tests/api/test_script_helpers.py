"""The public helpers the command line is built from (issue 37 item 9: the CLI imports only the
public API): a script around the library can use them too (docs/library.md, "Around the calls")."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import dpkit

ROOT = Path(__file__).resolve().parents[2]
IRIS = str(ROOT / "sample_data/iris/iris.csv")
IRIS_SCHEMA = str(ROOT / "taxonomies/iris.yaml")


def test_private_runs_lists_each_run_and_how_it_ended() -> None:
    before = len(dpkit.private_runs())
    dpkit.publish(IRIS, schema=IRIS_SCHEMA, target="species", epsilon=1.0, random_state=1, levels=2)
    runs = dpkit.private_runs()[before:]
    assert [(r.command, r.error, r.noise_drawn) for r in runs] == [("publish", None, True)]


def test_check_output_paths_refuses_overwriting_an_input(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    with pytest.raises(ValueError, match="is the input file"):
        dpkit.check_output_paths([data], [data])
    with pytest.raises(dpkit.DataError, match="does not exist"):
        dpkit.check_output_paths([data], [tmp_path / "missing" / "out.csv"])
    dpkit.check_output_paths([data, None], [tmp_path / "out.csv", None])  # fine


def test_sniffed_read_options_name_the_delimiter(tmp_path: Path) -> None:
    data = tmp_path / "semi.csv"
    data.write_text("a;b;c,d\n1;2;3,5\n3;4;5,5\n")  # ',' fits too: the sniff is a choice, and says so
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        options = dpkit.ReadOptions(str(data), delimiter=None).sniffed()
    assert options.delimiter == ";" and options.path == str(data)
    assert any("';'" in str(w.message) for w in caught)
    assert options.sniffed() is options  # already known: nothing read, nothing said again
