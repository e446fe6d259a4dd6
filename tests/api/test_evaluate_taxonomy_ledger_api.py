"""The library calls behind `dpkit evaluate kanon|classify`, `taxonomy infer --epsilon` and
`dpkit budget` (issue 21: the CLI only parses and prints)."""

import json
from pathlib import Path

import pandas as pd
import pytest

from dpkit.api.evaluate import evaluate_classifier, evaluate_kanon
from dpkit.api.taxonomy import learn_schema
from dpkit.errors import DataError, DpkitUsageError

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "sample_data" / "iris" / "iris.csv"


def _table() -> pd.DataFrame:
    return pd.DataFrame({"a": ["x", "x", "y", "y", "y", "z"], "s": ["p", "q", "p", "p", "q", "q"],
                         "t": ["0", "1", "0", "1", "0", "1"]})


def test_evaluate_kanon_counts_classes_and_reads_k_from_a_report(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    _table().to_csv(data, index=False)
    got = evaluate_kanon(str(data), quasi_identifiers=["a"], k=2, sensitive="s", l=2)
    d = got.to_dict()
    assert d["k"] == 1 and d["average_class_size"] == 2.0
    assert not got.check.satisfied and any("average class size: 2" in line for line in got.lines())
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"dpkit_version": "0.4.0", "privacy": {"model": "k-anonymity", "k": 3},
                                  "release": {"selected": ["a"]}, "parameters": {}}))
    assert evaluate_kanon(str(data), from_report=str(report)).check.k_required == 3
    report.write_text(json.dumps({"dpkit_version": "0.4.0", "privacy": {"model": "differential privacy"}}))
    with pytest.raises(DataError, match="not a kanon-select report"):
        evaluate_kanon(str(data), from_report=str(report))


@pytest.mark.parametrize(("kwargs", "param"), [
    ({"k": 0}, "k"), ({"l": 0}, "l"), ({"l": 2}, "sensitive"), ({"quasi_identifiers": None}, "quasi_identifiers"),
])
def test_evaluate_kanon_refuses_bad_parameters_before_reading(kwargs: dict, param: str) -> None:
    args = {"quasi_identifiers": ["a"], **kwargs}
    with pytest.raises(DpkitUsageError) as err:
        evaluate_kanon("no-such-file.csv", **args)
    assert err.value.param == param


def test_evaluate_classifier_takes_dataframes_and_prints_tables_and_lines() -> None:
    df = pd.read_csv(IRIS)
    result = evaluate_classifier(df, target="species", train=df, model="tree")
    assert result["accuracy"] > 0.9 and len(result["labels"]) == 3
    with pytest.raises(DpkitUsageError, match="exactly one of"):
        evaluate_classifier(df, target="species", train=df, predictions=df)
    with pytest.raises(DpkitUsageError) as err:
        evaluate_classifier(df, target="species", train=df, baseline=df)
    assert err.value.param == "baseline_test"


def test_learn_schema_writes_schema_and_report_beside_it(tmp_path: Path) -> None:
    out = tmp_path / "iris.learned.yaml"
    learned, report = learn_schema(str(IRIS), output=str(out), epsilon=2, delta=1e-6, target="species",
                                   bounds={"sepal_length_cm": "4:8"}, random_state=7)
    assert report == str(tmp_path / "iris.learned.report.json") and Path(report).is_file() and out.is_file()
    assert learned.report["privacy"]["epsilon_spent"] <= 2
    assert learned.summary.startswith("5 columns (") and learned.summary.endswith("target species")
    with pytest.raises(DpkitUsageError) as err:
        learn_schema(str(IRIS), output="-", epsilon=1, delta=1e-6)
    assert err.value.param == "report"
    with pytest.raises(DpkitUsageError) as err:
        learn_schema(str(IRIS), output=str(out), epsilon=1, delta=1e-6, bounds={"sepal_length_cm": "4-8"})
    assert err.value.param == "bounds"
    with pytest.raises(DpkitUsageError) as err:
        learn_schema(str(IRIS), output=str(out), epsilon=1)
    assert err.value.param == "delta"


def test_register_dataset_checks_before_it_creates_the_ledger(tmp_path: Path) -> None:
    import dpkit

    book = tmp_path / "ledger.db"
    with pytest.raises(DataError, match="file not found"):
        dpkit.register_dataset(book, tmp_path / "missing.csv", "x", 1)
    with pytest.raises(DpkitUsageError) as err:
        dpkit.register_dataset(book, IRIS, "iris")
    assert err.value.param == "cap" and not book.exists()
    status = dpkit.register_dataset(book, IRIS, "iris", 2)
    assert status.cap == 2 and status.remaining == 2 and book.exists()
    assert dpkit.budget_events(book) == []
    assert dpkit.check_budget(book, 1.5, "iris") == (True, 2.0, 1.5)
    assert dpkit.check_budget(book, 3, "iris")[0] is False
    with pytest.raises(DpkitUsageError) as err:
        dpkit.run_in_reservation(book, 1, ["true"], name="iris", delta=2)
    assert err.value.param == "delta"


def test_check_kanon_names_what_fails_and_kanon_select_sums_up(tmp_path: Path) -> None:
    import warnings

    import dpkit

    data = tmp_path / "d.csv"
    _table().to_csv(data, index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = dpkit.check_kanon(str(data), ["a"], k=9, sensitive="s", l=3)
    assert got.failure() == f"{data}: not 9-anonymous (smallest class 1) and not 3-diverse (ℓ = 1)"
    assert any("larger than the table" in str(w.message) for w in caught)
    assert dpkit.check_kanon(str(data), ["a"], k=1).failure() is None
    with pytest.raises(DpkitUsageError) as err:
        dpkit.check_kanon(str(data), ["a"], l=0)
    assert err.value.param == "l"
    table = dpkit.kanon_select(_table(), k=2, target="t", ranker="hamming")
    assert table.summary().startswith(f"kept {len(table.selected)} of 2 quasi-identifiers")
    assert table.summary().endswith("≥ k=2")
    with pytest.raises(DpkitUsageError) as err:
        dpkit.kanon_select(_table(), k=2, target="t", generalize=True, schema=None)
    assert err.value.param == "schema"
    with pytest.raises(DpkitUsageError) as err:
        dpkit.kanon_select(_table(), k=2, target="t", max_suppression=1.5)
    assert err.value.param == "max_suppression"
