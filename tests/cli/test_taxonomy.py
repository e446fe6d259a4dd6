"""`dpkit taxonomy validate | import | infer` end to end (in-process, through the error boundary)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run
from dpkit.schema.importers import same_tree
from dpkit.schema.parse import load_schema

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data/adult/train.csv"
ADULT_SCHEMA = ROOT / "taxonomies/adult.yaml"
FIX = ROOT / "tests/data/fixtures"


def dpkit(capsys, *args) -> tuple[int, str, str]:
    code = run(cli, [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def owner(monkeypatch):  # noqa: ANN001
    """The data owner's view (a terminal): values, lines and counts in full (dpkit.console)."""
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)


def one_line_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("dpkit: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------ validate


def test_validate_adult_ok(capsys):
    code, out, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, ADULT)
    assert code == 0, err
    assert out == ""  # messages go to stderr
    assert err.startswith(f"ok: {ADULT_SCHEMA} — 15 columns (9 categorical, 5 numeric, 1 ignored), target income; ")
    assert "all values covered" in err


def test_validate_schema_only(capsys):
    code, _, err = dpkit(capsys, "taxonomy", "validate", ROOT / "taxonomies/iris.yaml")
    assert code == 0 and err.strip().endswith("5 columns (1 categorical, 4 numeric), target species")


def test_validate_duplicated_leaf_exits_1_one_line(capsys, tmp_path):
    text = ADULT_SCHEMA.read_text().replace(
        "Self-emp: [Self-emp-not-inc, Self-emp-inc]", "Self-emp: [Self-emp-not-inc, Self-emp-inc, Private]"
    )
    bad = tmp_path / "dup.yaml"
    bad.write_text(text)
    code, _, err = dpkit(capsys, "taxonomy", "validate", bad, ADULT)
    assert code == 1
    line = one_line_error(err)
    assert f"{bad}:" in line and "'Private' appears twice" in line


def test_validate_uncovered_category_exits_1_one_line(capsys, tmp_path, owner):
    lines = ADULT.read_text().splitlines()[:40]
    lines[5] = lines[5].replace("Bachelors", "Bachelor", 1)
    lines[7] = lines[7].replace("Private", "Privat", 1)
    data = tmp_path / "d.csv"
    data.write_text("\n".join(lines) + "\n")
    assert "Bachelor," in lines[5] and "Privat," in lines[7]
    code, _, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, data)
    assert code == 1
    line = one_line_error(err)
    assert "values not covered" in line
    assert "education: 'Bachelor' (line 6)" in line and "workclass: 'Privat' (line 8)" in line


def test_validate_lists_at_most_five_per_column(capsys, tmp_path, owner):
    data = tmp_path / "d.csv"
    data.write_text("species,sepal_length_cm,sepal_width_cm,petal_length_cm,petal_width_cm\n"
                    + "".join(f"s{i},1,1,1,1\n" for i in range(8)))
    code, _, err = dpkit(capsys, "taxonomy", "validate", ROOT / "taxonomies/iris.yaml", data)
    assert code == 1
    line = one_line_error(err)
    assert "'s4' (line 6) and 3 more" in line and "'s5'" not in line


def test_validate_out_of_bounds_is_a_warning(capsys, tmp_path, owner):
    data = tmp_path / "d.csv"
    data.write_text("species,sepal_length_cm,sepal_width_cm,petal_length_cm,petal_width_cm,extra\n"
                    "setosa,11,1,1,-1,x\nvirginica,12,1,1,1,y\n")
    code, _, err = dpkit(capsys, "taxonomy", "validate", ROOT / "taxonomies/iris.yaml", data)
    assert code == 0, err
    assert "dpkit: warning:" in err
    assert "'sepal_length_cm' has 0 value(s) below and 2 above" in err
    assert "'petal_width_cm' has 1 value(s) below and 0 above" in err
    assert "never used: extra" in err


def test_validate_missing_policy_error(capsys, tmp_path, owner):
    schema = tmp_path / "s.yaml"
    schema.write_text('missing: "?"\ncolumns:\n  a: {type: categorical, values: [x, y]}\n')
    data = tmp_path / "d.csv"
    data.write_text("a\nx\n?\n")
    code, _, err = dpkit(capsys, "taxonomy", "validate", schema, data)
    assert code == 1
    assert "d.csv:3: column 'a' is missing ('?') and missing_policy is error" in one_line_error(err)


