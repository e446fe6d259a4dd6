"""Command-line contract details found by a user's audit (csvkit / sqlite-utils conventions):
one stdout output, --quiet, exit codes, one-line errors naming the right option."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "sample_data" / "iris" / "iris.csv"
IRIS_SCHEMA = ROOT / "taxonomies" / "iris.yaml"
S1 = ROOT / "sample_data" / "clustering" / "s1.csv"
BRACES = ROOT / "tests" / "data" / "fixtures" / "adult-fung2007-braces.txt"


def dpkit(capsys, *args: object) -> tuple[int, str, str]:
    code = run(cli, [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


STDOUT_TWICE = {
    "publish": ["publish", IRIS, "--schema", IRIS_SCHEMA, "--epsilon", "1", "--levels", "2"],
    "forest train": ["forest", "train", IRIS, "--schema", IRIS_SCHEMA, "--epsilon", "1", "--trees", "2"],
    "kanon-select": ["kanon-select", IRIS, "--target", "species", "-k", "5"],
}


@pytest.mark.parametrize("name", list(STDOUT_TWICE))
def test_data_and_report_cannot_both_go_to_stdout(capsys, name: str) -> None:
    # `-o - --report -` used to interleave the CSV/model and the JSON report on stdout
    code, out, err = dpkit(capsys, *STDOUT_TWICE[name], "-o", "-", "--report", "-")
    assert code == 2, err
    assert out == ""
    assert err.strip() == "dpkit: error: only one output can go to stdout ('-')"


def test_report_on_stdout_with_a_file_output_still_works(capsys, tmp_path: Path) -> None:
    out_csv = tmp_path / "rel.csv"
    code, out, err = dpkit(capsys, *STDOUT_TWICE["publish"], "-o", out_csv, "--report", "-")
    assert code == 0, err
    assert out.lstrip().startswith("{") and out_csv.exists()


def test_stdout_output_without_report_is_refused(capsys, tmp_path: Path) -> None:
    # errors.md row: stdout-needs-report (the report is never silently lost, even with -q)
    for extra in (["-o", "-"], [], ["-q"]):
        code, out, err = dpkit(capsys, *STDOUT_TWICE["publish"], "--seed", "1", *extra)
        assert code == 2, err
        assert out == "" and err.strip().endswith("give --report FILE")
    rep = tmp_path / "r.json"
    code, out, err = dpkit(capsys, *STDOUT_TWICE["publish"], "--seed", "1", "--report", rep, "-q")
    assert code == 0 and err == "" and rep.exists()
    assert out.startswith("sepal_length_cm,")


def test_budget_init_is_quiet_with_q(capsys, tmp_path: Path) -> None:
    ledger = tmp_path / "l.db"
    code, out, err = dpkit(capsys, "budget", "init", IRIS, "--name", "iris", "--cap", "2", "--ledger", ledger, "-q")
    assert code == 0, err
    assert out == "" and err == ""
    data2 = tmp_path / "iris2.csv"
    data2.write_text(IRIS.read_text() + "5.0,3.0,1.0,0.1,setosa\n")
    code, out, err = dpkit(capsys, "budget", "init", data2, "--name", "iris2", "--cap", "2", "--ledger", ledger)
    assert code == 0 and "registered" in err


@pytest.mark.parametrize("absent, args, code, message", [
    (True, ["--cap", "1"], 1, "nothere.csv: file not found"),
    (False, ["--cap", "0"], 2, "--cap must be a finite number > 0, got '0'"),
    (False, [], 2, "--cap is required to register a new data set"),
])
def test_refused_budget_init_creates_no_ledger(capsys, tmp_path: Path, absent, args, code, message) -> None:
    ledger = tmp_path / "new.db"
    data = tmp_path / "nothere.csv" if absent else IRIS
    got, out, err = dpkit(capsys, "budget", "init", data, "--name", "x", "--ledger", ledger, *args)
    assert got == code, err
    assert err.strip().endswith(message) and len(err.strip().splitlines()) == 1
    assert not ledger.exists()


def test_check_only_note_is_silenced_by_quiet(capsys) -> None:
    code, out, err = dpkit(capsys, "kanon-select", "--check-only", IRIS, "--qi", "species", "-k", "500", "-q")
    assert code == 1
    assert "note" not in err
    assert err.strip() == f"dpkit: error: {IRIS}: not 500-anonymous (smallest class 50)"


def test_kanon_select_takes_the_target_from_the_schema(capsys, tmp_path: Path) -> None:
    # as publish and forest train do: --target defaults to the schema's target
    out = tmp_path / "k.csv"
    code, _, err = dpkit(capsys, "kanon-select", IRIS, "--schema", IRIS_SCHEMA, "-k", "2", "-o", out, "-q")
    assert code == 0, err
    assert "species" in pd.read_csv(out).columns
    import json

    assert json.loads((tmp_path / "k.report.json").read_text())["parameters"]["target"] == "species"


def test_kanon_select_seed_must_be_non_negative(capsys, tmp_path: Path) -> None:
    code, _, err = dpkit(capsys, "kanon-select", IRIS, "--target", "species", "-k", "2",
                         "-o", tmp_path / "k.csv", "--seed", "-1")
    assert code == 2 and "--seed" in err
    assert not (tmp_path / "k.csv").exists()


def test_evaluate_cluster_reads_dpkit_centroids_with_a_tsv_input(capsys, tmp_path: Path) -> None:
    # --delimiter describes DATA; the centroids file is dpkit's own comma CSV
    tsv = tmp_path / "s1.tsv"
    pd.read_csv(S1).iloc[::10].to_csv(tsv, sep="\t", index=False)
    cents = tmp_path / "c.csv"
    code, _, err = dpkit(capsys, "cluster", S1, "--columns", "x,y", "-k", "3", "--epsilon", "1",
                         "--bounds", "0:1e6,0:1e6", "--seed", "1", "-o", cents, "-q")
    assert code == 0, err
    code, out, err = dpkit(capsys, "evaluate", "cluster", tsv, "--centroids", cents, "--compare", cents,
                           "--delimiter", "\t", "--no-reference", "--json")
    assert code == 0, err
    import json

    assert json.loads(out)["k"] == 3


def test_cluster_names_columns_not_a_schema_for_an_absent_column(capsys, tmp_path: Path) -> None:
    code, _, err = dpkit(capsys, "cluster", S1, "--columns", "x,z", "-k", "3", "--epsilon", "1",
                         "--bounds", "0:1,0:1", "-o", tmp_path / "c.csv")
    assert code == 1
    assert err.strip() == (f"dpkit: error: {S1}: column(s) 'z' to cluster on not found in the header (x, y, label) "
                           "(--columns)")
    assert not (tmp_path / "c.csv").exists()


def test_taxonomy_import_missing_source_is_a_data_error(capsys, tmp_path: Path) -> None:
    missing = tmp_path / "nothere.txt"
    code, out, err = dpkit(capsys, "taxonomy", "import", BRACES, missing, "--format", "diffgen", "-o", "-")
    assert code == 1 and out == ""
    assert err.strip() == f"dpkit: error: {missing}: file not found"


def test_evaluate_group_help_has_an_example(capsys) -> None:
    code, out, _ = dpkit(capsys, "evaluate", "--help")
    assert code == 0
    assert "dpkit evaluate classify" in out.split("Example", 1)[1]


@pytest.mark.parametrize("spelling", ["\\t", "tab"])
def test_delimiter_accepts_a_literal_tab_spelling(capsys, tmp_path: Path, spelling: str) -> None:
    # `--delimiter '\t'` (no $'...') used to be "must be one character"
    tsv = tmp_path / "iris.tsv"
    pd.read_csv(IRIS).to_csv(tsv, sep="\t", index=False)
    code, out, err = dpkit(capsys, "kanon-select", "--check-only", tsv, "--qi", "species", "-k", "5",
                           "--delimiter", spelling, "--json")
    assert code == 0, err
    import json

    assert json.loads(out)["records"] == 150
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"publish:\n  delimiter: {spelling if spelling == 'tab' else chr(34) + chr(92) + 't' + chr(34)}\n")
    code, _, err = dpkit(capsys, "publish", tsv, "--schema", IRIS_SCHEMA, "--epsilon", "1", "--levels", "2",
                         "--config", cfg, "-o", tmp_path / "rel.csv", "-q")
    assert code == 0, err


@pytest.mark.parametrize("key", ["data", "quiet", "verbose"])
def test_config_refuses_keys_that_are_not_options(capsys, tmp_path: Path, key: str) -> None:
    # `quiet: true` or `data: other.csv` in a config file used to be accepted and ignored
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"{key}: x\n")
    code, _, err = dpkit(capsys, "publish", IRIS, "--schema", IRIS_SCHEMA, "--epsilon", "1",
                         "--config", cfg, "-o", tmp_path / "rel.csv")
    assert code == 2
    assert f"unknown key '{key}' for 'dpkit publish' (known: algorithm, allocation," in err
    assert " counts," in err and "schema, score, seed, selection-share," in err
    assert not (tmp_path / "rel.csv").exists()


def test_config_key_is_the_flag_name(capsys, tmp_path: Path) -> None:
    # cluster's -k is --clusters; its --schema is settable from the file
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"cluster:\n  schema: {ROOT / 'taxonomies' / 'clustering.yaml'}\n  clusters: 4\n  epsilon: 1\n")
    code, _, err = dpkit(capsys, "cluster", S1, "--config", cfg, "--seed", "1", "-o", tmp_path / "c.csv", "-q")
    assert code == 0, err
    assert len(pd.read_csv(tmp_path / "c.csv")) == 4
