"""Without -v, whether a notice appears must not depend on one record (issue 43, privacy review 4).

The experiment of the review, as a test: a no-schema publish of 5,000 rows, of the same rows
plus one record far outside every plausible bound (age 10⁶), and plus one record of a class
that no other record holds (partition selection withholds it with probability ≥ 1 − δ). Up to
0.6.1 the first printed nothing, the second "clipped values of 'age'", the third "dropped rows
… 'label'" — in 3 runs of 3: a log's reader learned that such a record exists. Now stderr holds
the same lines in every run (the learned bounds they quote are DP outputs, written to the
schema file too, and may differ: they are masked). With -v the exact detail is the owner's.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run


def _table(path, extra: str | None = None) -> None:  # noqa: ANN001
    rng = np.random.default_rng(1)
    n = 5000
    rows = zip(rng.integers(18, 90, n), rng.choice(["HS", "BSc", "MSc", "PhD"], n), rng.integers(1, 80, n),
               np.where(rng.random(n) < 0.3, "Yes", "No"), strict=True)
    text = "age,edu,hours,label\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)
    path.write_text(text + (extra or ""), encoding="utf-8")


def _lines(err: str, name: str) -> list[str]:
    """stderr's lines with the file names and the (noisy, public) bounds masked."""
    err = err.replace(name, "DATA")
    err = re.sub(r"\[[-\d.e+]+, [-\d.e+]+\]", "[lo, hi]", err)
    err = re.sub(r"\S*out\.schema\.yaml", "SCHEMA", err)
    return [line for line in err.splitlines() if line.strip()]


CASES = {"base": None, "outlier": "1000000,HS,40,No\n", "unreleased class": "40,HS,40,Maybe\n"}


def test_the_notices_are_the_same_with_or_without_one_record(tmp_path, capsys) -> None:  # noqa: ANN001
    seen = {}
    for case, extra in CASES.items():
        data = tmp_path / f"{case.replace(' ', '_')}.csv"
        _table(data, extra)
        runs = []
        for i in range(2):
            code = run(cli, ["publish", str(data), "--target", "label", "--delta", "1e-6", "--epsilon", "1",
                             "-o", str(tmp_path / f"{i}.out.csv")])
            assert code == 0
            runs.append(_lines(capsys.readouterr().err, str(data)))
        assert runs[0] == runs[1], runs
        seen[case] = runs[0]
    assert seen["base"] == seen["outlier"] == seen["unreleased class"], seen
    lines = seen["base"]
    # the notices are there, in their short form (no count, the flag's hint)
    assert any("clipped values of" in line and ", if any (-v shows the detail)" in line for line in lines), lines
    assert any("dropped rows with" in line and "'label'" in line for line in lines), lines
    assert not any(re.search(r"\d+ (row|value)\(s\)", line) for line in lines), lines


@pytest.mark.parametrize("case", ["base", "outlier"])
def test_with_v_the_owner_sees_what_happened(tmp_path, capsys, case: str) -> None:  # noqa: ANN001
    data = tmp_path / "d.csv"
    _table(data, CASES[case])
    code = run(cli, ["publish", str(data), "--target", "label", "--delta", "1e-6", "--epsilon", "1",
                     "-o", str(tmp_path / "o.csv"), "-v"])
    err = capsys.readouterr().err
    assert code == 0
    # one column: "clipped 1 value(s) of 'age'"; several: "clipped 1, 3 value(s) of columns 'age', 'hours'"
    clipped = re.search(r"clipped ([\d, ]+) value\(s\) of (columns )?('[^']*'(, )?)+", err)
    if case == "outlier":  # the record's age is outside any bound learned
        assert clipped and "'age'" in clipped.group(0), err
    assert "if any" not in err


def test_a_schema_publish_gives_the_same_notices_and_generalize_says_what_happened(tmp_path, capsys) -> None:  # noqa: ANN001
    """With a schema, too, a publish's notices do not depend on one record; generalize reads the
    owner's own test records and releases nothing (dpkit.console.owner_records): its clip notice
    is there when a value was clipped, and only then."""
    schema = tmp_path / "s.yaml"
    schema.write_text("target: label\ncolumns:\n  age: {type: numeric, bounds: [0, 120], integer: true}\n"
                      "  edu: {type: categorical, values: [HS, BSc, MSc, PhD]}\n"
                      "  hours: {type: numeric, bounds: [0, 100], integer: true}\n"
                      "  label: {type: categorical, values: ['No', 'Yes']}\n")
    seen = []
    for case in ("base", "outlier"):
        data = tmp_path / f"{case}.csv"
        _table(data, CASES[case])
        code = run(cli, ["publish", str(data), "--schema", str(schema), "--epsilon", "1", "-o", str(tmp_path / "r.csv")])
        assert code == 0
        seen.append(_lines(capsys.readouterr().err, str(data)))
    assert seen[0] == seen[1] and any("clipped values of" in line for line in seen[0]), seen
    for case, clipped in (("base", False), ("outlier", True)):
        code = run(cli, ["generalize", str(tmp_path / f"{case}.csv"), "--cut", str(tmp_path / "r.report.json"),
                         "-o", str(tmp_path / "g.csv")])
        err = capsys.readouterr().err
        assert code == 0 and ("clipped values of 'age'" in err) == clipped, err
