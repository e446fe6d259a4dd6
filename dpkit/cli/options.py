"""Shared Click options, so a flag means the same in every command (as in sqlite-utils); the
one helper that runs a private command's library call (:func:`run_private`); and how a command
shows its result (:func:`emit`): ``--json``, tables on a terminal, ``key: value`` lines on a pipe.

``--json`` goes to stdout, or to stderr when stdout carries the command's data (``-o -``), so
that a pipeline reads clean CSV while a wrapper still gets the result (docs/formats.md, "--json
results"). A run's object holds public facts only — the command, the privacy statement of its
report (ε budget and spent, k), the files written — never a count read from the private data.

Also the config-file rule (docs/formats.md): ``--config FILE`` gives defaults, flags given on
the command line override them, and the report records the values actually used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

import dpkit
from dpkit.defaults import DEFAULT_ENCODING

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

#: -q of the current invocation: purely the command line's (progress and warnings on stderr)
_QUIET = [False]


def stack(*options: Callable) -> Callable:
    """One decorator of several Click options, listed in the order ``--help`` shows them."""
    def apply(f: Callable) -> Callable:
        for option in reversed(options):
            f = option(f)
        return f
    return apply


def reset_state() -> None:
    """Forget -v/-q from a previous in-process invocation (tests, sweeps)."""
    dpkit.set_verbosity(False)
    _QUIET[0] = False


def quiet() -> bool:
    """True under -q: no progress or warnings on stderr (errors, and a release that is not
    private, still show)."""
    return _QUIET[0]


def _switch(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """-q sets the quiet state; -v and --debug the data owner's detail (:func:`dpkit.set_verbosity`)."""
    if value and param.name == "quiet":
        _QUIET[0] = True
    elif value:
        from dpkit import set_verbosity

        set_verbosity(True)
    return value


def dpkit_command(name: str, group: click.Group | None = None, *, cls: type | None = None, config: bool | str = False,
                  **settings: Any) -> Callable:
    """A dpkit command (``group``'s subcommand when given; ``cls=click.Group`` for a group): -h,
    the help width, ``settings`` (``short_help``, ...), and the global flags, last in --help.

    ``config``: the command takes ``--config FILE`` (:mod:`dpkit.cli.configfile`), whose values a
    file may nest under the command's name, joined to its group's by '-' (docs/formats.md), or
    under the key ``config`` names."""
    def make(f: Callable) -> Any:
        # the global flags go under the command's own options, as `@global_options` written last
        # did: Click lists the options of f.__click_params__ in reverse order of application
        own, f.__click_params__ = getattr(f, "__click_params__", []), []  # type: ignore[attr-defined]
        global_options(f).__click_params__ += own  # type: ignore[attr-defined]
        maker = group.command if group is not None else click.command
        context = {**CONTEXT_SETTINGS, **settings.pop("context_settings", {})}
        cmd = maker(name=name, context_settings=context, **({"cls": cls} if cls else {}), **settings)(f)
        if config:
            from dpkit.cli.configfile import add_config

            add_config(cmd, config if isinstance(config, str) else f"{group.name}-{name}" if group else name)
        return cmd
    return make


#: the command line's words for :data:`dpkit.errors.DETAIL_HINT` (its flag, not Python's call)
CLI_DETAIL_HINT = " (-v shows the detail)"


def cli_hint(text: str) -> str:
    """``text`` with the library's hint for the owner's detail (:func:`dpkit.set_verbosity`) in the
    command line's words (``-v``), wherever it is in the text."""
    from dpkit.errors import DETAIL_HINT

    return text.replace(DETAIL_HINT, CLI_DETAIL_HINT).replace(DETAIL_HINT.strip(" ()"), CLI_DETAIL_HINT.strip(" ()"))


def say(message: str) -> None:
    """A progress or result line on stderr, unless -q (cron)."""
    if not quiet():
        click.echo(cli_hint(message), err=True)


