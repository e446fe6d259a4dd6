"""How a command shows its result: ``--json`` (docs/formats.md, "--json results"), tables on a
terminal, ``key: value`` lines on a pipe.

JSON goes to stdout, or to stderr when stdout carries the command's data (``-o -``), so that a
pipeline reads clean CSV while a wrapper still gets the result. A run's object holds public
facts only — the command, the privacy statement of its report (ε budget and spent, k), the
files written — never a count read from the private data.
"""

from __future__ import annotations

from typing import Any

import click

#: a table: (title, header, rows), every cell a string
Table = tuple[str, tuple[str, ...], list[tuple[str, ...]]]

json_result_option = click.option(
    "--json", "as_json", is_flag=True,
    help="Print the result as one JSON object on stdout (on stderr when the output is stdout).",
)


def emit(as_json: bool, result: Any, tables: list[Table] | None = None, lines: list[str] | None = None, *,
         ascii: bool = True, data_on_stdout: bool = False) -> None:
    """``result`` as JSON under --json (``ascii``: non-ASCII escaped, as the command always did);
    else ``tables`` (:func:`show`), or else ``lines``."""
    if as_json:
        import json

        click.echo(json.dumps(result, indent=2, ensure_ascii=ascii, default=str), err=data_on_stdout)
    elif tables is not None:
        show(tables, lines)
    elif lines is not None:
        click.echo("\n".join(lines))


def run_result(doc: dict[str, Any], /, **files: str | None) -> dict[str, Any]:
    """The public summary of a run's report ``doc``: command, algorithm, privacy statement, files."""
    return {"command": doc.get("command"), "algorithm": doc.get("algorithm"),
            "privacy": dict(doc.get("privacy") or {}), "files": {k: v for k, v in files.items() if v}}


def emit_run_result(doc: dict[str, Any], output: str, /, **files: str | None) -> None:
    """``--json`` of a run (report ``doc``) that wrote ``output`` (``-`` = stdout)."""
    emit(True, run_result(doc, output=output, **files), ascii=False, data_on_stdout=output == "-")


def show(tables: list[Table], lines: list[str] | None = None) -> None:
    """Rich tables on a terminal; on a pipe ``lines``, or else each table as tab-separated lines."""
    import sys

    if not sys.stdout.isatty():
        for line in lines if lines is not None else ["\t".join(r) for _, h, rows in tables for r in (h, *rows)]:
            click.echo(line)
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
