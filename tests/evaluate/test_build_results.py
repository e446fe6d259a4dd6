"""scripts/build_results.py: docs/results/paper-<name>.md from sweep outputs, docs/results.md an index."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("build_results", ROOT / "scripts" / "build_results.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_build_writes_experiment_pages_and_an_index(tmp_path):
    mod = _module()
    (tmp_path / "configs" / "experiments").mkdir(parents=True)
    for name in ("dpqt", "maxgddp-adult", "zeta"):
        (tmp_path / "configs" / "experiments" / f"{name}.yaml").write_text("name: x\n")
    res = tmp_path / "results" / "maxgddp-adult"
    res.mkdir(parents=True)
    (res / "summary.md").write_text("# maxgddp-adult\n\n## Sweep `eps`\n\n![eps](eps-accuracy.png)\n")
    (res / "eps-accuracy.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (res / "results.csv").write_text("run_id,wall_seconds\na,30\nb,90\n")
    pages = tmp_path / "docs" / "results"
    pages.mkdir(parents=True)
    (pages / "bench-publish.md").write_text("## publish speed\n\n| a |\n|---|\n| 1 |\n")
    (pages / "kanon.md").write_text("What holds: ![x](img/k.png)\n")
    (pages / "new-area.md").write_text("# Something measured\n\ntext\n")
    text = mod.build(tmp_path)
    assert (tmp_path / "docs" / "results.md").read_text() == text
    assert text.startswith("# dpkit results\n")
    # the index: the papers' order first, then the rest, each linking to its page
    assert text.index("[maxgddp-adult](") < text.index("| dpqt | not run") < text.index("| zeta | not run")
    assert "| [maxgddp-adult](results/paper-maxgddp-adult.md) | 2 | 2.0 min |" in text
    page = (pages / "paper-maxgddp-adult.md").read_text()
    assert page.startswith("# maxgddp-adult\n") and "## Sweep `eps`" in page  # the summary as it is
    assert "![eps](img/maxgddp-adult/eps-accuracy.png)" in page  # relative to docs/results/
    assert (pages / "img" / "maxgddp-adult" / "eps-accuracy.png").exists()
    assert "Not run yet: `dpkit evaluate sweep configs/experiments/dpqt.yaml -o results/dpqt`" in (
        pages / "paper-dpqt.md").read_text()
    # every other page is linked from the index, by its title (its stem without one); no content copied
    assert "[publish speed](results/bench-publish.md)" in text
    assert "[kanon](results/kanon.md)" in text and "What holds" not in text
    assert "## Other pages" in text and "[Something measured](results/new-area.md)" in text
    assert "[Something measured](results/paper-" not in text


def test_rebuilding_one_experiment_keeps_the_others_as_they_were(tmp_path):
    """`make reproduce-dpqt` on a fresh clone (issue 16): only dpqt's results are on disk."""
    mod = _module()
    (tmp_path / "configs" / "experiments").mkdir(parents=True)
    for name in ("maxgddp-adult", "dpqt", "zeta"):
        (tmp_path / "configs" / "experiments" / f"{name}.yaml").write_text("name: x\n")
    for name, body in (("maxgddp-adult", "accuracy 0.821"), ("dpqt", "NICV 1.02")):
        res = tmp_path / "results" / name
        res.mkdir(parents=True)
        (res / "summary.md").write_text(f"# {name}\n\n## Sweep `e`\n\n{body}\n\n```\n# not a heading\n```\n")
        (res / "results.csv").write_text("run_id,wall_seconds\na,60\n")
    pages = tmp_path / "docs" / "results"
    pages.mkdir(parents=True)
    (pages / "cluster.md").write_text("# Results: cluster\n\nanalysis\n")
    mod.build(tmp_path)
    first = (pages / "paper-maxgddp-adult.md").read_text()
    # a fresh clone: results/ holds dpqt only, rerun with other numbers
    shutil.rmtree(tmp_path / "results" / "maxgddp-adult")
    (tmp_path / "results" / "dpqt" / "summary.md").write_text("# dpqt\n\n## Sweep `e`\n\nNICV 1.05\n")
    text = mod.build(tmp_path)
    assert (pages / "paper-maxgddp-adult.md").read_text() == first  # kept byte for byte
    assert "accuracy 0.821" in first and "# not a heading" in first
    assert "| [maxgddp-adult](results/paper-maxgddp-adult.md) | 1 | 1.0 min |" in text  # its row kept
    assert "NICV 1.05" in (pages / "paper-dpqt.md").read_text()
    assert "Not run yet: `dpkit evaluate sweep configs/experiments/zeta.yaml" in (pages / "paper-zeta.md").read_text()
    assert text.count("[Results: cluster](results/cluster.md)") == 1


def test_an_unchanged_rebuild_leaves_the_index_alone(tmp_path):
    """Nothing changed: the index keeps its 'Built' date (so a rebuild reproduces the committed page)."""
    mod = _module()
    (tmp_path / "configs" / "experiments").mkdir(parents=True)
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "forest.md").write_text("# Forest\n")
    index = tmp_path / "docs" / "results.md"
    text = mod.build(tmp_path)
    index.write_text(re.sub(r"Built [^.]*\.", "Built 2000-01-01 00:00 UTC.", text))
    again = mod.build(tmp_path)
    assert "Built 2000-01-01 00:00 UTC." in again and index.read_text() == again


def test_the_committed_pages_rebuild_as_they_are(tmp_path):
    """The repository's docs/results.md and paper pages are what the script writes from them
    (no results/ on disk: every experiment kept as it was)."""
    mod = _module()
    shutil.copytree(ROOT / "configs" / "experiments", tmp_path / "configs" / "experiments")
    shutil.copytree(ROOT / "docs" / "results", tmp_path / "docs" / "results",
                    ignore=shutil.ignore_patterns("*.png", "*.csv"))
    shutil.copy(ROOT / "docs" / "results.md", tmp_path / "docs" / "results.md")
    text = mod.build(tmp_path, results=tmp_path / "no-results")
    assert text == (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    for page in (ROOT / "docs" / "results").glob("paper-*.md"):
        assert (tmp_path / "docs" / "results" / page.name).read_text() == page.read_text()


def test_a_summary_becomes_its_page_unchanged_but_the_links(tmp_path):
    """The code path of `make reproduce`: a committed page, turned back into a sweep's summary.md,
    rebuilds to the same page."""
    mod = _module()
    shutil.copytree(ROOT / "configs" / "experiments", tmp_path / "configs" / "experiments")
    (tmp_path / "docs" / "results").mkdir(parents=True)
    page = (ROOT / "docs" / "results" / "paper-maxgddp-iris.md").read_text(encoding="utf-8")
    res = tmp_path / "results" / "maxgddp-iris"
    res.mkdir(parents=True)
    (res / "summary.md").write_text(page.replace("](img/maxgddp-iris/", "]("))
    for png in (ROOT / "docs" / "results" / "img" / "maxgddp-iris").glob("*.png"):
        shutil.copy(png, res / png.name)
    mod.build(tmp_path)
    assert (tmp_path / "docs" / "results" / "paper-maxgddp-iris.md").read_text() == page