#: -v/--verbose, --debug and -q/--quiet, accepted by the group and by every command. Two things
#: a Unix user asks for separately: -v, more detail in the messages — here the data
#: owner's private detail (exact counts, raw values and their lines) also when stderr is not a
#: terminal; --debug, the traceback of an error, for a bug report (it implies -v: a traceback
#: quotes the data anyway). The error boundary reads --debug from argv
#: (:func:`dpkit.cli.boundary.run`), as an error may come before Click parses it.
global_options = stack(
    click.option("-q", "--quiet", is_flag=True, expose_value=False, is_eager=True, callback=_switch,
                 help="No progress or warnings on stderr (for cron); errors are still printed."),
    click.option("-v", "--verbose", is_flag=True, expose_value=False, is_eager=True, callback=_switch,
                 help="Show the data owner's detail in messages (exact counts, values and their lines) even "
                 "when stderr is not a terminal."),
    click.option("--debug", is_flag=True, expose_value=False, is_eager=True, callback=_switch,
                 help="Show the traceback of an error (for a bug report; implies -v)."),
)

#: spellings of a tab that a shell passes through literally (csvkit's -t, without $'\t')
_TAB_NAMES = {"\\t": "\t", "tab": "\t", "TAB": "\t"}
_META = "dpkit.read"  # ctx.meta key: the dialect flags that are not command parameters


def _delimiter(ctx: click.Context | None, param: click.Parameter | None, value: str | None) -> str | None:
    if value is None:
        return None
    value = _TAB_NAMES.get(value, value)
    if len(value) != 1:
        from dpkit.errors import DpkitUsageError

        flag = param.name.replace("_", "-") if param is not None and param.name else "delimiter"
        raise DpkitUsageError(f"--{flag} must be one character, got {value!r}")
    return value


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if param.name == "output_delimiter":
        value = _delimiter(ctx, param, value)
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


#: how to read the input table (csvkit's flags): -e, -d (default: sniffed), -t, -H,
#: --column-names; and --output-delimiter for CSV outputs. ``--encoding`` and ``--delimiter``
#: are command parameters (settable from --config); the others are read by :func:`read_options`
#: / :func:`output_delimiter`, so a command needs no new parameters to honour them.
input_options = stack(
    click.option("--encoding", "-e", default=DEFAULT_ENCODING, show_default=True,
                 help="Text encoding of the input CSV (e.g. latin-1)."),
    click.option("--delimiter", "-d", default=None, metavar="CHAR", callback=_delimiter,
                 help="Field delimiter of the input CSV ('\\t' or tab for TSV); default: sniffed among "
                 "',' ';' tab '|' (a warning names it when it is not ',')."),
    click.option("-t", "--tabs", is_flag=True, expose_value=False, callback=_remember,
                 help="The input is tab-delimited (same as -d tab)."),
    click.option("-H", "--no-header-row", is_flag=True, expose_value=False, callback=_remember,
                 help="The input has no header row (columns c1…cn, or --column-names)."),
    click.option("--column-names", default=None, metavar="A,B,...", expose_value=False, callback=_remember,
                 help="Column names of a headerless input (with -H); default c1, c2, ..."),
    click.option("--output-delimiter", default=None, metavar="CHAR", expose_value=False, callback=_remember,
                 help="Field delimiter of CSV outputs (default ','; 'tab' for TSV)."),
)


def _flags() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_META, {}) if ctx is not None else {}


def read_options(path: str, encoding: str = DEFAULT_ENCODING, delimiter: str | None = None, *,
                 resolved: bool = True) -> Any:
    """The :class:`dpkit.ReadOptions` of an input, from the command's flags.

    ``encoding``/``delimiter`` are the command's parameters (after --config); ``-t``, ``-H``
    and ``--column-names`` come from the current command line. ``resolved=False`` leaves the
    delimiter to be sniffed by the library call that reads the data (after its ledger check).
    """
    flags = _flags()
    if flags.get("tabs"):
        if delimiter not in (None, "\t"):
            raise dpkit.DpkitUsageError("-t/--tabs and --delimiter disagree; give one of them")
        delimiter = "\t"
    names = flags.get("column_names")
    header = not flags.get("no_header_row")
    if names is not None and header:
        raise dpkit.DpkitUsageError("--column-names names the columns of a headerless input; add -H")
    columns = None if names is None else tuple(n.strip() for n in names.split(","))
    options = dpkit.ReadOptions(str(path), encoding=encoding, delimiter=delimiter, header=header, column_names=columns)
    return options.sniffed() if resolved else options


