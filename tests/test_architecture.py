"""The rules of docs/architecture.md ("Rules that are tests"), each checked on the source.

Every rule reads dpkit's modules with :mod:`ast` (imports inside functions count; those under
``if TYPE_CHECKING:`` do not) or :mod:`tokenize` (comments). An exception to a rule is listed
here with its reason, as docs/architecture.md lists it; a new one fails until it is listed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "dpkit"

# --------------------------------------------------------------------------- the source


@cache
def modules() -> dict[str, tuple[Path, ast.Module, str]]:
    """module name -> (path, tree, text) of every module of dpkit."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        text = path.read_text(encoding="utf-8")
        out[".".join(parts)] = (path, ast.parse(text, str(path)), text)
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def imports_of(name: str, tree: ast.AST) -> Iterator[tuple[str, int]]:
    """(imported module, line) of every import in module ``name``, relative ones resolved;
    ``from dpkit import x`` gives ``dpkit.x`` when ``x`` is a module of dpkit, else ``dpkit``."""
    skip = _type_checking_nodes(tree)
    is_package = (ROOT.parent / Path(*name.split(".")) / "__init__.py").exists()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                yield (sub if sub in modules() else module), node.lineno


# --------------------------------------------------------------------------- import direction

#: the floors of docs/architecture.md's diagram: a module imports only its floor and lower ones
FLOORS = {
    "dpkit.cli": 7, "dpkit.__main__": 7,
    "dpkit": 6,
    "dpkit.sweep": 5,
    "dpkit.api": 4,
    # the algorithms: a room each, so that no two of them import each other in a circle either
    "dpkit.algorithms": 3, "dpkit.algorithms.publish": 3, "dpkit.algorithms.forest": 3,
    "dpkit.algorithms.cluster": 3, "dpkit.algorithms.kanon": 3, "dpkit.domain": 3, "dpkit.evaluate": 3,
    "dpkit.run": 3,
    "dpkit.engine": 2, "dpkit.report": 2, "dpkit.ledger": 2, "dpkit.budget_run": 2, "dpkit.types": 2,
    "dpkit.card": 2,
    # a schema drafted from a table, or imported (which drafts what a file leaves out), sits
    # above the readers and the encoded table it uses; the rest of schema/ below them
    "dpkit.schema.draft": 2, "dpkit.schema.importers": 2,
    "dpkit.schema": 1, "dpkit.io": 1, "dpkit.data": 1, "dpkit.privacy": 1,
    "dpkit.errors": 0, "dpkit.defaults": 0, "dpkit.console": 0, "dpkit.version": 0, "dpkit.validate": 0,
    "dpkit._moved": 0,
}

#: (importer, imported) -> why this import still points up (docs/architecture.md, "The layers")
UPWARD: dict[tuple[str, str], str] = {}


def part(module: str) -> str | None:
    """The folder or top-level module of the diagram that ``module`` belongs to."""
    pieces = module.split(".")
    for i in range(len(pieces), 0, -1):
        if ".".join(pieces[:i]) in FLOORS:
            return ".".join(pieces[:i])
    return None


def dpkit_edges() -> Iterator[tuple[str, str, str, str, int]]:
    """(importer's part, imported part, importer, imported, line) of every import between parts."""
    for name, (_, tree, _) in modules().items():
        here = part(name)
        assert here is not None, f"{name} is on no floor of docs/architecture.md: add it to FLOORS"
        for imported, line in imports_of(name, tree):
            if imported.split(".")[0] != "dpkit":
                continue
            there = part(imported)
            if there is not None and there != here:
                yield here, there, name, imported, line


def test_every_import_points_down() -> None:
    bad = [f"{name}:{line} (floor {FLOORS[here]}) imports {imported} (floor {FLOORS[there]})"
           for here, there, name, imported, line in dpkit_edges()
           if FLOORS[there] > FLOORS[here] and (name, imported) not in UPWARD]
    assert not bad, "imports that point up (docs/architecture.md, 'The layers'):\n" + "\n".join(bad)


def test_upward_exceptions_are_still_needed() -> None:
    used = {(name, imported) for _, _, name, imported, _ in dpkit_edges()}
    stale = sorted(set(UPWARD) - used)
    assert not stale, f"no longer imported, delete from UPWARD: {stale}"


