"""The command-line frame: the command list, --version/-h, stubs, lazy imports, help examples."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from dpkit import __version__
from dpkit.cli import cli
from dpkit.cli.boundary import run

CONTRACT = ["publish", "forest", "cluster", "kanon-select", "evaluate", "taxonomy", "generalize", "budget"]


def dpkit(capsys, *args) -> tuple[int, str, str]:
    code = run(cli, [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def is_stub(cmd: click.Command) -> bool:
    return "not built yet" in (cmd.help or "").lower()


def all_commands(group: click.Group = cli, prefix: tuple[str, ...] = ()):
    """Every (path, command) below ``group``, groups included."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield (*prefix, name), cmd
        if isinstance(cmd, click.Group):
            yield from all_commands(cmd, (*prefix, name))


COMMANDS = list(all_commands())


def test_help_lists_the_contract(capsys):
    for flag in ("--help", "-h"):
        code, out, _ = dpkit(capsys, flag)
        assert code == 0
        listed = out.split("Commands:", 1)[1]
        names = {line.split()[0] for line in listed.splitlines() if line.strip()}
        assert set(CONTRACT) <= names, sorted(set(CONTRACT) - names)


def test_version(capsys):
    code, out, _ = dpkit(capsys, "--version")
    assert code == 0 and out.strip() == f"dpkit, version {__version__}"


def test_unknown_command_is_usage_error(capsys):
    code, _, err = dpkit(capsys, "frobnicate")
    assert code == 2 and "No such command" in err


@pytest.mark.parametrize("name", [n for n in CONTRACT if is_stub(cli.commands[n])] or ["<none>"])
def test_unbuilt_command_exits_2_plainly(capsys, name):
    if name == "<none>":
        pytest.skip("every command of the contract is built")
    code, out, err = dpkit(capsys, name, "whatever", "--flag")
    assert code == 2
    assert "not built yet" in err and "Traceback" not in err and out == ""


def test_import_is_light():
    """`import dpkit.cli` (what `dpkit --help` pays for) loads no heavy library."""
    heavy = ["pandas", "numpy", "sklearn", "xgboost", "scipy", "matplotlib"]
    code = (
        "import sys, dpkit.cli; "
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"imported at start-up: {proc.stdout.strip()}"


def test_python_dash_m_help():
    proc = subprocess.run([sys.executable, "-m", "dpkit", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Commands:" in proc.stdout and proc.stderr == ""
    proc = subprocess.run([sys.executable, "-m", "dpkit", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and __version__ in proc.stdout


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_every_command_has_help_with_example(capsys, path):
    cmd = dict(COMMANDS)[path]
    if is_stub(cmd):
        pytest.skip(f"dpkit {' '.join(path)} is not built yet")
    code, out, err = dpkit(capsys, *path, "--help")
    assert code == 0, err
    if isinstance(cmd, click.Group):
        # a group's help lists its commands; the examples live on them (checked too)
        assert "Commands:" in out
        return
    assert "Example" in out, f"dpkit {' '.join(path)} --help has no example"
    assert f"dpkit {path[0]}" in out.split("Example", 1)[1]
    code, out2, err2 = dpkit(capsys, *path, "-h")
    assert code == 0 and out2 == out, err2


def test_every_command_is_shown_in_the_readme():
    # sqlite-utils' rule: a command nobody can find in the README does not exist for users
    from pathlib import Path

    import click

    from dpkit.cli import cli

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    missing = []
    for name, cmd in cli.commands.items():
        subs = cmd.commands if isinstance(cmd, click.Group) else {"": cmd}
        for sub in subs:
            phrase = f"dpkit {name} {sub}".strip()
            if phrase not in readme:
                missing.append(phrase)
    assert not missing, f"commands not in README.md: {missing}"
