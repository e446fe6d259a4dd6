"""Suite-wide fixtures."""

import pytest
from hypothesis import settings

from dpkit.cli.options import reset_state

# No per-example deadline (CI machines are slow and shared) and a fixed example sequence, so
# a property test fails the same way on every run; explicit @settings still override this.
settings.register_profile("dpkit", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("dpkit")


@pytest.fixture(autouse=True)
def _fresh_cli_state():
    """-q/-v are process-wide flags; one CliRunner test must not silence the next."""
    reset_state()
    yield
    reset_state()


@pytest.fixture
def owner_verbose():
    """As with -v: messages carry exact counts and values (dpkit.console.private)."""
    from dpkit.console import set_verbose

    set_verbose(True)
    yield
    set_verbose(False)