def output_delimiter() -> str:
    """The delimiter of CSV outputs (``--output-delimiter``, default ``,``)."""
    return _flags().get("output_delimiter") or ","


#: --engine numpy|spark ($DPKIT_ENGINE; Click reads the variable, so a command's ``engine`` is the
#: engine it runs on, None for numpy) and --spark-master, for commands that scan data
engine_options = stack(
    click.option("--engine", "engine", type=click.Choice(["numpy", "spark"]), envvar="DPKIT_ENGINE", default=None,
                 help="Where the data is read and counted: numpy (this process) or spark (a Spark cluster; "
                 "pip install 'dpkit[spark]') [default: numpy; also $DPKIT_ENGINE]."),
    click.option("--spark-master", "spark_master", default=None, metavar="URL",
                 help="Spark master for --engine spark [default: the session of spark-submit, else local[*]]."),
)

#: --epsilon, --seed, --config and --ledger for every differentially private command
privacy_options = stack(
    click.option("--epsilon", "--eps", "epsilon", type=str, default=None, metavar="ε",
                 help="Total privacy budget ε > 0 for this run."),
    click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
                 help="YAML file of parameter defaults; flags on the command line override it."),
    click.option("--seed", type=str, default=None, metavar="N",
                 help="Reproducible noise. A plain integer N is for experiments: the report says "
                 "'guarantee: none (seeded: reproducible, not private)'. A secret key 0x + 32-64 hex "
                 "digits (e.g. from `openssl rand -hex 16`) keeps the epsilon-DP guarantee."),
    click.option("--ledger", type=click.Path(dir_okay=False), envvar="DPKIT_LEDGER", default=None,
                 help="Privacy ledger (SQLite) that caps ε across runs; also $DPKIT_LEDGER."),
)


def declaration_options(mode: str = "Without --schema", date_default: str = " [default: types are learned under DP]",
                        missing: bool = True) -> Callable:
    """--numeric, --categorical, --integer, --date (and --missing): public metadata a run is told
    instead of learning it under DP (docs/domain-reference.md, "Types and missing tokens"); ``mode`` starts
    each help line."""
    return stack(
        click.option("--numeric", default=None, metavar="A,B", help=f"{mode}: columns to read as numeric."),
        click.option("--categorical", default=None, metavar="A,B", help=f"{mode}: columns to read as categorical."),
        click.option("--integer", default=None, metavar="A,B", help=f"{mode}: numeric columns of whole numbers."),
        click.option("--date", default=None, metavar="A,B", help=f"{mode}: columns of ISO dates{date_default}."),
        *([click.option("--missing", default=None, metavar="TOKENS",
                        help=f"{mode}: the missing-value token(s), comma-separated ('none': none) [default: "
                        "learned under DP from a public list: '' ? NA N/A n/a null NULL None - nan].")]
          if missing else []),
    )


def declarations(p: dict) -> dict[str, Any]:
    """The declaration flags of ``p`` as the library's keywords (only those given)."""
    return {k: p[k] for k in ("numeric", "categorical", "integer", "date", "missing") if p.get(k) is not None}


def domain_keywords(p: dict) -> dict[str, Any]:
    """--schema, --target, --on-invalid and :data:`domain_options` as the library's keywords
    (publish, forest train)."""
    return dict(schema=p["schema_path"], target=p["target"], on_invalid=p.get("on_invalid") or "error",
                delta=p.get("delta"), domain_share=p.get("domain_share"), ignore=p.get("ignore"),
                keep=p.get("keep"), values=public_values(p.get("public_values")),
                bounds=public_bounds(p.get("public_bounds")), vocabulary=p.get("vocabulary"), **declarations(p))


