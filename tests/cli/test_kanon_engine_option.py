"""kanon-select's --engine refusals, made before Spark starts (docs/errors.md, spark-kanon-check)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from dpkit.cli import cli as main

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data/adult/train.csv"
SCHEMA = ROOT / "taxonomies/adult.yaml"


def _invoke(args: list) -> tuple[int, str]:
    """Through dpkit's error boundary, as the shell would: (exit code, stderr)."""
    from dpkit.cli.boundary import run as boundary_run

    with CliRunner().isolation() as (_, err, _):
        code = boundary_run(main, [str(a) for a in args])
    return code, err.getvalue().decode(errors="replace")


def test_check_only_and_generalize_are_refused_on_spark(tmp_path, monkeypatch):
    out = tmp_path / "out.csv"
    for args, flag in (([ADULT, "-k", "2", "--check-only", "--qi", "sex"], "--check-only"),
                       ([ADULT, "-k", "2", "--generalize", "--schema", SCHEMA, "-o", out], "--generalize")):
        code, err = _invoke(["kanon-select", *args, "--engine", "spark"])
        assert code == 2, err
        assert f"kanon-select {flag} runs on --engine numpy only" in err
        assert not out.exists()
    monkeypatch.setenv("DPKIT_ENGINE", "spark")  # cron's way: the same refusal
    code, err = _invoke(["kanon-select", ADULT, "-k", "2", "--check-only", "--qi", "sex"])
    assert code == 2 and "--engine numpy only" in err
