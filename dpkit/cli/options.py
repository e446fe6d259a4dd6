"""Shared Click options, so a flag means the same in every command (as in sqlite-utils).

Also the config-file rule (docs/formats.md): ``--config FILE`` gives defaults, flags given on
the command line override them, and the report records the values actually used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def reset_state() -> None:
    """Forget -v/-q from a previous in-process invocation (tests, sweeps)."""
    from dpkit.console import set_quiet, set_verbose

    set_verbose(False)
    set_quiet(False)


def _set_verbose(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    from dpkit.console import set_verbose

    if value:
        set_verbose(True)
    return value


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    from dpkit.console import set_quiet

    if value:
        set_quiet(True)
    return value


def say(message: str) -> None:
    """A progress or result line on stderr, unless -q (cron)."""
    from dpkit.console import quiet

    if not quiet():
        click.echo(message, err=True)


def global_options(f: Callable) -> Callable:
    """-v/--verbose, --debug and -q/--quiet, accepted by the group and by every command.

    Two things a Unix user asks for separately (issue 38): -v, more detail in the messages —
    here the data owner's private detail (exact counts, raw values and their lines) also when
    stderr is not a terminal; --debug, the traceback of an error, for a bug report (it implies
    -v: a traceback quotes the data anyway). The error boundary reads --debug from argv
    (:func:`dpkit.cli.boundary.run`), as an error may come before Click parses it."""
    f = click.option(
        "--debug", is_flag=True, expose_value=False, is_eager=True, callback=_set_verbose,
        help="Show the traceback of an error (for a bug report; implies -v).",
    )(f)
    f = click.option(
        "-v", "--verbose", is_flag=True, expose_value=False, is_eager=True, callback=_set_verbose,
        help="Show the data owner's detail in messages (exact counts, values and their lines) even "
        "when stderr is not a terminal.",
    )(f)
    f = click.option(
        "-q", "--quiet", is_flag=True, expose_value=False, is_eager=True, callback=_set_quiet,
        help="No progress or warnings on stderr (for cron); errors are still printed.",
    )(f)
    return f


#: spellings of a tab that a shell passes through literally (csvkit's -t, without $'\t')
_TAB_NAMES = {"\\t": "\t", "tab": "\t", "TAB": "\t"}
_META = "dpkit.read"  # ctx.meta key: the dialect flags that are not command parameters


def _delimiter(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    value = _TAB_NAMES.get(value, value)
    if len(value) != 1:
        from dpkit.errors import DpkitUsageError

        raise DpkitUsageError(f"--{param.name.replace('_', '-') if param.name else 'delimiter'} must be one "
                              f"character, got {value!r}")
    return value


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if param.name == "output_delimiter":
        value = _delimiter(ctx, param, value)
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


def input_options(f: Callable | None = None, *, short_tabs: bool = True) -> Callable:
    """How to read the input table (csvkit's flags): -e, -d (default: sniffed), -t, -H,
    --column-names; and --output-delimiter for CSV outputs.

    ``--encoding`` and ``--delimiter`` are command parameters (settable from --config);
    the others are read by :func:`read_options` / :func:`output_delimiter`, so a command
    needs no new parameters to honour them. ``short_tabs=False`` for a command whose -t
    means something else (kanon-select's --target): only --tabs then.
    """
    if f is None:
        return lambda g: input_options(g, short_tabs=short_tabs)
    f = click.option(
        "--output-delimiter", default=None, metavar="CHAR", expose_value=False, callback=_remember,
        help="Field delimiter of CSV outputs (default ','; 'tab' for TSV).",
    )(f)
    f = click.option(
        "--column-names", default=None, metavar="A,B,...", expose_value=False, callback=_remember,
        help="Column names of a headerless input (with -H); default c1, c2, ...",
    )(f)
    f = click.option(
        "-H", "--no-header-row", is_flag=True, expose_value=False, callback=_remember,
        help="The input has no header row (columns c1…cn, or --column-names).",
    )(f)
    f = click.option(
        *(("-t", "--tabs") if short_tabs else ("--tabs",)), is_flag=True, expose_value=False, callback=_remember,
        help="The input is tab-delimited (same as -d tab).",
    )(f)
    f = click.option(
        "--delimiter", "-d", default=None, metavar="CHAR", callback=_delimiter,
        help="Field delimiter of the input CSV ('\\t' or tab for TSV); default: sniffed among "
        "',' ';' tab '|' (a warning names it when it is not ',').",
    )(f)
    f = click.option(
        "--encoding", "-e", default="utf-8-sig", show_default=True,
        help="Text encoding of the input CSV (e.g. latin-1).",
    )(f)
    return f


def _flags() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_META, {}) if ctx is not None else {}


def read_options(path: str, encoding: str = "utf-8-sig", delimiter: str | None = None, *,
                 resolved: bool = True) -> Any:
    """The :class:`~dpkit.data.source.ReadOptions` of an input, from the command's flags.

    ``encoding``/``delimiter`` are the command's parameters (after --config); ``-t``, ``-H``
    and ``--column-names`` come from the current command line. ``resolved=False`` leaves the
    delimiter to be sniffed by the library call that reads the data (after its ledger check).
    """
    from dpkit import ReadOptions
    from dpkit.errors import DpkitUsageError

    flags = _flags()
    if flags.get("tabs"):
        if delimiter not in (None, "\t"):
            raise DpkitUsageError("-t/--tabs and --delimiter disagree; give one of them")
        delimiter = "\t"
    names = flags.get("column_names")
    header = not flags.get("no_header_row")
    columns = None
    if names is not None:
        if header:
            raise DpkitUsageError("--column-names names the columns of a headerless input; add -H")
        columns = tuple(n.strip() for n in names.split(","))
    from dpkit.data.table import resolve

    options = ReadOptions(str(path), encoding=encoding, delimiter=delimiter, header=header, column_names=columns)
    return resolve(options) if resolved else options


def output_delimiter() -> str:
    """The delimiter of CSV outputs (``--output-delimiter``, default ``,``)."""
    return _flags().get("output_delimiter") or ","


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


def engine_of(p: dict[str, Any]) -> str:
    """The engine a command runs on (``--engine``, ``$DPKIT_ENGINE``, else numpy)."""
    from dpkit.engine import engine_name

    return engine_name(p.get("engine"))


def privacy_options(f: Callable) -> Callable:
    """--epsilon, --seed, --config and --ledger for every differentially private command."""
    f = click.option(
        "--ledger", type=click.Path(dir_okay=False), envvar="DPKIT_LEDGER", default=None,
        help="Privacy ledger (SQLite) that caps ε across runs; also $DPKIT_LEDGER.",
    )(f)
    f = click.option(
        "--seed", type=str, default=None, metavar="N",
        help="Reproducible noise. A plain integer N is for experiments: the report says "
        "'guarantee: none (seeded: reproducible, not private)'. A secret key 0x + 32-64 hex "
        "digits (e.g. from `openssl rand -hex 16`) keeps the epsilon-DP guarantee.",
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


def declaration_options(f: Callable) -> Callable:
    """--numeric, --categorical, --integer, --date and --missing: public metadata a run without
    --schema is told, instead of learning it under DP (docs/domain.md, "Types and missing tokens")."""
    f = click.option("--missing", default=None, metavar="TOKENS",
                     help="Without --schema: the missing-value token(s), comma-separated ('none': none) "
                          "[default: learned under DP from a public list: '' ? NA N/A n/a null NULL None - nan].")(f)
    f = click.option("--date", default=None, metavar="A,B",
                     help="Without --schema: columns of ISO dates [default: types are learned under DP].")(f)
    f = click.option("--integer", default=None, metavar="A,B",
                     help="Without --schema: numeric columns of whole numbers.")(f)
    f = click.option("--categorical", default=None, metavar="A,B",
                     help="Without --schema: columns to read as categorical.")(f)
    return click.option("--numeric", default=None, metavar="A,B",
                        help="Without --schema: columns to read as numeric.")(f)


def declarations(p: dict) -> dict[str, Any]:
    """The declaration flags of ``p`` as the library's keywords (only those given)."""
    return {k: p[k] for k in ("numeric", "categorical", "integer", "date", "missing") if p.get(k) is not None}


def domain_options(f: Callable) -> Callable:
    """--delta, --domain-share, --ignore, --values and the declarations: a run without --schema
    learns its domain (docs/domain.md)."""
    f = declaration_options(f)
    f = click.option("--values", "public_values", multiple=True, metavar="COL=A,B,...",
                     help="Without --schema: a column's public value list, e.g. the target's classes "
                          "(taken as given, no budget spent; repeatable).")(f)
    f = click.option("--ignore", default=None, metavar="A,B",
                     help="Without --schema: columns to leave out of the learned schema (a sampling weight, "
                          "an identifier); no budget is spent on them.")(f)
    f = click.option("--domain-share", default=None, metavar="S",
                     help="Without --schema: the share of ε that learns the domain [default: 0.2].")(f)
    return click.option("--delta", default=None, metavar="δ",
                        help="Without --schema: the δ of the domain learning, e.g. 1e-6 (0 < δ ≤ 1e-3).")(f)


def pairs(items: tuple[str, ...] | None, flag: str) -> dict[str, str]:
    """``COL=TEXT`` flags as a mapping (a usage error naming ``flag`` otherwise)."""
    from dpkit.errors import DpkitUsageError

    out: dict[str, str] = {}
    for item in items or ():
        col, sep, text = item.partition("=")
        if not sep or not col.strip() or not text.strip():
            raise DpkitUsageError(f"{flag} takes COL=..., got {item!r}")
        if col.strip() in out:
            raise DpkitUsageError(f"{flag} gives column {col.strip()!r} twice")
        out[col.strip()] = text.strip()
    return out


def public_values(items: tuple[str, ...] | None) -> dict[str, list[str]] | None:
    """``--values COL=A,B`` flags as the library's ``values=`` (None when none is given)."""
    out = {c: [v.strip() for v in text.split(",") if v.strip()] for c, text in pairs(items, "--values").items()}
    return out or None


def on_invalid_option(f: Callable) -> Callable:
    """--on-invalid for the commands that read a schema's domain (publish, forest train)."""
    return click.option(
        "--on-invalid", type=click.Choice(["error", "drop"]), default=None,
        help="A record outside the schema's domain (a value outside its taxonomy, a missing value): "
        "'error' (default) refuses the run; 'drop' drops each such record on its own.",
    )(f)


def output_options(f: Callable) -> Callable:
    """-o/--output (default '-': stdout, as csvkit) and --report (required then)."""
    f = click.option(
        "--report", "report", type=click.Path(dir_okay=False), default=None,
        help="Where to write the JSON report (default: OUTPUT.report.json; required when the output goes to stdout).",
    )(f)
    f = click.option(
        "-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
        help="Output file [default: '-', stdout; then give --report FILE].",
    )(f)
    return f


def json_option(f: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True, help="Print results as JSON on stdout.")(f)


def default_report_path(output: str | None, report: str | None) -> str:
    """The report path: as given, else ``OUTPUT.report.json``; refused for stdout without --report."""
    if report:
        return report
    if output is None or output == "-":
        from dpkit.errors import DpkitUsageError

        # the report is the record of what the run spent: it is never silently lost, not
        # even under --quiet, so a run whose output goes to stdout must say where it goes
        raise DpkitUsageError("the output goes to stdout (no -o FILE), so the report needs a file: "
                              "give --report FILE")
    lower = output.lower()
    base = output
    for ext in (".csv", ".tsv", ".parquet", ".pq"):
        if lower.endswith(ext):
            base = output[: -len(ext)]
            break
    base = base[:-5] if base.lower().endswith(".json") else base
    return base + ".report.json"


def run_private(fn: Callable[..., Any], p: dict[str, Any], options: tuple[str, ...], /, *,
                files: dict[str, str | None] | None = None, **kwargs: Any) -> Any:
    """A private command's one call into the library: DATA and the flags every private command
    shares, the command's own ``options`` only when given (a flag or --config: every default is
    the library's), the report beside the output; then ``--json``."""
    from dpkit.run import check_distinct_paths

    report = default_report_path(p["output"], p["report"])
    check_distinct_paths([p.get("config")], [p["output"], report])
    given = {k: p[k] for k in options if p.get(k) is not None}
    result = fn(read_options(p["data"], p["encoding"], p["delimiter"], resolved=False), epsilon=p["epsilon"],
                random_state=p["seed"], ledger=p.get("ledger"), engine=p.get("engine"), spark_master=p.get("spark_master"),
                output=p["output"], report=report, **given, **kwargs)
    if p.get("as_json"):
        from dpkit.cli.results import emit_run_result

        emit_run_result(result.report, p["output"], report=report, **(files or {}))
    return result


def columns_of(text: str | None) -> list[str] | None:
    """``--columns A,B`` as a list (None when not given)."""
    return [c.strip() for c in str(text).split(",") if c.strip()] if text else None


def parse_columns(value: str | None, option: str) -> list[str] | None:
    """A comma-separated column list from the command line (``None`` when not given)."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    from dpkit.errors import DpkitUsageError

    if not names:
        raise DpkitUsageError(f"{option} needs at least one column name")
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise DpkitUsageError(f"{option} names column {n!r} twice")
        seen.add(n)
    return names
