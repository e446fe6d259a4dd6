"""One meaning per short option (issue 23): `-t` is `--tabs` wherever it exists (csvkit's
meaning), and no command defines a short option twice (click warned on every call)."""

from __future__ import annotations

import subprocess
import sys

import click

from dpkit.cli import cli


def _commands(group: click.Command, path: tuple[str, ...] = ()):  # noqa: ANN202
    yield path, group
    if isinstance(group, click.Group):
        for name, sub in group.commands.items():
            yield from _commands(sub, (*path, name))


def test_no_short_option_twice_and_t_is_tabs() -> None:
    checked = 0
    for path, cmd in _commands(cli):
        seen: dict[str, str] = {}
        for param in cmd.params:
            for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
                if opt.startswith("-") and not opt.startswith("--"):
                    assert opt not in seen, f"dpkit {' '.join(path)}: {opt} is {seen[opt]} and {param.name}"
                    seen[opt] = param.name
        if "-t" in seen:
            assert seen["-t"] == "tabs", f"dpkit {' '.join(path)}: -t is --{seen['-t']}, not --tabs"
            checked += 1
    assert checked >= 5


def test_evaluate_kanon_help_prints_no_warning() -> None:
    res = subprocess.run([sys.executable, "-m", "dpkit", "evaluate", "kanon", "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "UserWarning" not in res.stderr and "used more than once" not in res.stderr
