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
