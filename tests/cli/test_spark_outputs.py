"""Row-level outputs on Spark (docs/spark.md): `generalize`, `cluster --assign`, and the scans
of `cluster --allow-data-bounds` and `taxonomy validate` give the numpy engine's bytes.

Runs on the session of tests/cli/test_spark.py (``local-cluster[2,1,1024]``, 512 KiB
splits: the adult file is read as ~8 partitions, so rows cross partition borders and the
part files must be concatenated in order).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from test_spark import ADULT, SCHEMA, _invoke, _run, parquet, spark  # noqa: F401 (fixtures)

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def cut(tmp_path_factory) -> Path:
    """A publish report (its cut), from the numpy engine."""
    out = tmp_path_factory.mktemp("cut") / "released.csv"
    _run(["publish", ADULT, "--schema", SCHEMA, "--target", "income", "--epsilon", "1", "--levels", "6",
          "--seed", "7", "-o", out, "-q"])
    return out.with_name("released.report.json")


def _generalize(data, cut, out, engine, *extra):
    return ["generalize", data, "--cut", cut, "-o", out, "--engine", engine, "-q", *extra]


def test_generalize_is_the_same_on_spark(tmp_path, spark, parquet, cut):  # noqa: F811
    _run(_generalize(ADULT, cut, tmp_path / "numpy.csv", "numpy"))
    _run(_generalize(ADULT, cut, tmp_path / "spark.csv", "spark"))
    want = (tmp_path / "numpy.csv").read_bytes()
    assert (tmp_path / "spark.csv").read_bytes() == want
    _run(_generalize(parquet["adult"], cut, tmp_path / "pq.csv", "spark"))  # from Parquet
    assert (tmp_path / "pq.csv").read_bytes() == want
    # nothing left next to the outputs (the part files' hidden directory is gone)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["numpy.csv", "pq.csv", "spark.csv"]


def test_generalize_to_a_directory_and_parquet(tmp_path, spark, cut):  # noqa: F811
    from dpkit.engine.spark.write import part_files

    _run(_generalize(ADULT, cut, tmp_path / "numpy.csv", "numpy"))
    want = (tmp_path / "numpy.csv").read_text().splitlines(keepends=True)
    _run(_generalize(ADULT, cut, str(tmp_path / "parts") + "/", "spark"))
    parts = part_files(tmp_path / "parts")
    assert len(parts) > 1 and all(p.suffix == ".csv" for p in parts)
    body = []
    for p in parts:  # every part file starts with the header row (as Spark's CSV writer does)
        lines = p.read_text().splitlines(keepends=True)
        assert lines[0] == want[0]
        body += lines[1:]
    assert body == want[1:]
    _run(_generalize(ADULT, cut, tmp_path / "g.parquet", "spark"))
    got = pd.read_parquet(tmp_path / "g.parquet")
    expected = pd.read_csv(tmp_path / "numpy.csv", dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected)
    # an existing directory is not overwritten (refused before Spark reads anything)
    code, err = _invoke(_generalize(ADULT, cut, str(tmp_path / "parts") + "/", "spark"))
    assert code == 2 and "is a directory" in err


def test_generalize_bad_input_leaves_no_output(tmp_path, spark, cut):  # noqa: F811
    """A value the taxonomy does not list is read as missing on both engines (generalize maps
    every row: the same bytes); a file the cut cannot apply to (a column missing) is refused on
    both, leaving no output and no hidden part files."""
    bad = tmp_path / "bad.csv"
    lines = ADULT.read_text().splitlines()
    parts = lines[20000].split(",")
    parts[1] = "Martian"  # workclass: not in the taxonomy (in a later Spark partition)
    lines[20000] = ",".join(parts)
    bad.write_text("\n".join(lines) + "\n")
    outs = []
    for engine in ("numpy", "spark"):
        out = tmp_path / engine / "g.csv"
        out.parent.mkdir()
        code, err = _invoke(_generalize(bad, cut, out, engine))
        assert code == 0 and "Traceback" not in err, err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    header = lines[0].split(",")
    keep = [i for i, name in enumerate(header) if name != "workclass"]
    short = tmp_path / "short.csv"
    short.write_text("\n".join(",".join(row.split(",")[i] for i in keep) for row in lines) + "\n")
    msgs = []
    for engine in ("numpy", "spark"):
        out = tmp_path / f"short-{engine}" / "g.csv"
        out.parent.mkdir()
        code, err = _invoke(_generalize(short, cut, out, engine))
        assert code == 1 and "Traceback" not in err, err
        assert list(out.parent.iterdir()) == []  # no output, no hidden part files
        msgs.append(err.strip().splitlines()[-1])
    assert all("workclass" in m for m in msgs), msgs


def test_failed_write_job_leaves_no_output(tmp_path, spark):  # noqa: F811
    """A job that fails while Spark writes: neither the output nor the part files remain."""
    from dpkit.engine.spark.write import write_rows

    df = spark.range(0, 50_000, numPartitions=4)

    def render(batch):
        ids = batch.column(0).to_numpy()
        if (ids > 40_000).any():
            raise RuntimeError("boom")
        return pd.DataFrame({"id": ids.astype(str)})

    for out in (tmp_path / "out.csv", str(tmp_path / "dir") + "/"):
        with pytest.raises(Exception, match="boom"):
            write_rows(spark, df, render, ["id"], str(out))
        assert list(tmp_path.iterdir()) == []


def test_assign_with_data_bounds_is_the_same_on_spark(tmp_path, spark):  # noqa: F811
    """--allow-data-bounds (min/max from one Spark aggregation) and --assign, on ~8 partitions."""
    outs = {}
    for engine in ("numpy", "spark"):
        d = tmp_path / engine
        d.mkdir()
        _run(["cluster", ADULT, "--columns", "age,hours-per-week", "-k", "4", "--epsilon", "1", "--seed", "7",
              "--allow-data-bounds", "-o", d / "c.csv", "--assign", d / "a.csv", "--engine", engine, "-q"])
        outs[engine] = d
    for name in ("c.csv", "a.csv"):
        assert (outs["spark"] / name).read_bytes() == (outs["numpy"] / name).read_bytes(), name
    # the assignment holds private rows: never wider than the input's permissions
    assert (outs["spark"] / "a.csv").stat().st_mode & 0o777 == (outs["numpy"] / "a.csv").stat().st_mode & 0o777
    for engine, d in outs.items():
        report = json.loads((d / "c.report.json").read_text())
        assert report["release"]["not_private_outputs"] == [str(d / "c.csv"), str(d / "a.csv")], engine
    assert list(outs["spark"].iterdir()) != [] and not any(p.name.startswith(".") for p in outs["spark"].iterdir())


def test_assign_keeps_rows_dropped_for_a_missing_value(tmp_path, spark):  # noqa: F811
    """Rows with the schema's missing token are in the assignment with an empty label, on both
    engines; quoted fields and a 0600 input (→ a 0600 output) too."""
    schema = tmp_path / "s.yaml"
    schema.write_text("missing: '?'\nmissing_policy: drop\ncolumns:\n  x: {type: numeric, bounds: [0, 10]}\n"
                      "  y: {type: numeric, bounds: [0, 10]}\n  note: {type: ignore}\n")
    data = tmp_path / "d.csv"
    rows = ["x,y,note"] + [f"{i % 10},{(3 * i) % 10},\"a, {i}\"" for i in range(200)]
    rows[17] = "?,3,missing x"
    rows[90] = "4,?,\"missing \"\"y\"\"\""
    data.write_text("\n".join(rows) + "\n")
    data.chmod(0o600)
    outs = []
    for engine in ("numpy", "spark"):
        out = tmp_path / f"{engine}.csv"
        _run(["cluster", data, "--schema", schema, "--columns", "x,y", "-k", "3", "--epsilon", "1", "--seed", "3",
              "-o", tmp_path / f"c-{engine}.csv", "--assign", out, "--engine", engine, "-q"])
        outs.append(out.read_bytes())
        assert out.stat().st_mode & 0o777 == 0o600
    assert outs[0] == outs[1]
    lines = outs[1].decode().splitlines()
    assert lines[17] == "?,3,missing x," and lines[90].endswith('",')


def _own(err: str) -> list[str]:
    """stderr's lines that dpkit wrote itself: its errors, its warnings, its result line."""
    return [line for line in err.splitlines() if line.startswith(("dpkit: error", "dpkit: warning", "ok:"))]


