"""Fixtures of the command-line tests."""

import pytest

from dpkit.cli.options import reset_state


@pytest.fixture(autouse=True)
def _fresh_cli_state():
    """-q/-v are process-wide flags; one CliRunner test must not silence the next."""
    reset_state()
    yield
    reset_state()
