"""Suite-wide fixtures."""

import pytest
from hypothesis import settings

# No per-example deadline (CI machines are slow and shared) and a fixed example sequence, so
# a property test fails the same way on every run; explicit @settings still override this.
settings.register_profile("dpkit", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("dpkit")


@pytest.fixture(autouse=True)
def _fresh_console():
    """The owner's verbosity is process-wide: one test's must not leak into the next (the CLI's
    -q/-v are reset by tests/cli/conftest.py)."""
    from dpkit.console import set_verbose

    set_verbose(False)
    yield
    set_verbose(False)


@pytest.fixture
def owner_verbose():
    """As with -v: messages carry exact counts and values (dpkit.console.private)."""
    from dpkit.console import set_verbose

    set_verbose(True)
    yield
    set_verbose(False)
