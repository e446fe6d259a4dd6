"""The shared input flags end to end (issue 12, issue 16 items 6, 7, 15): sniffed delimiter,
-t, -H/--column-names, --output-delimiter, Parquet in and out."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dpkit.cli import cli
from dpkit.cli.boundary import run as boundary_run

SCHEMA = """\
target: label
missing: ['?', 'n/a']
missing_policy: drop
columns:
  age: {type: numeric, bounds: [0, 100], integer: true}
  color:
    type: categorical
    hierarchy:
      Any:
        Warm: [red, orange]
        Cool: [blue, green]
  label: {type: categorical, values: [a, b]}
  note: {type: ignore}
"""


def rows(n: int = 120, d: str = ",", header: bool = True) -> str:
    colors = ["red", "orange", "blue", "green"]
    lines = [d.join(["age", "color", "label", "note"])] if header else []
    for i in range(n):
        age = (i * 37) % 90 + 5
        c = colors[i % 4] if i % 17 else "n/a"
        lab = "a" if (age < 50) == (c in ("red", "orange")) else "b"
        lines.append(d.join([str(age), c, lab, f"n{i}"]))
    return "\n".join(lines) + "\n"


class _Entry:
    name = "dpkit"

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **kw):  # noqa: ANN001
        raise SystemExit(boundary_run(cli, list(args or [])))


def invoke(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(_Entry(), [str(a) for a in argv])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(SCHEMA)
    return p


def publish(data: Path, schema: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return invoke("publish", data, "--schema", schema, "--epsilon", "1", "--levels", "2", "--seed", "3",
                  "-o", out, *extra)


def test_semicolon_input_is_sniffed_and_can_give_a_semicolon_release(tmp_path, schema):
    data = tmp_path / "d.csv"
    data.write_text(rows(d=";"))
    code, _, err = publish(data, schema, tmp_path / "r.csv", "--output-delimiter", ";")
    assert code == 0, err
    assert "sniffed" not in err  # only ';' fits: read silently (issue 43)
    code, _, err = publish(data, schema, tmp_path / "r.csv", "--output-delimiter", ";", "-v")
    assert code == 0, err
    assert "fields are separated by ';' (sniffed" in err
    assert (tmp_path / "r.csv").read_text().splitlines()[0] == "age;color;label"


def test_tabs_flag_and_headerless_input(tmp_path, schema):
    data = tmp_path / "d.tsv"
    data.write_text(rows(d="\t", header=False))
    code, _, err = publish(data, schema, tmp_path / "r.csv", "-t", "-H", "--column-names", "age,color,label,note")
    assert code == 0, err
    assert "sniffed" not in err
    code, _, err = publish(data, schema, tmp_path / "r2.csv", "-t", "-H")
    assert code == 1 and "'age', 'color', 'label'" in err and "(c1, c2, c3, c4)" in err


def test_dialect_flags_from_a_config_file(tmp_path, schema):
    """-t, -H, --column-names and --output-delimiter can be set from --config like any option."""
    data = tmp_path / "d.tsv"
    data.write_text(rows(d="\t", header=False))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("publish:\n  tabs: true\n  no-header-row: true\n  column-names: age,color,label,note\n"
                   "  output-delimiter: ';'\n")
    code, _, err = publish(data, schema, tmp_path / "r.csv", "--config", cfg)
    assert code == 0, err
    assert "sniffed" not in err
    assert (tmp_path / "r.csv").read_text().splitlines()[0] == "age;color;label"


def test_tabs_and_delimiter_disagree(tmp_path, schema):
    data = tmp_path / "d.csv"
    data.write_text(rows())
    code, _, err = publish(data, schema, tmp_path / "r.csv", "-t", "-d", ";")
    assert code == 2 and "-t/--tabs and --delimiter disagree" in err


def test_parquet_in_and_out(tmp_path, schema):
    import pandas as pd

    csv_in = tmp_path / "d.csv"
    csv_in.write_text(rows())
    pq_in = tmp_path / "d.parquet"
    pd.read_csv(csv_in, dtype=str, keep_default_na=False).to_parquet(pq_in)
    out = tmp_path / "r.parquet"
    code, _, err = publish(pq_in, schema, out)
    assert code == 0, err
    assert out.read_bytes()[:4] == b"PAR1" and (tmp_path / "r.report.json").exists()
    released = pd.read_parquet(out)
    assert list(released.columns) == ["age", "color", "label"] and len(released) > 0
    # the release of the CSV input with the same seed is the same table
    code, _, err = publish(csv_in, schema, tmp_path / "r.csv")
    assert code == 0, err
    from_csv = pd.read_csv(tmp_path / "r.csv", dtype=str)
    assert sorted(map(tuple, from_csv.to_numpy().tolist())) == sorted(map(tuple, released.astype(str).to_numpy().tolist()))
    # generalize reads Parquet and writes Parquet
    code, _, err = invoke("generalize", pq_in, "--cut", tmp_path / "r.report.json", "-o", tmp_path / "g.pq")
    assert code == 0, err
    # every input row comes out (issue 36: generalize drops no row; a missing value is '(missing)')
    assert len(pd.read_parquet(tmp_path / "g.pq")) == len(pd.read_csv(csv_in)) == 120