def test_validate_log_form_holds_no_value_line_or_count(capsys, tmp_path):
    """Issue 24 item 6: without a terminal or -v (a cron log, make demo), validate names the
    columns but no raw value, line number or count of the data."""
    lines = ADULT.read_text().splitlines()[:40]
    lines[5] = lines[5].replace("Bachelors", "Bachelor", 1)
    data = tmp_path / "d.csv"
    data.write_text("\n".join(lines) + "\n")
    code, _, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, data)
    line = one_line_error(err)
    assert code == 1 and "'education'" in line and "Bachelor" not in line and "line" not in line
    assert "-v shows the detail" in line
    iris = tmp_path / "i.csv"
    iris.write_text("species,sepal_length_cm,sepal_width_cm,petal_length_cm,petal_width_cm\nsetosa,11,1,1,1\n")
    code, _, err = dpkit(capsys, "taxonomy", "validate", ROOT / "taxonomies/iris.yaml", iris)
    assert code == 0 and "'sepal_length_cm' has values outside the public bounds" in err and "1 value" not in err
    code, _, err = dpkit(capsys, "taxonomy", "validate", ADULT_SCHEMA, ADULT)
    assert code == 0 and "row(s) with the missing token '?' are dropped on load" in err
    assert not re.search(r"\d+ row\(s\) with the missing token", err)


def test_validate_empty_value_hint_and_missing_column(capsys, tmp_path):
    schema = tmp_path / "s.yaml"
    schema.write_text("columns:\n  a: {type: categorical, values: [x, y]}\n  b: {type: ignore}\n")
    data = tmp_path / "d.csv"
    data.write_text("a,b\nx,1\n,2\n")
    code, _, err = dpkit(capsys, "taxonomy", "validate", schema, data)
    assert code == 1 and "declare a missing token" in one_line_error(err)
    data.write_text("c;b\nx;1\n")
    code, _, err = dpkit(capsys, "taxonomy", "validate", schema, data)
    assert code == 1 and "column(s) 'a'" in one_line_error(err)


def test_validate_stdin_and_options(capsys, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("a;b\nx;1\n", encoding="latin-1")
    schema = tmp_path / "s.yaml"
    schema.write_text("columns:\n  a: {type: categorical, values: [x, y]}\n  b: {type: numeric, bounds: [0, 9]}\n")
    code, _, err = dpkit(capsys, "taxonomy", "validate", schema, data, "--delimiter", ";", "--encoding", "latin-1")
    assert code == 0, err
    proc = subprocess.run(
        [sys.executable, "-m", "dpkit", "taxonomy", "validate", str(schema), "-", "-d", ";"],
        input="a;b\nx;1\nz;2\n", capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 1 and "<stdin>: values not covered" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_validate_usage_errors(capsys, tmp_path):
    code, _, err = dpkit(capsys, "taxonomy", "validate")
    assert code == 2 and "Missing argument" in err
    code, _, err = dpkit(capsys, "taxonomy", "validate", tmp_path / "nope.yaml")
    assert code == 1 and "schema file not found" in one_line_error(err)


# ------------------------------------------------------------------ import


def test_import_arx_folder_validates(capsys, tmp_path):
    out = tmp_path / "arx.yaml"
    code, _, err = dpkit(capsys, "taxonomy", "import", FIX / "arx", "--format", "arx", "--target", "income", "-o", out)
    assert code == 0, err
    assert "wrote" in err
    text = out.read_text()
    assert text.startswith("# Imported by `dpkit taxonomy import --format arx`")
    code, _, err = dpkit(capsys, "taxonomy", "validate", out)
    assert code == 0, err
    schema = load_schema(out, allow_draft=True)
    assert schema.target == "income" and schema.columns["age"].kind == "numeric"
    # auto-detects ARX for a folder
    code, _, err = dpkit(capsys, "taxonomy", "import", FIX / "arx", "-o", tmp_path / "auto.yaml")
    assert code == 0 and (tmp_path / "auto.yaml").read_text().replace("--format arx", "") == text.replace(
        "--format arx", ""
    ).replace("target: income\n", "")


def test_import_arx_with_data_validates_against_it(capsys, tmp_path):
    out = tmp_path / "s.yaml"
    code, _, err = dpkit(capsys, "taxonomy", "import", FIX / "arx", "--data", ADULT, "--target", "income", "-o", out)
    assert code == 0, err
    assert "NOT PRIVATE" in err
    schema = load_schema(out, allow_draft=True)
    assert list(schema.columns) == ADULT.read_text().split("\n", 1)[0].split(",")
    assert schema.columns["workclass"].nodes["Government"].children  # from the ARX file
    assert schema.columns["education"].kind == "categorical"  # drafted from the data
    assert "DRAFTED FROM" in out.read_text()
    code, _, err = dpkit(capsys, "taxonomy", "validate", out, ADULT)
    assert code == 0, err


def test_import_diffgen_equals_shipped_adult(capsys, tmp_path):
    out = tmp_path / "adult.yaml"
    code, _, err = dpkit(
        capsys, "taxonomy", "import", FIX / "adult-fung2007-braces.txt", "--format", "diffgen",
        "--rename", "classes=income", "--rename", "martial-status=marital-status",
        "--ignore", "fnlwgt", "--target", "income", "-o", out,
    )
    assert code == 0, err
    got, want = load_schema(out, allow_draft=True), load_schema(ADULT_SCHEMA)
    assert set(got.columns) == set(want.columns) and got.target == "income"
    for name, col in want.columns.items():
        if col.kind == "categorical":
            assert same_tree(got.columns[name].root, col.root), name
        elif col.kind == "numeric":
            assert (got.columns[name].lo, got.columns[name].hi) == (col.lo, col.hi)


def test_import_stdout_and_guessed_target(capsys):
    code, out, err = dpkit(capsys, "taxonomy", "import", FIX / "adult-fung2007-braces.txt", "-o", "-")
    assert code == 0, err
    assert out.startswith("# Imported by") and "target: classes" in out and "wrote <stdout>" in err


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--rename", "classes"], 2, "--rename takes OLD=NEW"),
        (["--target", "age"], 2, "must be categorical"),
        (["--ignore", "nope"], 2, "--ignore nope"),
        (["--format", "xml"], 2, "Invalid value for '--format'"),
    ],
)
def test_import_errors(capsys, tmp_path, args, code, message):
    out = tmp_path / "o.yaml"
    got, _, err = dpkit(capsys, "taxonomy", "import", FIX / "adult-fung2007-braces.txt", "-o", out, *args)
    assert got == code, err
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_import_bad_arx_file_names_line(capsys, tmp_path):
    d = tmp_path / "h"
    d.mkdir()
    (d / "x.csv").write_text("a;X;*\nb;X;*\na;Y;*\n")
    code, _, err = dpkit(capsys, "taxonomy", "import", d, "-o", tmp_path / "o.yaml")
    assert code == 1 and f"{d / 'x.csv'}:3:" in one_line_error(err)
    assert not (tmp_path / "o.yaml").exists()


