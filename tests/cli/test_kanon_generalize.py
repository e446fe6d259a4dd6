"""`kanon-select --generalize`, `generalize --cut` on its report, `evaluate kanon --test`, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data" / "adult" / "train.csv"
ADULT_TEST = ROOT / "sample_data" / "adult" / "test.csv"
ADULT_SCHEMA = str(ROOT / "taxonomies" / "adult.yaml")


def dpkit(capsys, *args) -> tuple[int, str, str]:
    code = run(cli, [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def adult3k(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("kgen")
    train, test = d / "train.csv", d / "test.csv"
    train.write_text("\n".join(ADULT.read_text(encoding="utf-8").splitlines()[:3001]) + "\n", encoding="utf-8")
    test.write_text("\n".join(ADULT_TEST.read_text(encoding="utf-8").splitlines()[:1001]) + "\n", encoding="utf-8")
    return train, test


def test_generalize_end_to_end(capsys, tmp_path: Path, adult3k, pycanon) -> None:
    train, test = adult3k
    out = tmp_path / "g.csv"
    code, stdout, err = dpkit(capsys, "kanon-select", train, "--schema", ADULT_SCHEMA, "-k", "10",
                              "--generalize", "-o", out)
    assert code == 0, err
    assert stdout == "" and "suppressed" in err
    rep = json.loads((tmp_path / "g.report.json").read_text())
    assert rep["privacy"]["model"] == "k-anonymity" and rep["privacy"]["k"] == 10
    assert rep["algorithm"] == "xgb-ka+flash"
    rel = rep["release"]
    qis = rel["selected"]
    df = _read(out)
    assert list(df.columns) == [c for c in _read(train).columns if c in set(qis) | {"income"}]
    assert pycanon.k_anonymity(df, qis) >= 10
    assert len(df) == rel["records"]["output"] == rel["records"]["input"] - rel["suppression"]["records"]
    assert set(rel["cut"]) | set(rel["as_written"]) == set(qis)
    assert {c: v["level"] for c, v in rel["generalization"]["levels"].items()}.keys() == set(rel["candidates"])

    # generalize maps a test split onto the same levels: every test label is a training label's kind
    mapped = tmp_path / "t.csv"
    code, _, err = dpkit(capsys, "generalize", test, "--cut", tmp_path / "g.report.json", "-o", mapped)
    assert code == 0, err
    t = _read(mapped)
    assert list(t.columns) == list(df.columns)
    assert len(t) == len(_read(test))  # every row comes out (issue 36 item 3): '?' is '(missing)'
    for c in rel["cut"]:
        assert set(t[c]) <= set(_labels(rel["cut"][c])) | {"(missing)"}, c

    # evaluate kanon: k, suppression, average class size and the classifiers
    code, stdout, err = dpkit(capsys, "evaluate", "kanon", out, "--from-report", tmp_path / "g.report.json",
                              "--test", test, "--json")
    assert code == 0, err
    ev = json.loads(stdout)
    assert ev["k"] >= 10 and ev["k_anonymous"] is True
    assert ev["suppression"]["records"] == rel["suppression"]["records"]
    assert ev["average_class_size"] == pytest.approx(len(df) / ev["classes"])
    for model in ("svm", "entropy_tree"):
        assert 0.7 <= ev["classifier"][model]["accuracy"] <= 1
        assert 0 <= ev["classifier"][model]["precision"] <= 1
    assert ev["classifier"]["positive"] == ">50K"
    code, stdout, _ = dpkit(capsys, "evaluate", "kanon", out, "--from-report", tmp_path / "g.report.json",
                            "--test", test)
    assert code == 0 and "entropy_tree" in stdout and "suppressed:" in stdout


def _labels(cut: list) -> list[str]:
    """The labels a publish-style cut produces (node names, or [lo,hi) intervals)."""
    if isinstance(cut[0], str):
        return cut
    return [f"[{a},{b}{']' if i == len(cut) - 1 else ')'}" for i, (a, b) in enumerate(cut)]


def test_generalize_sensitive_l(capsys, tmp_path: Path, adult3k, pycanon) -> None:
    train, _ = adult3k
    out = tmp_path / "g.csv"
    code, _, err = dpkit(capsys, "kanon-select", train, "--schema", ADULT_SCHEMA, "-k", "5", "--generalize",
                         "--sensitive", "occupation", "-l", "3", "--max-suppression", "0.05", "-o", out)
    assert code == 0, err
    rel = json.loads((tmp_path / "g.report.json").read_text())["release"]
    df = _read(out)
    assert pycanon.k_anonymity(df, rel["selected"]) >= 5
    assert pycanon.l_diversity(df, rel["selected"], ["occupation"]) >= 3
    assert rel["l_diversity"]["l"] >= 3
    assert rel["suppression"]["records"] <= 0.05 * rel["records"]["input"]


def test_selection_report_still_maps_for_evaluate(capsys, tmp_path: Path, adult3k) -> None:
    train, test = adult3k
    out = tmp_path / "s.csv"
    assert dpkit(capsys, "kanon-select", train, "--schema", ADULT_SCHEMA, "-k", "10", "-o", out)[0] == 0
    code, stdout, err = dpkit(capsys, "evaluate", "kanon", out, "--from-report", tmp_path / "s.report.json",
                              "--test", test, "--json")
    assert code == 0, err
    assert "svm" in json.loads(stdout)["classifier"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--generalize"], 2, "--generalize needs --schema"),
        (["--generalize", "--schema", ADULT_SCHEMA, "--max-suppression", "1.5"], 2, "--max-suppression must be"),
        (["--generalize", "--schema", ADULT_SCHEMA, "--check-only", "--qi", "age"], 2, "cannot be combined"),
    ],
)
def test_generalize_usage_errors(capsys, tmp_path: Path, adult3k, args, code, message) -> None:
    train, _ = adult3k
    out = tmp_path / "x.csv"
    got, _, err = dpkit(capsys, "kanon-select", train, "--target", "income", "-k", "5", *args,
                        *([] if "--check-only" in args else ["-o", out]))
    assert got == code
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_evaluate_test_needs_target(capsys, tmp_path: Path, adult3k) -> None:
    train, test = adult3k
    code, _, err = dpkit(capsys, "evaluate", "kanon", train, "--qi", "age", "--test", test)
    assert code == 2 and "--target is required with a test split" in err