def _validate(data, engine, *extra):
    return ["taxonomy", "validate", SCHEMA, data, "--engine", engine, *extra]


def test_taxonomy_validate_is_the_same_on_spark(tmp_path, spark):  # noqa: F811
    bad = tmp_path / "bad.csv"
    lines = ADULT.read_text().splitlines()
    for i, (col, value) in {150: (1, "Martian"), 9000: (1, "Venusian"), 21000: (1, "Martian"),
                            25000: (0, "old"), 26000: (3, "Kindergarten"), 27000: (1, "Plutonian")}.items():
        parts = lines[i].split(",")
        parts[col] = value
        lines[i] = ",".join(parts)
    for i in range(30000, 30010):  # more than 5 distinct uncovered values: "and N more"
        parts = lines[i].split(",")
        parts[6] = f"Astronaut-{i}"
        lines[i] = ",".join(parts)
    bad.write_text("\n".join(lines) + "\n")
    results = []
    for data in (bad, ADULT):
        got = []
        for engine in ("numpy", "spark"):
            code, err = _invoke(_validate(data, engine, "-v"))  # the owner asks for the values
            # dpkit's own lines: under pytest's filters PySpark's warnings show too (3.5's distutils
            # deprecation and unclosed socket, 4's pandas-3 notice), rendered "dpkit: <Category>: …"
            got.append((code, _own(err)))
        assert got[0] == got[1], data
        results.append(got[0])
    (code, err), (ok_code, ok) = results
    # without -v (stderr not a terminal: a log) the values stay out of the message, on both engines
    quiet = [(c, "".join(ln + "\n" for ln in _own(e))) for c, e in (_invoke(_validate(bad, engine))
                                                                   for engine in ("numpy", "spark"))]
    assert quiet[0] == quiet[1] and quiet[0][0] == 1 and "Martian" not in quiet[0][1]
    assert "-v shows the detail" in quiet[0][1]
    assert code == 1 and "'Martian' (line 151)" in err[-1] and "'Venusian' (line 9001)" in err[-1]
    assert "'Astronaut-30004' (line 30005) and 5 more" in err[-1]
    assert ok_code == 0 and "all values covered" in ok[-1]