def test_no_circle_between_folders() -> None:
    graph: dict[str, set[str]] = {}
    for here, there, *_ in dpkit_edges():
        if FLOORS[there] == FLOORS[here]:
            graph.setdefault(here, set()).add(there)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    circles = sorted(p for p in graph if reaches(p, p, {p}))
    assert not circles, f"folders that import each other in a circle: {circles}"


def test_no_circle_between_modules() -> None:
    """No two modules import each other, directly or through others (imports inside functions
    count). A package's ``__init__`` only hands names on: edges into or out of one are left out."""
    packages = {name for name, (path, _, _) in modules().items() if path.name == "__init__.py"}
    graph: dict[str, set[str]] = {}
    for name, (_, tree, _) in modules().items():
        if name in packages:
            continue
        for imported, _ in imports_of(name, tree):
            if imported in modules() and imported not in packages and imported != name:
                graph.setdefault(name, set()).add(imported)

    def circle_from(start: str) -> list[str] | None:
        stack, seen = [(start, [start])], {start}
        while stack:
            here, path = stack.pop()
            for nxt in sorted(graph.get(here, ())):
                if nxt == start:
                    return path
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
        return None

    circles = {" -> ".join(c) for m in sorted(graph) if (c := circle_from(m)) and c[0] == min(c)}
    assert not circles, "modules that import each other in a circle:\n" + "\n".join(sorted(circles))


def test_click_only_in_cli() -> None:
    bad = [f"{name}:{line}" for name, (_, tree, _) in modules().items()
           if not (name == "dpkit.cli" or name.startswith("dpkit.cli."))
           for imported, line in imports_of(name, tree) if imported.split(".")[0] == "click"]
    assert not bad, "Click imported outside dpkit/cli: " + ", ".join(bad)


# --------------------------------------------------------------------------- noise only in the kernel

#: methods of a numpy Generator (or the random module) that draw
DRAWS = frozenset({"integers", "random", "normal", "laplace", "choice", "uniform", "permutation", "permuted",
                   "shuffle", "exponential", "geometric", "binomial", "poisson", "standard_normal", "gumbel",
                   "bytes", "randint", "rand", "randn", "sample", "token_hex", "token_bytes", "urandom"})
#: modules whose import alone is a source of randomness
RANDOM_MODULES = frozenset({"random", "secrets"})

#: (module, draw) -> why a module outside dpkit/privacy may draw: none of these touches a private value
NOISE_ELSEWHERE: dict[tuple[str, str], str] = {
    ("dpkit.algorithms.cluster.dplloyd", "random"): "DPLloyd's initial centres: uniform in the public box",
    ("dpkit.algorithms.forest.dprf", "choice"): "DiffPRFs' feature choice: uniform among the public attributes",
    ("dpkit.algorithms.forest.dprf", "integers"): "the secret key of the record -> tree PRF, never released",
    ("dpkit.algorithms.kanon.greedy", "choice"): "k-anonymity's ranking sample: not DP, seeded for reproducibility",
    ("dpkit.sweep.tasks.publish", "permutation"): "the experiment's stratified split of its evaluation data",
    ("dpkit.io.output", "secrets"): "the random name of a temporary output file",
    ("dpkit.io.output", "token_hex"): "the random name of a temporary output file",
    ("dpkit.engine.spark.write", "secrets"): "the random name of a temporary output directory",
    ("dpkit.engine.spark.write", "token_hex"): "the random name of a temporary output directory",
}


def draws() -> Iterator[tuple[str, str, int]]:
    """(module, draw, line) of every random draw or source of randomness outside dpkit/privacy."""
    for name, (_, tree, _) in modules().items():
        if name == "dpkit.privacy" or name.startswith("dpkit.privacy."):
            continue
        for imported, line in imports_of(name, tree):
            if imported in RANDOM_MODULES:
                yield name, imported, line
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DRAWS:
                yield name, node.func.attr, node.lineno


def test_noise_only_in_the_privacy_package() -> None:
    bad = [f"{name}:{line}: .{draw}(" for name, draw, line in draws() if (name, draw) not in NOISE_ELSEWHERE]
    assert not bad, "random draws outside dpkit/privacy (docs/architecture.md, rule 8):\n" + "\n".join(bad)


def test_noise_exceptions_are_still_needed() -> None:
    stale = sorted(set(NOISE_ELSEWHERE) - {(name, draw) for name, draw, _ in draws()})
    assert not stale, f"no longer drawn, delete from NOISE_ELSEWHERE: {stale}"


# --------------------------------------------------------------------------- defaults once

