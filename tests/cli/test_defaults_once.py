"""Defaults written once: an option of a command and the parameter of the library call it makes
share one default — the command line states none (None: the library's applies, or a config
file's) or the same one. The only differences are those of the medium, named here."""

from __future__ import annotations

import inspect

import click
import pytest

import dpkit
from dpkit.cli import cli
from dpkit.defaults import DEFAULT_ENCODING

#: (command path, the library call it makes)
PAIRS = [
    (("publish",), dpkit.publish),
    (("forest", "train"), dpkit.forest),
    (("cluster",), dpkit.cluster),
    (("kanon-select",), dpkit.kanon_select),
    (("generalize",), dpkit.generalize),
    (("taxonomy", "infer"), dpkit.infer_schema),
]

#: the medium's differences: a command writes to stdout unless told (the library returns the
#: result), and states the reader's default encoding in its help (the library passes None: the
#: reader's default, the same one)
MEDIUM = {"output": ("-", None), "encoding": (DEFAULT_ENCODING, None)}


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


def _unset(value: object) -> bool:
    return value is None or value == () or type(value).__name__ == "Sentinel"


@pytest.mark.parametrize(("path", "call"), PAIRS, ids=[" ".join(p) for p, _ in PAIRS])
def test_an_option_states_no_default_of_its_own(path: tuple[str, ...], call: object) -> None:
    params = inspect.signature(call).parameters
    shared = [p for p in _command(path).params if p.name in params]
    assert len(shared) >= 8, [p.name for p in shared]  # the test compares something
    for option in shared:
        library = params[option.name].default
        if library is inspect.Parameter.empty or _unset(option.default) or option.default == library:
            continue
        if option.name in MEDIUM:
            assert (option.default, library) == MEDIUM[option.name], option.name
            continue
        assert option.default == library, f"{' '.join(path)} --{option.name}: {option.default!r} vs {library!r}"


def test_the_check_catches_a_default_stated_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    option = next(p for p in _command(("publish",)).params if p.name == "algorithm")
    monkeypatch.setattr(option, "default", "diffgen")
    with pytest.raises(AssertionError, match="--algorithm"):
        test_an_option_states_no_default_of_its_own(("publish",), dpkit.publish)
