"""Each private command's parameter declaration (dpkit.api.spec) holds: the library signature
has exactly its parameters, in its order, with its defaults; the docstring documents each; the
command line has its flag with the same choices; and a value outside a declared choice or
interval is refused naming the parameter, before anything is written."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import click
import pytest

import dpkit
from dpkit.api import cluster as cluster_api
from dpkit.api import domain as domain_api
from dpkit.api import forest as forest_api
from dpkit.api import kanon as kanon_api
from dpkit.api import publish as publish_api
from dpkit.api.spec import COMMON, REQUIRED, Param, Spec, spec
from dpkit.errors import DpkitError

REPO = Path(__file__).resolve().parents[2]
ADULT = str(REPO / "sample_data" / "adult" / "train.csv")
SCHEMA = str(REPO / "taxonomies" / "adult.yaml")

#: (library function, its spec, the command line's words, the keywords of a valid call)
COMMANDS = [
    (dpkit.publish, publish_api.SPEC, ["publish"], {"schema": SCHEMA, "target": "income"}),
    (dpkit.forest, forest_api.SPEC, ["forest", "train"], {"schema": SCHEMA, "target": "income"}),
    (dpkit.cluster, cluster_api.SPEC, ["cluster"], {"columns": ["age", "hours-per-week"],
                                                    "bounds": [(17, 90), (1, 99)], "n_clusters": 3}),
    (dpkit.kanon_select, kanon_api.SPEC, ["kanon-select"], {"schema": SCHEMA, "target": "income", "k": 5}),
    (dpkit.infer_schema, domain_api.SPEC, ["taxonomy", "infer"], {"target": "income", "delta": 1e-6}),
]
IDS = [c[2][0] for c in COMMANDS]


def _signature(fn: Any) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(fn).parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]


@pytest.mark.parametrize(("fn", "spec_", "words", "valid"), COMMANDS, ids=IDS)
def test_the_signature_is_the_declaration(fn: Any, spec_: Spec, words: list[str], valid: dict) -> None:
    params = _signature(fn)
    assert [p.name for p in params] == list(spec_.params)
    for p in params:
        declared = spec_.params[p.name].default
        assert (p.default is inspect.Parameter.empty) == (declared is REQUIRED), p.name
        if declared is not REQUIRED:
            assert p.default == declared, p.name


@pytest.mark.parametrize(("fn", "spec_", "words", "valid"), COMMANDS, ids=IDS)
def test_the_docstring_documents_every_parameter_once(fn: Any, spec_: Spec, words: list[str], valid: dict) -> None:
    doc = inspect.getdoc(fn)
    assert "{parameters}" not in doc
    for name in spec_.params:
        assert doc.count(f"\n{name} : ") == 1, name


def _command(words: list[str]) -> click.Command:
    from dpkit.cli import cli

    cmd: click.Command = cli
    for w in words:
        assert isinstance(cmd, click.Group)
        cmd = cmd.get_command(click.Context(cmd), w)
    return cmd


@pytest.mark.parametrize(("fn", "spec_", "words", "valid"), COMMANDS, ids=IDS)
def test_the_command_line_has_each_flag_with_its_choices(fn: Any, spec_: Spec, words: list[str],
                                                         valid: dict) -> None:
    cmd = _command(words)
    by_flag = {o: p for p in cmd.params for o in (p.opts if isinstance(p, click.Option) else [p.name.upper()])}
    for name, param in spec_.params.items():
        flag = param.option(name)
        if flag is None:
            continue
        assert flag in by_flag, f"{name}: no {flag} on dpkit {' '.join(words)}"
        if param.choices is not None:
            assert tuple(by_flag[flag].type.choices) == param.choices, name


def _refusals(spec_: Spec) -> list[tuple[str, Any]]:
    """A value outside each declared choice or interval, per parameter."""
    bad: list[tuple[str, Any]] = []
    for name, p in spec_.params.items():
        if p.choices is not None:
            bad.append((name, "nope"))
        if p.interval is not None:
            lo, hi = p.interval
            bad += [(name, lo)] + ([(name, hi)] if hi is not None else [])
    return bad


@pytest.mark.parametrize(("fn", "spec_", "words", "valid", "name", "value"),
                         [(*c, n, v) for c in COMMANDS for n, v in _refusals(c[1])],
                         ids=[f"{c[2][0]}-{n}={v}" for c in COMMANDS for n, v in _refusals(c[1])])
def test_a_value_outside_the_declaration_is_refused_naming_it(tmp_path: Path, fn: Any, spec_: Spec, words: list[str],
                                                              valid: dict, name: str, value: Any) -> None:
    out = tmp_path / "out"
    call = {**({"epsilon": 1.0} if "epsilon" in spec_.params else {}), **valid, "output": str(out), name: value}
    if name in ("delta", "domain_share") and "schema" in spec_.params:  # read without a schema only
        call = {**call, "schema": None, "delta": 1e-6, name: value}
        if fn is dpkit.cluster:
            call.pop("bounds")
            call.pop("delta")
    with pytest.raises(DpkitError) as err:
        fn(ADULT, **call)
    assert getattr(err.value, "param", None) == name, str(err.value)
    assert not out.exists()


def test_a_spec_takes_the_common_parameter_or_its_own() -> None:
    own = Param("int\nMine.", default=3, interval=(0, None))
    s = spec("toy", "data epsilon k", k=own)
    assert s.params == {"data": COMMON["data"], "epsilon": COMMON["epsilon"], "k": own}
    with pytest.raises(KeyError):
        spec("toy", "data nope")

    def toy(data: Any, *, epsilon: float, k: int = 3) -> None:
        """A toy.

        Parameters
        ----------
        {parameters}
        """

    doc = inspect.getdoc(s.document(toy))
    assert "k : int\n    Mine." in doc and "epsilon : float\n" in doc
