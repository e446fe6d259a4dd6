"""Library messages name the library's parameters, never a command-line flag (issue 21).

The CLI writes the flag where it helps (``DpkitError.param``, dpkit/cli/boundary.py). This test
reads every module outside ``dpkit/cli`` and fails on a ``--flag`` inside the message of a
``raise`` or of a ``warnings.warn``.
"""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "dpkit"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+|(?<![\w-])-[a-zA-Z](?![\w-])")  # --long or -v


def _strings(node: ast.AST) -> list[str]:
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.append(sub.value)
    return out


def _messages(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            yield node.lineno, _strings(node.exc)
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "warn":
                yield node.lineno, _strings(node)


def offenders() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, strings in _messages(tree):
            for s in strings:
                if FLAG.search(s):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {FLAG.search(s).group(0)}")
    return found


def test_no_library_message_names_a_flag():
    assert offenders() == []