#: --delta, --domain-share, --ignore, --values and the declarations: a run without --schema
#: learns its domain (docs/domain.md)
domain_options = stack(
    click.option("--delta", default=None, metavar="δ",
                 help="Without --schema: the δ of the domain learning, e.g. 1e-6 (0 < δ ≤ 1e-3); "
                 "with --schema unused (the domain is public: the run is ε-DP)."),
    click.option("--domain-share", default=None, metavar="S",
                 help="Without --schema: the share of ε that learns the domain [default: 0.2]."),
    click.option("--ignore", default=None, metavar="A,B",
                 help="Without --schema: columns to leave out of the learned schema (a sampling weight, "
                 "an identifier); no budget is spent on them."),
    click.option("--keep", default=None, metavar="A,B",
                 help="Without --schema: columns named like an identifier (id, *_id, CustomerId, RowNumber, "
                 "index, ...: left out by default, a rule on the name) to learn all the same."),
    click.option("--values", "public_values", multiple=True, metavar="COL=A,B,...",
                 help="Without --schema: a column's public value list, e.g. the target's classes "
                 "(taken as given, no budget spent; repeatable)."),
    click.option("--vocabulary", default=None, metavar="FILE", type=click.Path(dir_okay=False),
                 help="Without --schema: a YAML file of public value lists (name: [a, b, ...]) added to the "
                 "built-in ones (yes/no, 0/1, true/false, male/female, months, weekdays): their values are "
                 "listed when their noisy counts clear a pure-ε threshold (docs/domain.md)."),
    click.option("--bounds", "public_bounds", multiple=True, metavar="COL=LO:HI",
                 help="Without --schema: a numeric column's public bounds (taken as given, no budget spent; "
                 "repeatable)."),
    declaration_options(),
)


def pairs(items: tuple[str, ...] | None, flag: str) -> dict[str, str]:
    """``COL=TEXT`` flags as a mapping (a usage error naming ``flag`` otherwise)."""
    out: dict[str, str] = {}
    for item in items or ():
        col, sep, text = item.partition("=")
        if not sep or not col.strip() or not text.strip():
            raise dpkit.DpkitUsageError(f"{flag} takes COL=..., got {item!r}")
        if col.strip() in out:
            raise dpkit.DpkitUsageError(f"{flag} gives column {col.strip()!r} twice")
        out[col.strip()] = text.strip()
    return out


def public_bounds(items: tuple[str, ...] | None) -> dict[str, str] | None:
    """``--bounds COL=LO:HI`` flags as the library's ``bounds=`` (None when none is given): the
    ``LO:HI`` text, which the library parses as it parses cluster's ``bounds``."""
    out = pairs(items, "--bounds")
    return out or None


def public_values(items: tuple[str, ...] | None) -> dict[str, list[str]] | None:
    """``--values COL=A,B`` flags as the library's ``values=`` (None when none is given)."""
    out = {c: [v.strip() for v in text.split(",") if v.strip()] for c, text in pairs(items, "--values").items()}
    return out or None


#: --on-invalid for the commands that read a schema's domain (publish, forest train)
on_invalid_option = click.option(
    "--on-invalid", type=click.Choice(["error", "drop"]), default=None,
    help="A record outside the schema's domain (a value outside its taxonomy, a missing value): "
    "'error' (default) refuses the run; 'drop' drops each such record on its own.",
)

#: -o/--output (default '-': stdout, as csvkit) and --report (required then)
output_options = stack(
    click.option("-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
                 help="Output file [default: '-', stdout; then give --report FILE]."),
    click.option("--report", "report", type=click.Path(dir_okay=False), default=None,
                 help="Where to write the JSON report (default: OUTPUT.report.json; required when the output "
                 "goes to stdout)."),
)

json_option = click.option("--json", "as_json", is_flag=True, help="Print results as JSON on stdout.")

json_result_option = click.option(
    "--json", "as_json", is_flag=True,
    help="Print the result as one JSON object on stdout (on stderr when the output is stdout).",
)


