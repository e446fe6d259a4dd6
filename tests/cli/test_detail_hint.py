"""The command line says its own flag for the owner's detail (`-v`), the library its call
(`dpkit.set_verbosity(True)`) — also in a result line, not only in warnings and errors (issue 43:
`make demo`'s `taxonomy validate` printed the Python hint)."""

from __future__ import annotations

import dpkit
from dpkit.cli import cli
from dpkit.cli.boundary import run

DATA = "sample_data/adult/train.csv"
SCHEMA = "taxonomies/adult.yaml"


def test_validate_says_v_on_the_command_line(capsys) -> None:  # noqa: ANN001
    assert run(cli, ["taxonomy", "validate", SCHEMA, DATA]) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "-v shows the detail" in text and "set_verbosity" not in text, text
    assert run(cli, ["taxonomy", "validate", SCHEMA, DATA, "--json"]) == 0
    captured = capsys.readouterr()
    assert "set_verbosity" not in captured.out + captured.err


def test_the_library_says_set_verbosity() -> None:
    result = dpkit.validate_schema(SCHEMA, DATA)
    assert "dpkit.set_verbosity(True) shows the detail" in result["message"] and "-v" not in result["message"]
