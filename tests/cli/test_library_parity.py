"""The CLI is a veneer: a command and the library call it wraps write the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import dpkit
from dpkit.cli import cli

REPO = Path(__file__).resolve().parents[2]
ADULT = str(REPO / "sample_data" / "adult" / "train.csv")
ADULT_TEST = str(REPO / "sample_data" / "adult" / "test.csv")
SCHEMA = str(REPO / "taxonomies" / "adult.yaml")
KEY = "0x55332833bf0dfa7c7cf40eb2e2e93e33"


def _cli(args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["-q", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("extra,suffix", [([], ".csv"), (["--levels", "13", "--counts"], ".csv"), ([], ".parquet")])
def test_publish_cli_and_library_write_the_same_bytes(tmp_path: Path, extra: list[str], suffix: str) -> None:
    out = tmp_path / f"cli{suffix}"
    _cli(["publish", ADULT, "--schema", SCHEMA, "--epsilon", "1", "--seed", KEY, *extra, "-o", str(out),
          "--report", str(tmp_path / "cli.json")])
    options = {"levels": 13} if "--levels" in extra else {}
    release = dpkit.publish(ADULT, schema=SCHEMA, epsilon="1", random_state=KEY, output=tmp_path / f"lib{suffix}",
                            report=tmp_path / "lib.json", counts="--counts" in extra, **options)
    assert (tmp_path / f"lib{suffix}").read_bytes() == out.read_bytes()
    assert (tmp_path / "lib.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    release.write(tmp_path / f"again{suffix}", counts="--counts" in extra)
    assert (tmp_path / f"again{suffix}").read_bytes() == out.read_bytes()


def test_generalize_cli_and_library_write_the_same_bytes(tmp_path: Path) -> None:
    rel = dpkit.publish(ADULT, schema=SCHEMA, epsilon=1, random_state=KEY, report=tmp_path / "r.json")
    _cli(["generalize", ADULT_TEST, "--cut", str(tmp_path / "r.json"), "-o", str(tmp_path / "cli.csv")])
    dpkit.generalize(ADULT_TEST, tmp_path / "r.json", output=tmp_path / "lib.csv")
    assert (tmp_path / "lib.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    rel.generalize(ADULT_TEST).to_csv(tmp_path / "df.csv", index=False)
    assert (tmp_path / "df.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()


def test_forest_cli_and_library_write_the_same_bytes(tmp_path: Path) -> None:
    _cli(["forest", "train", ADULT, "--schema", SCHEMA, "--epsilon", "1", "--trees", "3", "--depth", "2",
          "--seed", KEY, "-o", str(tmp_path / "cli.json"), "--report", str(tmp_path / "cli.report.json")])
    f = dpkit.forest(ADULT, schema=SCHEMA, epsilon=1, n_estimators=3, max_depth=2, random_state=KEY, output=tmp_path / "lib.json",
                     report=tmp_path / "lib.report.json")
    assert (tmp_path / "lib.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    cli_report = (tmp_path / "cli.report.json").read_text().replace(str(tmp_path / "cli.json"), "MODEL")
    lib_report = (tmp_path / "lib.report.json").read_text().replace(str(tmp_path / "lib.json"), "MODEL")
    assert cli_report == lib_report
    _cli(["forest", "predict", str(tmp_path / "cli.json"), ADULT_TEST, "--proba", "-o", str(tmp_path / "p.csv")])
    f.predictions(ADULT_TEST, proba=True, output=tmp_path / "q.csv")
    assert (tmp_path / "p.csv").read_bytes() == (tmp_path / "q.csv").read_bytes()


def test_cluster_cli_and_library_write_the_same_bytes(tmp_path: Path) -> None:
    s1 = str(REPO / "sample_data" / "clustering" / "s1.csv")
    _cli(["cluster", s1, "--columns", "x,y", "-k", "5", "--epsilon", "1", "--bounds", "0:1e6,0:1e6", "--seed", KEY,
          "--histogram", str(tmp_path / "ch.csv"), "--assign", str(tmp_path / "ca.csv"), "-o", str(tmp_path / "c.csv"),
          "--report", str(tmp_path / "c.json")])
    dpkit.cluster(s1, columns=["x", "y"], n_clusters=5, epsilon=1, bounds="0:1e6,0:1e6", random_state=KEY,
                  histogram=tmp_path / "lh.csv", assign=tmp_path / "la.csv", output=tmp_path / "l.csv",
                  report=tmp_path / "l.json")
    for a, b in (("c.csv", "l.csv"), ("ch.csv", "lh.csv"), ("ca.csv", "la.csv"), ("c.json", "l.json")):
        assert (tmp_path / a).read_bytes() == (tmp_path / b).read_bytes(), a