def test_import_refuses_to_overwrite_its_input(capsys, tmp_path):
    src = tmp_path / "t.txt"
    shutil.copy(FIX / "adult-fung2007-braces.txt", src)
    code, _, err = dpkit(capsys, "taxonomy", "import", src, "-o", src)
    assert code == 2 and "refusing to overwrite it" in err
    assert src.read_text() == (FIX / "adult-fung2007-braces.txt").read_text()


# ------------------------------------------------------------------ infer


def test_infer_warns_loudly_and_drafts_a_valid_schema(capsys, tmp_path):
    out = tmp_path / "draft.yaml"
    code, stdout, err = dpkit(capsys, "taxonomy", "infer", ADULT, "--target", "income", "-o", out)
    assert code == 0, err
    assert stdout == ""
    assert "dpkit: warning:" in err and "NOT PRIVATE" in err
    text = out.read_text()
    assert text.startswith("# DRAFT schema") and "NOT PRIVATE" in text.splitlines()[0]
    schema = load_schema(out, allow_draft=True)
    assert schema.target == "income" and schema.missing == "?"
    assert (schema.columns["age"].lo, schema.columns["age"].hi) == (10, 90)
    code, _, err = dpkit(capsys, "taxonomy", "validate", out, ADULT)
    assert code == 0, err


def test_infer_stdin_to_stdout(capsys):
    proc = subprocess.run(
        [sys.executable, "-m", "dpkit", "taxonomy", "infer", "-", "-o", "-", "--max-categories", "5"],
        input=(ROOT / "sample_data/iris/iris.csv").read_text(), capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# DRAFT schema")
    assert "species:" in proc.stdout and "NOT PRIVATE" in proc.stderr


def test_infer_errors(capsys, tmp_path):
    code, _, err = dpkit(capsys, "taxonomy", "infer", ADULT, "--target", "nope", "-o", tmp_path / "o.yaml")
    assert code == 2 and "--target 'nope'" in err
    code, _, err = dpkit(capsys, "taxonomy", "infer", ADULT, "--max-categories", "1", "-o", tmp_path / "o.yaml")
    assert code == 2
    assert not (tmp_path / "o.yaml").exists()


@pytest.mark.parametrize("sub", ["validate", "import", "infer"])
def test_help_has_example(capsys, sub):
    code, out, _ = dpkit(capsys, "taxonomy", sub, "--help")
    assert code == 0 and "Example:" in out and f"dpkit taxonomy {sub}" in out


def test_an_inferred_draft_is_refused_by_publish(tmp_path):
    # the draft marker must survive the YAML writer, or a private command would accept it
    from click.testing import CliRunner

    from dpkit.cli import cli

    draft = tmp_path / "iris.draft.yaml"
    runner = CliRunner()
    r = runner.invoke(cli, ["taxonomy", "infer", "sample_data/iris/iris.csv", "--target", "species",
                            "-o", str(draft)])
    assert r.exit_code == 0, r.output
    assert "draft: true" in draft.read_text(encoding="utf-8")
    out = tmp_path / "x.csv"
    r = runner.invoke(cli, ["publish", "sample_data/iris/iris.csv", "--schema", str(draft),
                            "--epsilon", "1", "-o", str(out)])
    assert r.exit_code == 1
    assert "draft" in str(r.exception or r.output)
    assert not out.exists()
