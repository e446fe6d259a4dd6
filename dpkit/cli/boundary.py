"""The error boundary between Click and the user (csvkit's conventions)."""

from __future__ import annotations

import os
import sys
import traceback
import warnings

import click

from dpkit.cli.options import reset_state, state_for


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    from dpkit.errors import DpkitWarning, PrivacyLeakWarning

    if state_for().quiet and not issubclass(category, PrivacyLeakWarning):
        return  # -q silences warnings, except that a release is not private
    label = "warning" if issubclass(category, DpkitWarning) else category.__name__
    click.echo(f"dpkit: {label}: {message}", err=True)


def _silence_stdout() -> None:
    # After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _exit_now(code: int) -> None:
    """End the process with ``code`` now, skipping interpreter finalization.

    If a C extension (numpy, xgboost, ...) was running Python code when Ctrl-C arrived,
    CPython remembers an "unhandled" KeyboardInterrupt even though we handled it, and at
    exit kills itself with SIGINT (status -2, not 130). Partial outputs are already gone
    (atomic_output removes its temp file on the way out), so nothing is lost by skipping
    the atexit handlers.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def run(cli: click.Group, argv: list[str] | None = None) -> int:
    """Run ``cli`` and return the process exit code."""
    from dpkit.errors import DpkitError

    reset_state()
    warnings.showwarning = _print_warning
    warnings.simplefilter("default")
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in args or "--verbose" in args
    try:
        # make_context + invoke rather than cli.main: main() turns EPIPE into a silent
        # sys.exit(1) (so `dpkit ... | head` exited 1) and KeyboardInterrupt into Abort;
        # the handlers below decide instead
        with cli.make_context("dpkit", args) as ctx:
            cli.invoke(ctx)
        return 0
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:
        # one line, like every other error (csvkit); Click's own block is three lines
        where = exc.ctx.command_path if exc.ctx is not None else "dpkit"
        click.echo(f"dpkit: error: {exc.format_message()} (see '{where} --help')", err=True)
        return 2
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (KeyboardInterrupt, click.Abort):
        click.echo("dpkit: interrupted", err=True)
        if argv is None:
            _exit_now(130)
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