#: the parameter each shared default belongs to -> its value, defined in dpkit/defaults.py only
DEFAULTS = {"encoding": "utf-8-sig", "max_categories": 50, "decision": "argmax"}


def _is(node: ast.AST | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value


def default_literals() -> Iterator[str]:
    """Every place outside dpkit/defaults.py that spells one of :data:`DEFAULTS` as a default."""
    for name, (_, tree, _) in modules().items():
        if name == "dpkit.defaults":
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                positional = a.posonlyargs + a.args
                pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True))
                pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
                for arg, d in pairs:
                    if arg.arg in DEFAULTS and _is(d, DEFAULTS[arg.arg]):
                        yield f"{name}:{d.lineno}: parameter {arg.arg}={d.value!r}"  # type: ignore[attr-defined]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and node.target.id in DEFAULTS and _is(node.value, DEFAULTS[node.target.id]):
                yield f"{name}:{node.lineno}: field {node.target.id} = {DEFAULTS[node.target.id]!r}"
            elif isinstance(node, ast.Call):
                flags = " ".join(str(a.value) for a in node.args if isinstance(a, ast.Constant))
                for kw in node.keywords:
                    for param, value in DEFAULTS.items():
                        if kw.arg == "default" and _is(kw.value, value) and f"--{param.replace('_', '-')}" in flags:
                            yield f"{name}:{node.lineno}: --{param} default={value!r}"
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
                for value in DEFAULTS.values():
                    if isinstance(value, str) and any(_is(v, value) for v in node.values):
                        yield f"{name}:{node.lineno}: fallback 'or {value!r}'"
            elif isinstance(node, ast.Assign) and any(_is(node.value, v) for v in DEFAULTS.values()
                                                      if isinstance(v, str)):
                yield f"{name}:{node.lineno}: {ast.unparse(node)}"


def test_defaults_defined_once() -> None:
    bad = list(default_literals())
    assert not bad, "defaults spelled outside dpkit/defaults.py (docs/architecture.md, rule 2):\n" + "\n".join(bad)


def test_defaults_module_defines_each_once() -> None:
    import dpkit.defaults as defaults

    tree = modules()["dpkit.defaults"][1]
    assigned = [node.value.value for node in tree.body
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)]
    for value in DEFAULTS.values():
        assert assigned.count(value) == 1, f"{value!r} is not defined exactly once in dpkit/defaults.py"
    assert (defaults.DEFAULT_ENCODING, defaults.MAX_CATEGORIES, defaults.DEFAULT_DECISION) == tuple(DEFAULTS.values())


# --------------------------------------------------------------------------- I/O only at the edges

ALGORITHMS = ("dpkit.algorithms", "dpkit.domain", "dpkit.evaluate")
#: calls that open, read or write a file
IO_CALLS = frozenset({"open", "write_text", "write_bytes", "read_text", "read_bytes", "to_csv", "read_csv",
                      "to_parquet", "read_parquet", "write_table", "write_rows", "atomic_output", "read_raw",
                      "load_model", "save_model", "dump", "load", "safe_load"})
#: (module, function) -> the I/O docs/architecture.md (rule 4) lists inside an algorithm package
IO_ALLOWED: dict[tuple[str, str], str] = {
    ("dpkit.algorithms.publish.sparse", "write_release"): "the released table as CSV, through atomic_output",
    ("dpkit.algorithms.publish.sparse", "_write_release_parquet"):
        "the released table as Parquet, through atomic_output",
    ("dpkit.algorithms.forest.model", "save_model"): "the model JSON",
    ("dpkit.algorithms.forest.model", "load_model"): "the model JSON",
    ("dpkit.algorithms.forest.model", "_as_model"): "a model given by its path is loaded (load_model)",
    ("dpkit.evaluate.classify", "dpkit_model_predictor"): "takes the model's path and loads it",
    ("dpkit.algorithms.kanon.select", "Selection.write"): "the selected columns, written by the string frame",
    ("dpkit.domain.vocabulary", "_read"): "a vocabulary YAML of missing tokens (public knowledge)",
}