def test_uri_outputs_are_renamed_into_place(tmp_path, spark):  # noqa: F811
    """The hdfs:// / s3a:// path (Hadoop FileSystem: write under a hidden name, rename), run on
    a file: URI; a failed job leaves nothing."""
    from dpkit.engine.spark.write import _text_job, _write_remote, part_files

    df = spark.range(0, 30_000, numPartitions=3)

    def render(batch):
        ids = batch.column(0).to_numpy()
        if (ids > 25_000).any() and (tmp_path / "fail").exists():
            raise RuntimeError("boom")
        return pd.DataFrame({"id": ids.astype(str)})

    job = _text_job(df, render, ["id"], ",", header_per_part=True)
    _write_remote(spark, (tmp_path / "out").as_uri(), lambda uri: job.write.text(uri))
    rows = [line for p in part_files(tmp_path / "out") for line in p.read_text().splitlines() if line != "id"]
    assert rows == [str(i) for i in range(30_000)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    (tmp_path / "fail").touch()
    with pytest.raises(Exception, match="boom"):
        _write_remote(spark, (tmp_path / "out2").as_uri(), lambda uri: job.write.text(uri))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fail", "out"]


def test_generalize_keeps_missing_values_the_same_on_spark(tmp_path, spark):  # noqa: F811
    """Issue 36 item 3: under missing_policy: keep the Spark executors put a missing value in the
    same (missing) leaf or bucket as the numpy engine — every row, the same bytes."""
    schema = tmp_path / "keep.yaml"
    schema.write_text(SCHEMA.read_text().replace("missing_policy: drop", "missing_policy: keep"))
    data = pd.read_csv(ADULT, dtype=str, keep_default_na=False)
    data.loc[data.index % 7 == 3, "age"] = "?"  # a numeric column's missing bucket too
    path = tmp_path / "adult.csv"
    data.to_csv(path, index=False)
    rel = tmp_path / "rel.csv"
    _run(["publish", path, "--schema", schema, "--target", "income", "--epsilon", "1", "--levels", "13",
          "--seed", "5", "-o", rel, "-q"])
    report = rel.with_name("rel.report.json")
    _run(_generalize(path, report, tmp_path / "numpy.csv", "numpy"))
    _run(_generalize(path, report, tmp_path / "spark.csv", "spark"))
    want = (tmp_path / "numpy.csv").read_bytes()
    assert (tmp_path / "spark.csv").read_bytes() == want
    rows = pd.read_csv(tmp_path / "numpy.csv", dtype=str, keep_default_na=False)
    assert len(rows) == len(data)  # every row, the '?' ones too
