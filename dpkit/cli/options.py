"""Shared Click options, so a flag means the same in every command (as in sqlite-utils).

Also the config-file rule of DESIGN.md: ``--config FILE`` gives defaults, flags given on
the command line override them, and the report records the values actually used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@dataclass
class State:
    """Process-wide flags set by -v/--quiet wherever they appear on the command line."""

    verbose: bool = False
    quiet: bool = False


_STATE = State()


def state_for() -> State:
    return _STATE


def reset_state() -> None:
    """Forget -v/-q from a previous in-process invocation (tests, sweeps)."""
    _STATE.verbose = False
    _STATE.quiet = False
    from dpkit.console import set_verbose

    set_verbose(False)


def _set_verbose(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        _STATE.verbose = True
        from dpkit.console import set_verbose

        set_verbose(True)
    return value


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        _STATE.quiet = True
    return value


def global_options(f: Callable) -> Callable:
    """-v/--verbose and -q/--quiet, accepted by the group and by every command."""
    f = click.option(
        "-v", "--verbose", is_flag=True, expose_value=False, is_eager=True, callback=_set_verbose,
        help="Show tracebacks for errors.",
    )(f)
    f = click.option(
        "-q", "--quiet", is_flag=True, expose_value=False, is_eager=True, callback=_set_quiet,
        help="No progress or warnings on stderr (for cron); errors are still printed.",
    )(f)
    return f


#: spellings of a tab that a shell passes through literally (csvkit's -t, without $'\t')
_TAB_NAMES = {"\\t": "\t", "tab": "\t", "TAB": "\t"}


def _delimiter(ctx: click.Context, param: click.Parameter, value: str) -> str:
    return _TAB_NAMES.get(value, value)


def input_options(f: Callable) -> Callable:
    """--encoding and --delimiter for reading CSV input."""
    f = click.option(
        "--delimiter", "-d", default=",", show_default=True, metavar="CHAR", callback=_delimiter,
        help="Field delimiter of the input CSV ('\\t' or tab for TSV).",
    )(f)
    f = click.option(
        "--encoding", "-e", default="utf-8-sig", show_default=True,
        help="Text encoding of the input CSV (e.g. latin-1).",
    )(f)
    return f


def engine_options(f: Callable) -> Callable:
    """--engine numpy|spark ($DPKIT_ENGINE) and --spark-master, for commands that scan data."""
    f = click.option(
        "--spark-master", "spark_master", default=None, metavar="URL",
        help="Spark master for --engine spark [default: the session of spark-submit, else local[*]].",
    )(f)
    f = click.option(
        "--engine", "engine", type=click.Choice(["numpy", "spark"]), envvar="DPKIT_ENGINE", default=None,
        help="Where the data is read and counted: numpy (this process) or spark (a Spark cluster; "
        "pip install 'dpkit[spark]') [default: numpy; also $DPKIT_ENGINE].",
    )(f)
    return f


def read_options(p: dict[str, Any], path_key: str = "data") -> Any:
    """The :class:`~dpkit.data.source.ReadOptions` of a command's input."""
    from dpkit.data.source import ReadOptions

    return ReadOptions(path=str(p[path_key]), encoding=p["encoding"], delimiter=p["delimiter"])


def engine_of(p: dict[str, Any]) -> str:
    """The engine a command runs on (``--engine``, ``$DPKIT_ENGINE``, else numpy)."""
    from dpkit.engine import engine_name

    return engine_name(p.get("engine"))


def spark_args(p: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for :func:`dpkit.engine.load` on the Spark engine (none on numpy)."""
    return {"master": p.get("spark_master")} if engine_of(p) == "spark" else {}


def privacy_options(f: Callable) -> Callable:
    """--epsilon, --seed, --config and --ledger for every differentially private command."""
    f = click.option(
        "--ledger", type=click.Path(dir_okay=False), envvar="DPKIT_LEDGER", default=None,
        help="Privacy ledger (SQLite) that caps ε across runs; also $DPKIT_LEDGER.",
    )(f)
    f = click.option(
        "--seed", type=str, default=None, metavar="N",
        help="Reproducible noise for experiments; the report marks the release as seeded "
        "(not private against anyone who knows N).",
    )(f)
    f = click.option(
        "--config", "config", type=click.Path(dir_okay=False), default=None,
        help="YAML file of parameter defaults; flags on the command line override it.",
    )(f)
    f = click.option(
        "--epsilon", "--eps", "epsilon", type=str, default=None, metavar="ε",
        help="Total privacy budget ε > 0 for this run.",
    )(f)
    return f


def output_options(f: Callable) -> Callable:
    """-o/--output (required; '-' for stdout) and --report."""
    f = click.option(
        "--report", "report", type=click.Path(dir_okay=False), default=None,
        help="Where to write the JSON report (default: OUTPUT.report.json).",
    )(f)
    f = click.option(
        "-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True), required=True,
        help="Output file ('-' for stdout).",
    )(f)
    return f


def json_option(f: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True, help="Print results as JSON on stdout.")(f)


def default_report_path(output: str, report: str | None) -> str | None:
    """The report path: as given, else ``OUTPUT.report.json`` (none, with a warning, for stdout)."""
    if report:
        return report
    if output == "-":
        import warnings

        from dpkit.errors import DpkitWarning

        # the report is the record of what the run spent: losing it should not go unnoticed
        warnings.warn("no report written (the output goes to stdout); pass --report FILE to keep it",
                      DpkitWarning, stacklevel=2)
        return None
    base = output[:-4] if output.lower().endswith((".csv", ".tsv")) else output
    base = base[:-5] if base.lower().endswith(".json") else base
    return base + ".report.json"


def apply_config(ctx: click.Context, params: dict[str, Any], config: str | None, section: str) -> dict[str, Any]:
    """Fill parameters the user did not give on the command line from a YAML config file.

    The file is a mapping of option names (``levels``, ``selection-share`` or
    ``selection_share``) to values, optionally nested under the command's name
    (``publish: {levels: 13}``). Unknown keys are an error naming the file and key.
    """
    if not config:
        return params
    from dpkit.config import load_config

    values = load_config(config, section)
    # settable: the options a flag sets, by parameter name or long flag name (--schema is the
    # parameter schema_path); not the DATA argument, not -v/-q, not config/output/report
    known: dict[str, click.Parameter] = {}
    shown: list[str] = []
    for param in ctx.command.params:
        if (not isinstance(param, click.Option) or not param.expose_value or not param.name
                or param.name in ("config", "output", "report")):
            continue
        flags = [o.lstrip("-") for o in param.opts if o.startswith("--")]
        shown.append(flags[0] if flags else param.name)
        for alias in (param.name, *flags):
            known[alias.replace("-", "_")] = param
    out = dict(params)
    for key, value in values.items():
        param = known.get(key.replace("-", "_"))
        if param is None:
            from dpkit.errors import DpkitUsageError

            raise DpkitUsageError(
                f"{config}: unknown key {key!r} for 'dpkit {section}' (known: {', '.join(sorted(shown))})"
            )
        name = param.name
        source = ctx.get_parameter_source(name)
        if source in (click.core.ParameterSource.DEFAULT, None):
            try:
                # numbers in YAML are typed; options such as --epsilon parse strings themselves
                raw = str(value) if param.type == click.STRING and value is not None else value
                out[name] = param.type_cast_value(ctx, raw)
                if name == "delimiter":
                    out[name] = _delimiter(ctx, param, out[name])
            except click.BadParameter as exc:
                from dpkit.errors import DpkitUsageError

                raise DpkitUsageError(f"{config}: bad value for {key!r}: {exc.message}") from None
    return out