def io_calls() -> Iterator[tuple[str, str, str, int]]:
    """(module, enclosing function, call, line) of every file I/O call in an algorithm package."""
    for name, (_, tree, _) in modules().items():
        if not any(name == a or name.startswith(a + ".") for a in ALGORITHMS):
            continue

        def visit(node: ast.AST, where: str, module: str = name) -> Iterator[tuple[str, str, str, int]]:
            for child in ast.iter_child_nodes(node):
                inner = where
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = child.name if not where or isinstance(node, ast.Module) else f"{where}.{child.name}"
                    if where and not isinstance(node, ast.ClassDef):
                        inner = where  # a nested function belongs to its enclosing one
                if isinstance(child, ast.Call):
                    f = child.func
                    call = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                    if call in IO_CALLS:
                        yield module, where, call, child.lineno
                yield from visit(child, inner)

        yield from visit(tree, "")


def test_io_only_at_the_edges() -> None:
    bad = [f"{name}:{line} in {where or '<module>'}: {call}(" for name, where, call, line in io_calls()
           if (name, where) not in IO_ALLOWED]
    assert not bad, "file I/O inside an algorithm package (docs/architecture.md, rule 4):\n" + "\n".join(bad)


def test_io_exceptions_are_still_needed() -> None:
    stale = sorted(set(IO_ALLOWED) - {(name, where) for name, where, _, _ in io_calls()})
    assert not stale, f"no I/O there any more, delete from IO_ALLOWED: {stale}"


# --------------------------------------------------------------------------- no history in the code

#: an issue, pull request or review reference
ISSUE = re.compile(r"\b[Ii]ssues?\s*#?\d+|\bPR\s*#?\d+|\bprivacy review\b|(?<![\w&])#\d{1,4}\b")
#: a benchmark figure: a measured before -> after, a metric's value, a run count, a timing
FIGURE = re.compile(
    r"\b\d\.\d{1,4}\s*(?:->|→)\s*\d\.\d+"                              # 0.584 -> 0.568
    r"|(?:ROC AUC|AUC|accuracy|NICV ratio|F1)\s+(?:of\s+)?[-+−]?\d\.\d{2,}"  # ROC AUC 0.867
    r"|[-+−]?\d\.\d{2,}\s+(?:of\s+)?(?:ROC AUC|AUC|accuracy)\b"           # 0.016 ROC AUC, 0.007 of AUC
    r"|\(\d+ runs\b|\b\d+ runs(?: each)?\)|\bover \d+ runs\b|\b\d+/\d+ runs\b|\b\d+ seeds\b"
    r"|\d+(?:\.\d+)?\s*(?:->|→)\s*\d+(?:\.\d+)?\s*(?:ms|s|MB|GB)\b"      # 2.9 -> 1.1 s
    r"|\b\d+(?:\.\d+)? of \d+(?:\.\d+)? s\b|~?\d+(?:\.\d+)? s of a run\b|\b\d+ ?% (?:faster|slower)\b"
    r"|\b[Tt]ried on\b"
)


def comments_and_docstrings(text: str, tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and every string statement (docstrings, attribute docs)."""
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for i, line in enumerate(node.value.value.splitlines()):
                yield node.lineno + i, line


def history() -> list[str]:
    return [f"{path.relative_to(ROOT.parent)}:{line}: {found.group(0)!r}"
            for path, tree, text in modules().values()
            for line, words in comments_and_docstrings(text, tree)
            for found in (ISSUE.search(words), FIGURE.search(words)) if found]


def test_no_history_in_comments() -> None:
    bad = history()
    assert not bad, ("issue numbers or benchmark figures in dpkit/ comments: state the reason, and move "
                     "the figures to docs/decisions/:\n" + "\n".join(bad))


@pytest.mark.parametrize("text", [
    "# the forest gained (issue 36)", "# second privacy review, item 5", "#: held-out ROC AUC 0.584 -> 0.568",
    "# cost 0.016 ROC AUC", "# 2σ took the NICV ratio from 2.03 to 1.40 (10 runs)", "# 10M rows, 2.9 -> 1.1 s",
    "# pairs tried on S1", "# both bounds in 8/30 runs", "# 0.852 accuracy",
])
def test_history_patterns_catch(text: str) -> None:
    assert ISSUE.search(text) or FIGURE.search(text)


@pytest.mark.parametrize("text", [
    "# 3 × 0.1 is 0.30000000000000004", "# 0.30000000000000004 -> 0.3", "# (17, 90 -> 10, 90)", "# Version 1 → 2 → 3",
    "# keep at most 2 runs per worker queued", "# constant scores: ROC AUC 0.5", "#: ε = 0.0306, δ = 10⁻⁶",
])
def test_history_patterns_spare(text: str) -> None:
    assert not ISSUE.search(text) and not FIGURE.search(text)
