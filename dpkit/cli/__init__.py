"""The ``dpkit`` command line: a thin Click layer over the library.

Command modules import only Click and ``dpkit`` at module level (the library loads on the
first ``dpkit.<name>`` a command calls) so that ``dpkit --help`` starts fast. :func:`main` is the error boundary:
a :class:`~dpkit.errors.DpkitError` becomes one line on stderr and its exit code, usage
errors exit 2, Ctrl-C exits 130 and SIGTERM 143 leaving no partial file, and a closed
stdout (``| head``) ends quietly unless it lost a private run's output. ``--debug`` shows
tracebacks; ``-v`` the data owner's detail in messages. Bare ``dpkit`` prints the help; ``_DPKIT_COMPLETE=bash_source dpkit`` (or
``dpkit completion bash``) prints the shell-completion script.
"""

from __future__ import annotations

import os
import sys

import click

from dpkit import __version__
from dpkit.cli.options import CONTEXT_SETTINGS, global_options

#: the environment variable Click's shell completion talks through (``_<PROG>_COMPLETE``)
COMPLETE_VAR = "_DPKIT_COMPLETE"


@click.group(context_settings=CONTEXT_SETTINGS, invoke_without_command=True, no_args_is_help=False)
@click.version_option(__version__, "-V", "--version", prog_name="dpkit")
@global_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Privatize CSV data sets: differentially private releases, models and clusterings,
    and k-anonymous feature selection.

    \b
    Every privacy command writes a JSON report of the ε it spent. Run
    `dpkit COMMAND --help` for a command's options and an example, and
    `dpkit completion bash` for shell completion.
    """
    if ctx.invoked_subcommand is None:
        # bare `dpkit`: the help on stdout, exit 0 (like git, sqlite-utils)
        click.echo(ctx.get_help())


@click.command(name="completion", context_settings=CONTEXT_SETTINGS)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell-completion script for SHELL.

    \b
    Example:
      dpkit completion bash > ~/.local/share/bash-completion/completions/dpkit
      eval "$(dpkit completion zsh)"            # in ~/.zshrc
      dpkit completion fish > ~/.config/fish/completions/dpkit.fish
    """
    from click.shell_completion import get_completion_class

    comp_cls = get_completion_class(shell)
    assert comp_cls is not None  # the Choice above lists only shells Click knows
    click.echo(comp_cls(cli, {}, "dpkit", COMPLETE_VAR).source())


def _register() -> None:
    from dpkit.cli import budget, cluster, evaluate, forest, kanon, publish, report, taxonomy

    for cmd in (publish.command, publish.generalize, forest.command, cluster.command, kanon.command,
                evaluate.command, report.command, taxonomy.command, budget.command, completion):
        cli.add_command(cmd)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console entry point (``dpkit``) and ``python -m dpkit``."""
    if argv is None and os.environ.get(COMPLETE_VAR):
        # shell completion (`_DPKIT_COMPLETE=bash_source dpkit`, and every TAB press)
        from click.shell_completion import shell_complete

        sys.exit(shell_complete(cli, {}, "dpkit", COMPLETE_VAR, os.environ[COMPLETE_VAR]))
    from dpkit.cli.boundary import run

    code = run(cli, argv)
    if argv is None:
        import signal

        # the outcome is decided: a Ctrl-C while the interpreter exits must not turn a
        # complete run into a "killed by SIGINT" status (cron would retry and spend ε again)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(code)


__all__ = ["cli", "main", "os"]