#: what a private run writes and how (publish, forest train): ε, seed, --config, ledger;
#: --on-invalid; -o and --report; --json
run_options = stack(privacy_options, on_invalid_option, output_options, json_result_option)


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
    base = next((output[: -len(ext)] for ext in (".csv", ".tsv", ".parquet", ".pq") if output.lower().endswith(ext)),
                output)
    return (base[:-5] if base.lower().endswith(".json") else base) + ".report.json"


def run_private(fn: Callable[..., Any], p: dict[str, Any], options: tuple[str, ...], /, *,
                files: dict[str, str | None] | None = None, **kwargs: Any) -> Any:
    """A private command's one call into the library: DATA and the flags every private command
    shares, the command's own ``options`` only when given (a flag or --config: every default is
    the library's), the report beside the output; then ``--json``."""
    report = default_report_path(p["output"], p["report"])
    dpkit.check_output_paths([p.get("config")], [p["output"], report])
    given = {k: p[k] for k in options if p.get(k) is not None}
    result = fn(read_options(p["data"], p["encoding"], p["delimiter"], resolved=False), epsilon=p["epsilon"],
                random_state=p["seed"], ledger=p.get("ledger"), engine=p.get("engine"), spark_master=p.get("spark_master"),
                output=p["output"], report=report, **given, **kwargs)
    if p.get("as_json"):
        emit_run_result(result.report, p["output"], report=report, **(files or {}))
    return result


def columns_of(text: str | None) -> list[str] | None:
    """``--columns A,B`` as a list (None when not given)."""
    return [c.strip() for c in str(text).split(",") if c.strip()] if text else None


def parse_columns(value: str | None, option: str) -> list[str] | None:
    """A comma-separated column list from the command line (``None`` when not given); empty or
    with a name twice: a usage error naming ``option``."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise dpkit.DpkitUsageError(f"{option} needs at least one column name")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise dpkit.DpkitUsageError(f"{option} names column {twice!r} twice")
    return names


#: a table: (title, header, rows), every cell a string
Table = tuple[str, tuple[str, ...], list[tuple[str, ...]]]


def emit(as_json: bool, result: Any, tables: list[Table] | None = None, lines: list[str] | None = None, *,
         ascii: bool = True, data_on_stdout: bool = False) -> None:
    """``result`` as JSON under --json (``ascii``: non-ASCII escaped, as the command always did);
    else ``tables`` (:func:`show`), or else ``lines``."""
    if as_json:
        import json

        click.echo(cli_hint(json.dumps(result, indent=2, ensure_ascii=ascii, default=str)), err=data_on_stdout)
    elif tables is not None:
        show(tables, lines)
    elif lines is not None:
        click.echo(cli_hint("\n".join(lines)))


def emit_run_result(doc: dict[str, Any], output: str, /, extra: dict[str, Any] | None = None, **files: str | None) -> None:
    """``--json`` of a run that wrote ``output`` (``-`` = stdout): the public summary of its
    report ``doc`` — command, algorithm, privacy statement, the files written — and ``extra``."""
    emit(True, {"command": doc.get("command"), "algorithm": doc.get("algorithm"), "privacy": dict(doc.get("privacy") or {}),
                "files": {k: v for k, v in {"output": output, **files}.items() if v}, **(extra or {})},
         ascii=False, data_on_stdout=output == "-")


def show(tables: list[Table], lines: list[str] | None = None) -> None:
    """Rich tables on a terminal; on a pipe ``lines``, or else each table as tab-separated lines."""
    import sys

    if not sys.stdout.isatty():
        for line in lines if lines is not None else ["\t".join(r) for _, h, rows in tables for r in (h, *rows)]:
            click.echo(cli_hint(line))
        return
    from rich.console import Console
    from rich.table import Table as RichTable

    for title, header, rows in tables:
        table = RichTable(title=title)
        for i, h in enumerate(header):
            # long cells (paths) fold; ε and status stay on one line; numbers align right
            table.add_column(h, overflow="fold", no_wrap=h in ("ε", "status"),
                             justify="right" if i and rows and _numeric(rows[0][i]) else "left")
        for row in rows:
            table.add_row(*row)
        Console().print(table)


def _numeric(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True
