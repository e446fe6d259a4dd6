"""`dpkit generalize`: maps another file onto a released cut, spending nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_publish import SCHEMA, invoke, make_rows  # tests/cli is on sys.path


@pytest.fixture
def released(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "s.yaml").write_text(SCHEMA)
    (tmp_path / "d.csv").write_text(make_rows())
    out = tmp_path / "rel.csv"
    code, _, err = invoke(["publish", str(tmp_path / "d.csv"), "--schema", str(tmp_path / "s.yaml"),
                           "--epsilon", "2", "--levels", "4", "--seed", "2", "-o", str(out)])
    assert code == 0, err
    return {"dir": str(tmp_path), "schema": str(tmp_path / "s.yaml"), "data": str(tmp_path / "d.csv"),
            "rel": str(out), "report": str(tmp_path / "rel.report.json")}


def test_generalize_maps_values_onto_the_cut(released, tmp_path):
    test = tmp_path / "t.csv"
    test.write_text("age,color,label,note\n4,red,a,x\n100,green,b,y\n50,orange,b,z\n?,blue,a,w\n")
    out = tmp_path / "t.gen.csv"
    code, _, err = invoke(["generalize", str(test), "--cut", released["report"], "-o", str(out), "-v"])
    assert code == 0, err
    assert "dropped" not in err  # every row comes out (issue 36 item 3): '?' is '(missing)'
    cut = json.loads(Path(released["report"]).read_text())["release"]["cut"]
    lines = out.read_text().splitlines()
    assert lines[0] == Path(released["rel"]).read_text().splitlines()[0]
    assert len(lines) == 5
    assert lines[4].startswith("(missing),") and lines[4].endswith(",a")
    edges = cut["age"]
    for line, age in zip(lines[1:4], (4, 100, 50), strict=True):
        i = max(k for k, (lo, _) in enumerate(edges) if lo <= age)
        lo, hi = edges[i]
        label = f"[{lo},{hi}{']' if i == len(edges) - 1 else ')'}"
        assert line.startswith(f'"{label}",')
        color = line.split(",")[2]
        assert color in cut["color"]
        assert line.endswith((",a", ",b"))


def test_generalize_without_target_column(released, tmp_path):
    test = tmp_path / "t.csv"
    test.write_text("age,color\n4,red\n")
    out = tmp_path / "t.gen.csv"
    code, _, err = invoke(["generalize", str(test), "--cut", released["report"], "-o", str(out),
                           "--schema", released["schema"]])
    assert code == 0, err
    assert out.read_text().splitlines()[0] == "age,color"


def test_generalize_the_training_file_matches_the_release_labels(released, tmp_path):
    out = tmp_path / "g.csv"
    code, _, err = invoke(["generalize", released["data"], "--cut", released["report"], "-o", str(out)])
    assert code == 0, err
    rel_rows = set(Path(released["rel"]).read_text().splitlines()[1:])
    gen_rows = set(out.read_text().splitlines()[1:])
    # every real record's generalized row is a cell the release could contain
    assert len(gen_rows) >= 1 and all(r.count(",") == 3 for r in gen_rows)
    assert gen_rows & rel_rows


@pytest.mark.parametrize(
    "content, code_expected, msg",
    [
        ('{"dpkit_version": "0", "command": "forest", "release": {}}', 1, "not a `dpkit publish` report"),
        ("not json", 1, "not a dpkit report"),
    ],
)
def test_bad_report(released, tmp_path, content, code_expected, msg):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "o.csv"
    code, _, err = invoke(["generalize", released["data"], "--cut", str(bad), "-o", str(out)])
    assert code == code_expected and msg in err and not out.exists()


def test_unknown_category_and_missing_column(released, tmp_path):
    out = tmp_path / "o.csv"
    t1 = tmp_path / "t1.csv"
    t1.write_text("age,color,label\n4,purple,a\n")
    code, _, err = invoke(["generalize", str(t1), "--cut", released["report"], "-o", str(out)])
    # an unknown category is read as missing, never refused (issue 43): one warning, no value quoted in a log
    assert code == 0 and "values not in the schema were read as missing in 'color'" in err and "purple" not in err
    assert out.read_text().splitlines()[1].split(",")[-2] in ("(missing)", "Any")
    out.unlink()
    t2 = tmp_path / "t2.csv"
    t2.write_text("age,label\n4,a\n")
    code, _, err = invoke(["generalize", str(t2), "--cut", released["report"], "-o", str(out)])
    assert code == 1 and "'color'" in err and not out.exists()


def test_help_has_an_example():
    code, out, _ = invoke(["generalize", "--help"])
    assert code == 0 and "Example:" in out


def test_schema_named_in_report_not_found(released, tmp_path):
    report = json.loads(Path(released["report"]).read_text())
    report["parameters"]["schema"] = str(tmp_path / "moved.yaml")
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps(report))
    out = tmp_path / "o.csv"
    code, _, err = invoke(["generalize", released["data"], "--cut", str(bad), "-o", str(out)])
    assert code == 1 and "pass the schema (--schema)" in err and not out.exists()
    code, _, err = invoke(["generalize", released["data"], "--cut", str(bad), "-o", str(out),
                           "--schema", released["schema"]])
    assert code == 0, err
