"""The CLI is a veneer over the public API (docs/architecture.md, rule 1; issue 37 item 9).

Every ``dpkit/cli`` module may import the public ``dpkit`` names (those of ``dpkit.__all__``),
``dpkit.errors``, ``dpkit.defaults`` (the defaults its ``--help`` shows, defined once) and its own
modules. The internal modules it still imports are listed in
``INTERNAL``; that list may only shrink: a new internal import fails, and so does an entry that
is no longer used (delete it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpkit

CLI = Path(dpkit.__file__).parent / "cli"
#: floor-0 modules the CLI may import: the errors it catches, the defaults its --help shows
PUBLIC_MODULES = {"dpkit.errors", "dpkit.defaults"}

#: internal module -> why the CLI still imports it (remove the entry when the import goes)
INTERNAL: dict[str, str] = {}


def imports_of(path: Path) -> list[tuple[str, str | None, int]]:
    """(module, imported name or None, line) of every dpkit import in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "dpkit"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "dpkit":
            found += [(node.module, a.name, node.lineno) for a in node.names]
    return found


def attributes_of(path: Path) -> list[tuple[str, int]]:
    """(name, line) of every ``dpkit.name`` in ``path`` (the CLI calls the library as ``dpkit.publish``)."""
    return [(node.attr, node.lineno) for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "dpkit"]


def offences() -> tuple[list[str], set[str]]:
    bad, used = [], set()
    for path in sorted(CLI.glob("*.py")):
        bad += [f"{path.name}:{line}: dpkit.{name} is not a public name" for name, line in attributes_of(path)
                if name not in dpkit.__all__]
        for module, name, line in imports_of(path):
            where = f"{path.name}:{line}"
            if module == "dpkit.cli" or module.startswith("dpkit.cli.") or module in PUBLIC_MODULES:
                continue
            if module == "dpkit":
                if name is not None and name not in dpkit.__all__ and name != "__version__":
                    bad.append(f"{where}: dpkit.{name} is not a public name")
                continue
            if module in INTERNAL:
                used.add(module)
                continue
            bad.append(f"{where}: imports the internal module {module}")
    return bad, used


def test_cli_imports_only_the_public_api() -> None:
    bad, _ = offences()
    assert not bad, "\n".join(bad)


def test_internal_list_only_shrinks() -> None:
    _, used = offences()
    stale = sorted(set(INTERNAL) - used)
    assert not stale, f"no longer imported by dpkit/cli, delete from INTERNAL: {stale}"


def test_checker_sees_an_internal_import(tmp_path: Path) -> None:
    """The parser finds imports at any depth (the CLI imports inside functions)."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from dpkit.data.counting import x\n    import dpkit.ledger\n"
                      "from dpkit import publish\n")
    assert sorted(imports_of(module)) == [("dpkit", "publish", 4), ("dpkit.data.counting", "x", 2),
                                          ("dpkit.ledger", None, 3)]


def test_checker_sees_an_attribute(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import dpkit\n\ndef f():\n    return dpkit.engine.load, dpkit.publish\n")
    assert sorted(attributes_of(module)) == [("engine", 4), ("publish", 4)]


def test_cluster_passes_on_every_algorithm_flag() -> None:
    """The CLI lists its algorithm flags itself (not dpkit.algorithms.cluster.OPTIONS): none may be left out."""
    from dpkit.algorithms.cluster import OPTIONS
    from dpkit.cli.cluster import ALGORITHM_OPTIONS, command

    flags = {p.name for p in command.params}
    algorithm_options = {o for opts in OPTIONS.values() for o in opts}
    assert set(ALGORITHM_OPTIONS) == flags & algorithm_options


def test_publish_knows_every_maxgddp_only_option() -> None:
    """The CLI lists publish's MAXGDDP-only flags itself (not dpkit.algorithms.publish): the same list."""
    from dpkit.algorithms.publish import MAXGDDP_ONLY
    from dpkit.cli.publish import MAXGDDP_ONLY as CLI_LIST

    assert set(CLI_LIST) == set(MAXGDDP_ONLY)
