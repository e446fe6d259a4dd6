"""scripts/build_results.py: docs/results.md from sweep outputs and result sections."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("build_results", ROOT / "scripts" / "build_results.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_build_assembles_summaries_images_and_sections(tmp_path):
    mod = _module()
    (tmp_path / "configs" / "experiments").mkdir(parents=True)
    for name in ("dpqt", "maxgddp-adult", "zeta"):
        (tmp_path / "configs" / "experiments" / f"{name}.yaml").write_text("name: x\n")
    res = tmp_path / "results" / "maxgddp-adult"
    res.mkdir(parents=True)
    (res / "summary.md").write_text("# maxgddp-adult\n\n## Sweep `eps`\n\n![eps](eps-accuracy.png)\n")
    (res / "eps-accuracy.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (res / "results.csv").write_text("run_id,wall_seconds\na,30\nb,90\n")
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "bench-publish.md").write_text("## publish speed\n\n| a |\n|---|\n| 1 |\n")
    (tmp_path / "docs" / "results" / "kanon.md").write_text("What holds: ![x](img/k.png)\n")
    text = mod.build(tmp_path)
    assert (tmp_path / "docs" / "results.md").read_text() == text
    assert text.startswith("# dpkit results\n")
    # order: the papers' order first, then the rest
    assert text.index("## maxgddp-adult") < text.index("## dpqt") < text.index("## zeta")
    assert "### Sweep `eps`" in text  # headings demoted under the page title
    assert "![eps](results/img/maxgddp-adult/eps-accuracy.png)" in text
    assert (tmp_path / "docs" / "results" / "img" / "maxgddp-adult" / "eps-accuracy.png").exists()
    assert "| [maxgddp-adult](#maxgddp-adult) | 2 | 2.0 min |" in text
    assert "Not run yet: `dpkit evaluate sweep configs/experiments/dpqt.yaml -o results/dpqt`" in text
    assert "# Benchmarks" in text and "### publish speed" in text
    assert "## kanon" in text and "![x](results/img/k.png)" in text


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
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "cluster.md").write_text("## Results: cluster\n\nanalysis\n")
    first = mod.build(tmp_path)
    # a fresh clone: results/ holds dpqt only, rerun with other numbers
    import shutil

    shutil.rmtree(tmp_path / "results" / "maxgddp-adult")
    (tmp_path / "results" / "dpqt" / "summary.md").write_text("# dpqt\n\n## Sweep `e`\n\nNICV 1.05\n")
    text = mod.build(tmp_path)
    assert "accuracy 0.821" in text and "# not a heading" in text  # kept as it was
    assert "| [maxgddp-adult](#maxgddp-adult) | 1 | 1.0 min |" in text
    assert "NICV 1.05" in text and "NICV 1.02" not in text
    assert "Not run yet: `dpkit evaluate sweep configs/experiments/zeta.yaml" in text
    assert text.count("## maxgddp-adult") == 1 and text.count("## Results: cluster") == 1
    # the kept section is byte-identical to the first build's
    def section(t):
        return t[t.index("## maxgddp-adult"):t.index("## dpqt")]
    assert section(text) == section(first)
