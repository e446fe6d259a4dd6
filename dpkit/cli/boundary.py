"""The error boundary between Click and the user (csvkit's conventions)."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import sys
import threading
import traceback
import warnings

import click

import dpkit
from dpkit.cli.options import quiet, reset_state


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    if quiet() and not issubclass(category, dpkit.PrivacyLeakWarning):
        return  # -q silences warnings, except that a release is not private
    label = "warning" if issubclass(category, dpkit.DpkitWarning) else category.__name__
    click.echo(f"dpkit: {label}: {cli_message(message)}", err=True)


def _silence_stdout() -> None:
    # After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _exit_now(code: int) -> None:
    """End the process with ``code`` now, skipping interpreter finalization.

    If a C extension (numpy, xgboost, ...) was running Python code when Ctrl-C arrived,
    CPython remembers an "unhandled" KeyboardInterrupt even though we handled it, and at
    exit kills itself with SIGINT (status -2, not 130). Partial outputs are already gone
    (atomic_output removes its temp file on the way out), so nothing is lost by skipping
    the atexit handlers.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a plain ``kill PID``): handled like Ctrl-C — outputs removed, a ledger
    reservation settled, a sweep resumable — but the process exits 143 (128 + 15)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def _interrupt_code(exc: BaseException, runs: list) -> tuple[int, str]:
    """Exit code and message for Ctrl-C/SIGTERM: 0 when the command made private runs
    (:func:`dpkit.private_runs`) and every one had completed: cron must not retry and spend ε again."""
    if runs and all(r.error is None for r in runs):
        return 0, "dpkit: interrupted after the run had completed; its outputs are complete"
    return (143, "dpkit: terminated") if isinstance(exc, Terminated) else (130, "dpkit: interrupted")


def _lost_output_message(runs: list) -> str | None:
    """The error for a closed stdout that cost a private run its output, if it did."""
    lost = [r for r in runs if r.error == "BrokenPipeError"]
    if not lost:
        return None
    cost = "its ε was spent (and counted in --ledger, if any)" if lost[-1].noise_drawn else "no ε was spent"
    return (f"dpkit: error: {lost[-1].command}: standard output was closed before the output was complete: "
            f"the release is lost and {cost}; write to a file with -o FILE instead of a pipe that closes early")


#: flags whose spelling is not ``--`` + the parameter name with dashes
FLAGS = {"k": "-k", "schema_path": "--schema", "cut_path": "--cut", "l": "--l", "output": "-o",
         # the library's scikit-learn names (docs/library.md, "Names"); the flags keep theirs
         "n_clusters": "-k", "n_estimators": "--trees", "max_depth": "--depth", "random_state": "--seed"}


def flag(param: str) -> str:
    """The command-line spelling of the library parameter ``param`` (``selection_share`` ->
    ``--selection-share``)."""
    return FLAGS.get(param, "--" + param.replace("_", "-"))


@functools.cache
def _parameter_names() -> frozenset[str]:
    """Every parameter name of every dpkit command (the names a library message may mention)."""
    from dpkit.cli import cli

    def names(cmd: click.Command) -> list[str]:
        return [p.name for p in cmd.params if p.name] + [n for c in getattr(cmd, "commands", {}).values() for n in names(c)]

    return frozenset({*FLAGS, *names(cli)})


def one_line(text: str) -> str:
    """``text`` on one line, whatever the data holds: a value quoted from a cell (or a library's
    own message) may carry a line break; it is written ``\\n``."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def cli_message(exc: BaseException) -> str:
    """The error's message as the command line says it: the library names a parameter
    (``levels must be ...``), the CLI its flag (``--levels must be ...``). A keyword mentioned as
    Python spells it (``pass delimiter=``, ``name='value'``) becomes the flag (``--name value``);
    a message about a parameter that neither starts with nor mentions it gets the flag after it,
    in brackets. A line break in the message (from a quoted data value) is written ``\\n``."""
    from dpkit.cli.options import cli_hint

    text = one_line(cli_hint(str(exc)))  # the flag in Python's words' place; one line
    param = getattr(exc, "param", None)
    names = _parameter_names() | ({param} if param else set())
    mention = re.compile(r"(?<![\w-])([a-z_]+)=(?:'([^']*)'|(?!\w))")
    mentioned = False

    def sub(m: re.Match[str]) -> str:
        nonlocal mentioned
        if m.group(1) not in names:
            return m.group(0)
        mentioned = mentioned or m.group(1) == param
        return flag(m.group(1)) + (f" {m.group(2)}" if m.group(2) is not None else "")

    text = mention.sub(sub, text)
    if not param or mentioned:
        return text
    if re.match(rf"{re.escape(param)}(?!\w)", text):  # starts with the name (not a longer one)
        return flag(param) + text[len(param):]
    return f"{text} ({flag(param)})"


def run(cli: click.Group, argv: list[str] | None = None) -> int:
    """Run ``cli`` and return the process exit code; meanwhile SIGTERM raises :class:`Terminated`
    (in the main thread: elsewhere Python receives no signal)."""
    if threading.current_thread() is not threading.main_thread():
        return _run(cli, argv)
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _run(cli, argv)
    finally:
        signal.signal(signal.SIGTERM, old)


def _run(cli: click.Group, argv: list[str] | None = None) -> int:
    reset_state()
    before = len(dpkit.private_runs())  # this command's runs are those after
    warnings.showwarning = _print_warning
    warnings.simplefilter("default")
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args  # tracebacks; -v is the owner's detail only (options.global_options)
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
    except (KeyboardInterrupt, click.Abort) as exc:
        code, message = _interrupt_code(exc, dpkit.private_runs()[before:])
        click.echo(message, err=True)
        if argv is None:
            _exit_now(code)
        return code
    except BrokenPipeError:
        _silence_stdout()
        # `| head` on a listing is fine; on a private release it lost what ε paid for:
        # say so (even under --quiet: it is an error) and fail
        message = _lost_output_message(dpkit.private_runs()[before:])
        if message:
            click.echo(message, err=True)
            return 1
        return 0
    except dpkit.DpkitError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"dpkit: error: {cli_message(exc)}", err=True)
        return exc.exit_code
    except MemoryError:
        click.echo("dpkit: error: out of memory; try a smaller input or fewer levels/cells", err=True)
        return 1
    except Exception as exc:  # a bug, not the user's fault: say so, and how to see more
        if debug:
            traceback.print_exc()
        else:
            click.echo(f"dpkit: internal error: {type(exc).__name__}: {one_line(str(exc))} "
                       "(this is a bug; rerun with --debug for the traceback and report it)", err=True)
        return 70
