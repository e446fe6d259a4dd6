"""``dpkit.publish`` and ``dpkit.generalize`` as a notebook user calls them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dpkit

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
ADULT_TEST = REPO / "sample_data" / "adult" / "test.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
KEY = "0xb2a95fa64d14dd085f47e420ccf8040e"


@pytest.fixture(scope="module")
def release() -> dpkit.Release:
    return dpkit.publish(ADULT, schema=SCHEMA, epsilon=1.0, random_state=KEY)


def test_import_is_light() -> None:
    code = "import sys, dpkit; assert dpkit.__version__; print('numpy' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_release_holds_table_and_report(release: dpkit.Release) -> None:
    rep = release.report
    assert rep["command"] == "publish" and rep["privacy"]["model"] == "epsilon-dp"
    assert rep["privacy"]["epsilon_spent"] <= 1.0 + 1e-9
    assert rep["parameters"]["schema"] == str(SCHEMA) and rep["parameters"]["target"] == "income"
    table = release.table
    assert list(table.columns) == rep["release"]["columns"]
    assert len(table) == rep["release"]["released_records"]
    assert release.counts["count"].sum() == len(table)
    assert set(release.cut) == set(rep["release"]["cut"])


def test_same_key_same_release_and_written_files_match_table(release: dpkit.Release, tmp_path: Path) -> None:
    again = dpkit.publish(str(ADULT), schema=str(SCHEMA), epsilon=1, random_state=KEY)
    assert again.report == release.report
    release.write(tmp_path / "r.csv")
    release.write_report(tmp_path / "r.report.json")
    back = pd.read_csv(tmp_path / "r.csv", dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(back, release.table.astype(str), check_dtype=False)
    assert json.loads((tmp_path / "r.report.json").read_text()) == json.loads(json.dumps(release.report))


def test_dataframe_input_is_read_as_the_csv_is() -> None:
    # a plain seed draws the same stream whatever the input; a key would not: a run's key is
    # derived from the input's fingerprint, and a file's bytes are not a DataFrame's values
    release = dpkit.publish(ADULT, schema=SCHEMA, epsilon=1.0, random_state=7)
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False)
    from_frame = dpkit.publish(df, schema=dpkit.load_schema(SCHEMA), epsilon=1.0, random_state=7)
    assert from_frame.report["release"] == release.report["release"]
    # typed columns (ints, NaN) are read as their text: the same release
    typed = pd.read_csv(ADULT, na_values=["?"], skipinitialspace=True)
    typed_release = dpkit.publish(typed.fillna("?"), schema=SCHEMA, epsilon=1.0, random_state=7)
    assert typed_release.report["release"]["cut"] == release.report["release"]["cut"]


def test_generalize_from_release_report_dict_or_path(release: dpkit.Release, tmp_path: Path) -> None:
    a = release.generalize(ADULT_TEST)
    b = dpkit.generalize(ADULT_TEST, release.report, schema=SCHEMA)
    release.write_report(tmp_path / "r.json")
    c = dpkit.generalize(str(ADULT_TEST), tmp_path / "r.json", schema=SCHEMA)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    assert list(a.columns) == release.report["release"]["columns"]


@pytest.mark.filterwarnings("ignore::dpkit.DpkitWarning")
def test_a_release_without_schema_generalizes_from_its_report_alone(tmp_path: Path, monkeypatch) -> None:
    """The schema learned in the run is written beside the report that names it (issue 37):
    the saved report generalizes new data with no schema passed, from any directory."""
    train = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(3000)
    test = pd.read_csv(ADULT_TEST, dtype=str, keep_default_na=False).head(200)
    release = dpkit.publish(train, target="income", epsilon=1.0, delta=1e-6, random_state=KEY)
    assert release.report["parameters"]["schema"] == "<learned>"
    release.write(tmp_path / "out.csv")
    release.write_report(tmp_path / "r.json")
    assert (tmp_path / "r.schema.yaml").read_text().strip()
    named = json.loads((tmp_path / "r.json").read_text())["parameters"]
    assert named["schema"] == str(tmp_path / "r.schema.yaml")
    monkeypatch.chdir(REPO)
    pd.testing.assert_frame_equal(dpkit.generalize(test, tmp_path / "r.json"), release.generalize(test))
    # publish(report=) without an output does the same, inside the run
    monkeypatch.chdir(tmp_path)
    dpkit.publish(train, target="income", epsilon=1.0, delta=1e-6, random_state=KEY, report="r2.json")
    assert json.loads(Path("r2.json").read_text())["parameters"]["schema"] == "r2.schema.yaml"
    pd.testing.assert_frame_equal(dpkit.generalize(test, "r2.json"), release.generalize(test))


def test_options_have_one_default_and_bad_ones_name_the_parameter() -> None:
    from dpkit.algorithms.publish.maxgddp import MaxGDDP

    with pytest.raises(dpkit.DpkitUsageError, match="^levels must be") as info:
        dpkit.publish(ADULT, schema=SCHEMA, epsilon=1.0, levels=0)
    assert info.value.param == "levels"
    with pytest.raises(TypeError, match="unexpected keyword argument 'level'; did you mean 'levels'") as info:
        dpkit.publish(ADULT, schema=SCHEMA, epsilon=1.0, level=3)
    assert info.value.param == "level"
    with pytest.raises(dpkit.DpkitUsageError, match="^epsilon must be"):
        dpkit.publish(ADULT, schema=SCHEMA, epsilon="lots")
    # the configs/publish.yaml shipped as an example holds exactly the estimator's defaults
    import inspect

    import yaml

    defaults = {k: v.default for k, v in inspect.signature(MaxGDDP.__init__).parameters.items()
                if v.default is not inspect.Parameter.empty}
    shipped = yaml.safe_load((REPO / "configs" / "publish.yaml").read_text())["publish"]
    for key, value in shipped.items():
        key = key.replace("-", "_")
        if key in defaults:
            assert defaults[key] == value, key


def test_errors_are_dpkit_errors() -> None:
    with pytest.raises(dpkit.DpkitError, match="not found"):
        dpkit.publish("nope.csv", schema=SCHEMA, epsilon=1.0)
    with pytest.raises(dpkit.DpkitError):
        dpkit.publish(ADULT, schema=SCHEMA, epsilon=1.0, target="age")  # numeric target


def test_every_public_name_resolves() -> None:
    assert sorted(dpkit.__all__) == sorted(["__version__", *dpkit._EXPORTS])
    for name in dpkit.__all__:
        assert getattr(dpkit, name) is not None
    with pytest.raises(AttributeError):
        dpkit.no_such_name  # noqa: B018
