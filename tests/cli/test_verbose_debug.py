"""-v and --debug are two flags (issue 38, finding 6), and a log names no record (finding 5).

``-v`` is the data owner's detail (exact counts, raw values, their lines) on a stderr that is
not a terminal; ``--debug`` is the traceback of an error (and implies -v). Before 0.5 ``-v``
meant both, so an owner who asked which value a schema does not cover got a traceback too.
Under pytest stderr is not a terminal: without a flag a message takes its log form.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data/adult/train.csv"
ADULT_SCHEMA = ROOT / "taxonomies/adult.yaml"


def dpkit(capsys, *args) -> tuple[int, str]:  # noqa: ANN001
    code = run(cli, [str(a) for a in args])
    return code, capsys.readouterr().err


@pytest.fixture
def uncovered(tmp_path) -> Path:  # noqa: ANN001
    lines = ADULT.read_text().splitlines()[:40]
    lines[5] = lines[5].replace("Bachelors", "Bachelor", 1)
    data = tmp_path / "d.csv"
    data.write_text("\n".join(lines) + "\n")
    return data


def test_v_shows_the_uncovered_value_without_a_traceback(capsys, uncovered) -> None:  # noqa: ANN001
    code, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, uncovered)
    assert code == 1 and "Bachelor'" not in err and "-v shows the detail" in err and "Traceback" not in err
    code, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, uncovered, "-v")
    assert code == 1 and "'Bachelor'" in err and "line 6" in err, err
    assert "Traceback" not in err, err
    assert len([ln for ln in err.splitlines() if ln.startswith("dpkit: error:")]) == 1


def test_debug_shows_the_traceback_and_the_detail(capsys, uncovered) -> None:  # noqa: ANN001
    code, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, uncovered, "--debug")
    assert code == 1 and "Traceback (most recent call last)" in err and "'Bachelor'" in err, err
    # the group accepts it too, before the command
    code, err = dpkit(capsys, "--debug", "taxonomy", "validate", ADULT_SCHEMA, uncovered)
    assert code == 1 and "Traceback (most recent call last)" in err


def test_an_internal_error_points_at_debug(capsys, monkeypatch) -> None:  # noqa: ANN001
    def boom(*a, **k):  # noqa: ANN002, ANN003, ANN202
        raise ZeroDivisionError("boom")  # a bug: not a DpkitError

    monkeypatch.setattr("dpkit.schema.parse.load_schema", boom)
    code, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, ADULT)
    assert code == 70 and "rerun with --debug for the traceback" in err and "Traceback" not in err, err
    code, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, ADULT, "-v")
    assert code == 70 and "Traceback" not in err, err
    code, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, ADULT, "--debug")
    assert code == 70 and "Traceback (most recent call last)" in err and "ZeroDivisionError" in err


def test_an_internal_error_is_one_line(capsys, monkeypatch) -> None:  # noqa: ANN001
    def boom(*a, **k):  # noqa: ANN002, ANN003, ANN202
        raise ValueError("first line\nsecond line")  # a library's own message of two lines

    monkeypatch.setattr("dpkit.schema.parse.load_schema", boom)
    code, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, ADULT)
    assert code == 70 and len(err.strip().splitlines()) == 1 and "first line\\nsecond line" in err, err


def test_debug_cannot_be_set_from_a_config_file(capsys, tmp_path) -> None:  # noqa: ANN001
    cfg = tmp_path / "c.yaml"
    cfg.write_text("debug: true\n")
    code, err = dpkit(capsys, "publish", ADULT, "--schema", ADULT_SCHEMA, "--target", "income", "--epsilon", "1",
                      "--config", cfg, "-o", tmp_path / "o.csv")
    assert code == 2 and "debug" in err


def test_a_ragged_row_in_a_log_names_no_line(capsys, tmp_path) -> None:  # noqa: ANN001
    # the reviewer's shortrow.csv:58: a log says what is wrong and what to do; -v gives the line
    lines = ADULT.read_text().splitlines()[:80]
    lines[57] = lines[57].rsplit(",", 1)[0]
    data = tmp_path / "shortrow.csv"
    data.write_text("\n".join(lines) + "\n")
    argv = ["publish", data, "--schema", ADULT_SCHEMA, "--target", "income", "--epsilon", "1", "--seed", "1",
            "-o", tmp_path / "o.csv"]
    code, err = dpkit(capsys, *argv)
    assert code == 1 and "shortrow.csv: a ragged row (every row needs 15 fields)" in err, err
    assert "shortrow.csv:58" not in err and "saw 14" not in err and "-v shows the detail" in err
    code, err = dpkit(capsys, *argv, "-v")
    assert code == 1 and "shortrow.csv:58: ragged row (expected 15 fields, saw 14)" in err and "Traceback" not in err
    assert not (tmp_path / "o.csv").exists()


def test_a_no_schema_drop_warning_quotes_no_learned_token(capsys, tmp_path) -> None:  # noqa: ANN001
    # issue 38: 0.4 printed the missing token it guessed from the exact data ('?' here); a
    # schema learned in the run has its drop warning name no token (a '?' frequent enough to be
    # learned as a token at ε = 5, and a rare class of the target dropped)
    import numpy as np
    import pandas as pd

    g = np.random.default_rng(3)
    n = 3000
    a = np.where(g.random(n) < 0.5, "p", "q").astype(object)
    a[:600] = "?"
    x = g.integers(0, 100, n).astype(str).astype(object)
    x[600:1200] = "?"
    y = np.where(g.random(n) < 0.5, "u", "v").astype(object)
    y[1200:1300] = "?"
    y[1300:1320] = "c"
    data = tmp_path / "t.csv"
    pd.DataFrame({"a": a, "x": x, "y": y}).to_csv(data, index=False)
    code, err = dpkit(capsys, "publish", data, "--target", "y", "--epsilon", "5", "--delta", "1e-6", "--seed", "1",
                      "-o", tmp_path / "r.csv")
    assert code == 0 and "t.csv: dropped rows with a missing value in the used columns" in err, err
    assert "missing: '?'" in (tmp_path / "r.schema.yaml").read_text()  # the token was learned
    assert "'?'" not in err
