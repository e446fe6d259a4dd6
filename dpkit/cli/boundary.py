"""The error boundary between Click and the user (csvkit's conventions)."""

from __future__ import annotations

import os
import sys
import traceback
import warnings

import click

from dpkit.cli.options import state_for


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    from dpkit.errors import DpkitWarning

    if state_for().quiet:
        return
    label = "warning" if issubclass(category, DpkitWarning) else category.__name__
    click.echo(f"dpkit: {label}: {message}", err=True)


def _silence_stdout() -> None:
    # After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run(cli: click.Group, argv: list[str] | None = None) -> int:
    """Run ``cli`` and return the process exit code."""
    from dpkit.errors import DpkitError

    warnings.showwarning = _print_warning
    warnings.simplefilter("default")
    verbose = "-v" in (argv or sys.argv[1:]) or "--verbose" in (argv or sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="dpkit", standalone_mode=False)
        return 0
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:
        exc.show()
        return 2
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (KeyboardInterrupt, click.Abort):
        click.echo("dpkit: interrupted", err=True)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except DpkitError as exc:
        if verbose:
            traceback.print_exc()
        click.echo(f"dpkit: error: {exc}", err=True)
        return exc.exit_code
    except MemoryError:
        click.echo("dpkit: error: out of memory; try a smaller input or fewer levels/cells", err=True)
        return 1
    except Exception as exc:  # a bug, not the user's fault: say so, and how to see more
        if verbose:
            traceback.print_exc()
        else:
            click.echo(
                f"dpkit: internal error: {type(exc).__name__}: {exc} "
                "(this is a bug; rerun with -v for the traceback and report it)",
                err=True,
            )
        return 70
