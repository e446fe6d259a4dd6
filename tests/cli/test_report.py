"""`dpkit report` (issue 44): the release card from a report file; bad reports fail in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from card.cardhtml import CARDS, parse
from click.testing import CliRunner

from dpkit.cli import cli
from dpkit.cli.boundary import run as boundary_run

REPO = Path(__file__).resolve().parents[2]


class _Entry:
    """CliRunner through dpkit's error boundary, as the console script runs (exit codes, one line)."""

    name = "dpkit"

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **kw):  # noqa: ANN001
        raise SystemExit(boundary_run(cli, list(args or [])))


def invoke(*args: str):
    return CliRunner().invoke(_Entry(), list(args))


def one_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.mark.parametrize("kind", ["publish", "forest", "cluster", "kanon"])
def test_report_writes_a_card(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "card.html"
    result = invoke("report", str(CARDS / f"{kind}.report.json"), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "Owner only" not in html
    assert f"card {out}" in result.stderr and result.stdout == ""
    assert [t for tag, t in parse(html).headings if tag == "h2"][:2] == ["Guarantee", "Privacy spent by step"]


def test_report_to_stdout() -> None:
    result = invoke("report", str(CARDS / "cluster.report.json"), "-o", "-")
    assert result.exit_code == 0 and result.stdout.startswith("<!DOCTYPE html>") and result.stderr == ""


@pytest.mark.parametrize("content, message", [
    (None, "report file not found"),
    ("{not json", "not a dpkit report (invalid JSON"),
    ('{"rows": 3}', "not a dpkit report (no dpkit_version)"),
    ("\xff\xfe", "not a dpkit report"),
])
def test_a_missing_or_bad_report_fails_in_one_line(tmp_path: Path, content: str | None, message: str) -> None:
    rep = tmp_path / "r.report.json"
    if content is not None:
        rep.write_bytes(content.encode("latin-1") if content.startswith("\xff") else content.encode())
    out = tmp_path / "card.html"
    result = invoke("report", str(rep), "-o", str(out))
    assert result.exit_code == 1
    line = one_line(result)
    assert line.startswith("dpkit: error:") and message in line and str(rep) in line
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == (["r.report.json"] if content else [])


def test_output_is_required_and_old_card_untouched_on_failure(tmp_path: Path) -> None:
    assert invoke("report", str(CARDS / "cluster.report.json")).exit_code == 2
    out = tmp_path / "card.html"
    out.write_text("old")
    result = invoke("report", str(tmp_path / "missing.json"), "-o", str(out))
    assert result.exit_code == 1 and out.read_text() == "old"


def test_test_needs_a_release_beside_the_report(tmp_path: Path) -> None:
    rep = tmp_path / "adult.report.json"
    shutil.copy(CARDS / "publish.report.json", rep)
    data = json.loads(rep.read_text())
    data["parameters"]["schema"] = str(REPO / "taxonomies" / "adult.yaml")
    rep.write_text(json.dumps(data))
    out = tmp_path / "owner.html"
    result = invoke("report", str(rep), "-o", str(out), "--test", str(REPO / "sample_data/adult/test.csv"))
    assert result.exit_code == 2 and "--release" in one_line(result) and not out.exists()


def test_a_ledger_names_its_data_set(tmp_path: Path) -> None:
    import dpkit

    data = tmp_path / "d.csv"
    data.write_text("x,y\n1,a\n")
    ledger = tmp_path / "ledger.db"
    dpkit.register_dataset(ledger, data, "demo", cap=4)
    out = tmp_path / "card.html"
    result = invoke("report", str(CARDS / "cluster.report.json"), "-o", str(out), "--ledger", str(ledger))
    assert result.exit_code == 0, result.stderr
    page = parse(out.read_text())
    assert "The ledger" in [t for _, t in page.headings]
    assert any(s.title == "ε spent on the data set against its cap" for s in page.svgs)
    result = invoke("report", str(CARDS / "cluster.report.json"), "-o", str(out), "--ledger", str(ledger),
                    "--dataset", "other")
    assert result.exit_code == 1 and "no data set named 'other'" in one_line(result)


@pytest.mark.slow
def test_owner_card_of_a_publish_run(tmp_path: Path) -> None:
    """A real (small) run: the owner's card scores the release on the test rows, beside the raw
    baseline and the majority floor, with a ROC curve and the columns' distributions."""
    import dpkit

    train = tmp_path / "train.csv"
    test = tmp_path / "test.csv"
    lines = (REPO / "sample_data/adult/train.csv").read_text().splitlines()
    train.write_text("\n".join(lines[:4001]) + "\n")
    test.write_text("\n".join([lines[0], *lines[4001:6001]]) + "\n")
    dpkit.publish(train, schema=REPO / "taxonomies/adult.yaml", target="income", epsilon=1.0,
                  random_state="0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42", output=tmp_path / "rel.csv", report=tmp_path / "rel.report.json",
                  on_invalid="drop")
    out = tmp_path / "owner.html"
    result = invoke("report", str(tmp_path / "rel.report.json"), "-o", str(out), "--test", str(test),
                    "--baseline", str(train))
    assert result.exit_code == 0, result.stderr
    html = out.read_text()
    page = parse(html)
    assert "Owner only" in html and "owner only" in result.stderr
    titles = [s.title for s in page.svgs]
    assert any(t.startswith("ROC curve") for t in titles) and any(t.startswith("sex:") for t in titles)
    roc = next(s for s in page.svgs if s.title.startswith("ROC curve"))
    assert "this release: AUC" in roc.attrs["aria-label"] and "raw-data baseline: AUC" in roc.attrs["aria-label"]
    assert "majority class" in " ".join(page.text) and len(html) < 500_000


def test_a_histogram_that_is_not_one_fails_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "hist.csv"
    bad.write_text("x_lo,x_hi,count\n1,2,three\n")
    out = tmp_path / "card.html"
    result = invoke("report", str(CARDS / "cluster.report.json"), "-o", str(out), "--release", str(bad))
    assert result.exit_code == 1 and "column 'count' is not numbers" in one_line(result) and not out.exists()


@pytest.mark.parametrize("body", [
    {"release": {"cut": "x"}, "command": "publish"},
    {"spends": "y"},
    {"spends": [{"step": 3, "epsilon": "a lot"}]},
    {"privacy": [], "command": "cluster", "parameters": {"bounds": 3}},
    {"command": "forest train", "spends_by_tree": [{"levels": 1}]},
])
def test_a_report_of_another_shape_fails_in_one_line(tmp_path: Path, body: dict) -> None:
    rep = tmp_path / "odd.report.json"
    rep.write_text(json.dumps({"dpkit_version": "9", "report_version": 7, **body}))
    out = tmp_path / "card.html"
    result = invoke("report", str(rep), "-o", str(out))
    assert result.exit_code in (0, 1), result.stderr  # drawn, or refused in one line: never a traceback
    if result.exit_code == 1:
        assert "not a report this dpkit can draw" in one_line(result) and not out.exists()
