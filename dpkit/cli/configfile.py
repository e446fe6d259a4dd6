"""``--config FILE`` on every command with options worth keeping (the rules: docs/formats.md, "Config files").

The file is read *before* Click parses the command line and handed to Click as the context's
``default_map``: a value from the file counts as a default, so it satisfies a required option, a
flag on the command line overrides it, and Click converts and checks it like a typed flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

import dpkit

CONFIG_HELP = "YAML file of option defaults (keys: long option names); flags on the command line override it."

#: options a config file cannot set (process-wide flags, and the file itself)
_NOT_SETTABLE = frozenset({"config", "help", "verbose", "debug", "quiet"})


def _config_path(args: Sequence[str]) -> str | None:
    """The value of ``--config`` in ``args`` (the last one wins, as for any Click option)."""
    found = None
    it = iter(args)
    for arg in it:
        if arg == "--":
            break
        if arg == "--config":
            found = next(it, None)
        elif arg.startswith("--config="):
            found = arg.split("=", 1)[1]
    return found


def settable(command: click.Command) -> dict[str, click.Option]:
    """Option aliases (parameter name and long flags, ``-`` spelt ``_``) → the option."""
    options = [p for p in command.params if isinstance(p, click.Option) and p.name and p.name not in _NOT_SETTABLE]
    return {alias.replace("-", "_"): p for p in options
            for alias in (p.name, *(o.lstrip("-") for o in p.opts + p.secondary_opts if o.startswith("--")))}


def load_config(path: str) -> dict[str, Any]:
    """The mapping a config file holds (an empty file: none), or a usage error naming the file
    (and the line and column of a YAML syntax error)."""
    from pathlib import Path

    import yaml

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise dpkit.DpkitUsageError(f"{p}: config file not found") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{p}:{mark.line + 1}:{mark.column + 1}" if mark else str(p)
        raise dpkit.DpkitUsageError(f"{where}: YAML syntax error: {exc.problem}") from None
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise dpkit.DpkitUsageError(f"{p}: cannot read config: {exc}") from None
    if data is not None and not isinstance(data, dict):
        raise dpkit.DpkitUsageError(f"{p}: a config file must be a mapping of option names to values")
    return dict(data or {})


def config_defaults(ctx: click.Context, command: click.Command, path: str, section: str) -> dict[str, Any]:
    """The ``default_map`` for ``command`` from the config file at ``path`` (its ``section``
    mapping when it has one)."""
    values = load_config(path)
    values = dict(values[section]) if isinstance(values.get(section), dict) else values
    known = settable(command)
    where = ctx.command_path or f"dpkit {command.name}"
    out: dict[str, Any] = {}
    for key, value in values.items():
        param = known.get(str(key).replace("-", "_"))
        if param is None:
            shown = sorted({next((o[2:] for o in p.opts if o.startswith("--")), p.name) for p in known.values()})
            raise dpkit.DpkitUsageError(f"{path}: unknown key {key!r} for '{where}' (known: {', '.join(shown)})")
        raw = str(value) if param.type == click.STRING and value is not None and not param.multiple else value
        try:
            param.type_cast_value(ctx, raw)  # checked here so that the error names the file
        except click.BadParameter as exc:
            raise dpkit.DpkitUsageError(f"{path}: bad value for {key!r}: {exc.message}") from None
        out[param.name] = raw
    return out


def add_config(command: click.Command, section: str) -> None:
    """Give ``command`` a ``--config FILE`` whose values become Click defaults (those of the
    file's ``section`` mapping when it has one).

    Adds the option when the command has none (not passed to the function: the values
    arrive as ordinary parameters), and reads the file in ``parse_args`` — before Click
    checks required options — so that ``schema: t.yaml`` satisfies ``--schema``.
    """
    if not any(p.name == "config" for p in command.params):
        command.params.append(click.Option(
            ["--config"], type=click.Path(dir_okay=False), default=None, expose_value=False,
            metavar="FILE", help=CONFIG_HELP,
        ))
    parse = command.parse_args

    def parse_args(ctx: click.Context, args: list[str]) -> list[str]:
        path = _config_path(args)
        if path and not ctx.resilient_parsing:  # not while completing a word in the shell
            ctx.default_map = {**(ctx.default_map or {}), **config_defaults(ctx, command, path, section)}
        return parse(ctx, args)

    command.parse_args = parse_args  # type: ignore[method-assign]
