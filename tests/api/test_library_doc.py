"""docs/library.md's examples run, in order, from the repository root (issue 21)."""

import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "library.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_page_has_examples():
    assert len(blocks()) >= 8


@pytest.mark.slow
def test_library_md_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the page uses today's names: a deprecated one fails it (but where a block records them)
        warnings.filterwarnings("error", message=".*will be removed in dpkit", category=DeprecationWarning)
        for i, code in enumerate(blocks()):
            try:
                exec(compile(code, f"docs/library.md block {i + 1}", "exec"), namespace)
            except Exception as exc:  # the block's number says which example broke
                raise AssertionError(f"docs/library.md block {i + 1} failed: {exc!r}\n{code}") from exc


@pytest.mark.slow
def test_readme_from_python_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "README.md (From Python)", "exec"), {})
