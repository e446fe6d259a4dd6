"""The shell side of a new user's first hour on a table of their own (issues 36/37): every
message one line, no traceback, a non-zero exit and no output file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner

from dpkit.cli import cli
from dpkit.cli.boundary import run as boundary_run


class _Entry:
    """CliRunner through dpkit's error boundary, as the console script runs (tests/cli/test_publish.py)."""

    name = "dpkit"

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **kw):  # noqa: ANN001
        raise SystemExit(boundary_run(cli, list(args or [])))


def invoke(argv: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(_Entry(), argv)
    return result.exit_code, result.stdout, result.stderr


def test_a_target_with_no_class_to_release_says_so_in_flags(tmp_path: Path) -> None:
    """A date column as the target (every value rare): the library's hint ``values={'d': [...]}``
    came out of the CLI garbled as ``--values{'d': [...]}``."""
    rng = np.random.default_rng(0)
    days = rng.integers(1, 28, 800)
    rows = [f"2021-03-{d:02d},{x}" for d, x in zip(days, rng.integers(0, 9, 800), strict=True)]
    (tmp_path / "t.csv").write_text("d,x\n" + "\n".join(rows) + "\n")
    code, _, err = invoke(["publish", str(tmp_path / "t.csv"), "--target", "d", "--epsilon", "1", "--delta", "1e-6",
                           "-o", str(tmp_path / "r.csv")])
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "no class of the target 'd'" in err and "--values" in err and "--values{" not in err, err
    assert not (tmp_path / "r.csv").exists()
