"""The release card's HTML (issue 44): structure, text alternatives, nothing external, escaping,
size and speed, the owner banner, and the palette's contrast."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpkit
from card.cardhtml import ALL_KINDS, CARDS, card_html, parse
from dpkit.card import render
from dpkit.card.palette import TEXT_PAIRS, contrast

#: the sections every card has, in this order
SECTIONS = ["Guarantee", "Privacy spent by step", "Domain", "The release"]


def report(kind: str) -> dict:
    return json.loads((CARDS / f"{kind}.report.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {kind: card_html(kind) for kind in ALL_KINDS}


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_headings_in_order_and_no_level_skipped(pages, kind) -> None:
    page = parse(pages[kind])
    levels = [int(tag[1]) for tag, _ in page.headings]
    assert levels[0] == 1 and levels.count(1) == 1
    assert all(b <= a + 1 for a, b in zip(levels, levels[1:], strict=False))  # h1 → h2 → h3, never h1 → h3
    h2 = [text for tag, text in page.headings if tag == "h2"]
    assert h2[: len(SECTIONS)] == SECTIONS
    owner = kind.endswith("-owner")
    assert ("For the data owner" in h2[-1]) is owner and ("Owner only" in pages[kind]) is owner


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_every_chart_is_an_image_with_a_text_alternative(pages, kind) -> None:
    page = parse(pages[kind])
    assert page.svgs, "every card draws at least one chart"
    for svg in page.svgs:
        assert svg.attrs.get("role") == "img"
        assert svg.title.strip() and len(svg.attrs.get("aria-label", "")) > len(svg.title)  # the numbers too
        assert "viewBox" in svg.attrs or "viewbox" in svg.attrs


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_tables_have_scoped_heads(pages, kind) -> None:
    page = parse(pages[kind])
    assert page.ths and all(th.get("scope") in ("col", "row") for th in page.ths)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_nothing_external_and_small(pages, kind) -> None:
    html = pages[kind]
    page = parse(html)
    assert not [u for u in page.urls if re.match(r"\s*(https?:)?//", u, re.I)]
    assert not {"script", "link", "img", "iframe", "object", "embed"} & set(page.tags)
    assert "url(" not in html and "@import" not in html
    assert not re.search(r"https?://", html)  # not even an SVG namespace: nothing a mail client could fetch
    assert len(html.encode("utf-8")) < 500_000
    assert html.startswith("<!DOCTYPE html>") and "<meta charset='utf-8'>" in html


def test_the_spend_chart_holds_the_report_figures() -> None:
    rep = report("publish-learned")
    page = parse(render(rep))
    spend = page.svgs[0]
    assert spend.title == "ε spent by step against the budget"
    label = spend.attrs["aria-label"]
    for group in ("domain: metadata", "domain: categories", "domain: bounds", "selection", "counts"):
        assert group in label
    assert "budget ε: 1" in label
    text = " ".join(page.text)
    assert "(ε, δ)" not in text or rep["privacy"]["model"] != "none"
    assert "No privacy guarantee" in text  # a seeded run says it guarantees nothing


def test_guarantee_sentences() -> None:
    base = {"privacy": {"model": "epsilon-dp", "epsilon_spent": 0.5, "epsilon_budget": 1.0,
                        "neighbours": "add/remove one record"}}
    assert "ε-differential privacy with ε = 0.5" in render(base)
    approx = {"privacy": {"model": "(epsilon, delta)-dp", "epsilon_spent": 1.0, "epsilon_budget": 1.0,
                          "delta": 1e-6, "delta_budget": 1e-6}}
    assert "(ε, δ)-differential privacy" in render(approx) and "δ = 1e-06" in render(approx)
    assert "not differential privacy" in render(report("kanon"))


def test_learned_and_declared_badges_carry_words() -> None:
    learned = parse(dpkit.report_card(CARDS / "publish-learned.report.json"))
    declared = parse(dpkit.report_card(CARDS / "publish.report.json"))
    text = " ".join(learned.text)
    assert "learned" in learned.classes and "declared" in learned.classes  # fnlwgt: declared ignored
    assert "threshold" in text or "fewer than about" in text  # why a category is left out
    assert "learned" not in declared.classes and "declared" in declared.classes
    assert "Workclass".lower() in " ".join(declared.text).lower()


def test_strings_from_the_data_are_escaped() -> None:
    bad = "<script>alert(1)</script>"
    rep = report("publish")
    rep["release"]["cut"][bad] = ['"><img src=x onerror=alert(1)>']
    rep["release"]["columns"].append(bad)
    rep["spends"].append({"step": "</svg><script>x</script>", "mechanism": "m", "epsilon": 0.0})
    html = render(rep)
    page = parse(html)
    assert "script" not in page.tags and "img" not in page.tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_owner_banner_only_with_an_evaluation() -> None:
    rep = report("publish")
    assert "Owner only" not in render(rep)
    ev = {"kind": "classifier", "metrics": {"accuracy": 0.8, "baseline_accuracy": 0.85, "floor_accuracy": 0.75,
                                            "roc_auc": 0.9, "records": 100},
          "roc": [{"name": "this release", "fpr": [0, 0.2, 1], "tpr": [0, 0.7, 1], "auc": 0.9}],
          "positive": ">50K",
          "distributions": {"sex": {"labels": ["Female", "Male"], "release": [0.3, 0.7], "test": [0.35, 0.65]}}}
    html = render(rep, evaluation=ev)
    page = parse(html)
    assert "Owner only" in html and "owner" in page.classes
    assert [t for tag, t in page.headings if tag == "h2"][-1].startswith("For the data owner")
    titles = [s.title for s in page.svgs]
    assert any(t.startswith("ROC curve") for t in titles) and any(t.startswith("sex:") for t in titles)
    roc = next(s for s in page.svgs if s.title.startswith("ROC curve"))
    assert "AUC 0.900" in roc.attrs["aria-label"]


def test_cluster_and_forest_and_kanon_parts() -> None:
    cl = parse(dpkit.report_card(CARDS / "cluster.report.json"))
    assert any(s.title.startswith("The centroids on the public domain") for s in cl.svgs)
    fo = parse(dpkit.report_card(CARDS / "forest.report.json"))
    leaves = next(s for s in fo.svgs if s.title == "Leaves per tree")
    assert leaves.attrs["aria-label"].count("tree ") == report("forest")["release"]["trees"]
    ka = parse(dpkit.report_card(CARDS / "kanon.report.json"))
    assert any(s.title == "Equivalence classes per size band" for s in ka.svgs)
    assert "kept" in ka.text and "left out" in ka.text


def test_built_fast_and_embeddable() -> None:
    rep = report("forest")
    start = time.perf_counter()
    for _ in range(10):
        render(rep)
    assert (time.perf_counter() - start) / 10 < 0.5
    div = render(rep, embed=True, title="dpkit Forest: release card")
    assert div.startswith("<div") and div.endswith("</div>") and "<html" not in div
    assert "Privacy spent by step" in div


def test_the_palette_keeps_wcag_contrast() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the known just-failing grey
    for name, (fg, bg) in TEXT_PAIRS.items():
        assert contrast(fg, bg) >= 4.5, name


def test_the_css_uses_only_the_palette() -> None:
    from dpkit.card import palette
    from dpkit.card.page import CSS

    colours = set(re.findall(r"#[0-9a-fA-F]{6}\b", CSS))
    known = {v for k, v in vars(palette).items() if k.isupper() and isinstance(v, str)}
    assert colours <= known


def test_card_writes_a_file(tmp_path: Path) -> None:
    out = tmp_path / "card.html"
    html = dpkit.report_card(report("cluster"), out)
    assert out.read_text(encoding="utf-8") == html


def test_the_card_package_imports_only_the_standard_library() -> None:
    """dpkit/card reads no file and needs nothing but the standard library (and itself)."""
    import ast
    import sys

    root = Path(dpkit.__file__).parent / "card"
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                top = name.split(".")[0]
                assert name.startswith("dpkit.card") or top in sys.stdlib_module_names, (path.name, name)
        assert not re.search(r"\bopen\(|read_text|write_text", path.read_text(encoding="utf-8")), path.name


def test_cluster_sizes_from_the_released_buckets(tmp_path: Path) -> None:
    """Each centroid's noisy size is the noisy count of the buckets nearest it (post-processing)."""
    import pandas as pd

    from dpkit.api.card import cluster_sizes

    rep = report("cluster")
    cents = rep["release"]["centroids"]
    rows = [{"x_lo": x - 10, "x_hi": x + 10, "y_lo": y - 10, "y_hi": y + 10, "count": 5.0 * (i + 1)}
            for i, (x, y) in enumerate(cents)] + [{"x_lo": cents[0][0], "x_hi": cents[0][0] + 2,
                                                   "y_lo": cents[0][1], "y_hi": cents[0][1] + 2, "count": 7.0}]
    hist = pd.DataFrame(rows)
    sizes = cluster_sizes(rep, hist)
    assert sizes == [5.0 * (i + 1) + (7.0 if i == 0 else 0.0) for i in range(len(cents))]
    path = tmp_path / "buckets.csv"
    hist.to_csv(path, index=False)
    page = parse(dpkit.report_card(CARDS / "cluster.report.json", release=path))
    scatter = next(s for s in page.svgs if s.title.startswith("The centroids"))
    assert "size 12" in scatter.attrs["aria-label"] and "noisy size" in [t.strip() for t in page.text]
    assert cluster_sizes(rep, hist.drop(columns=["count"])) is None


_json = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False, width=32)
                     | st.text(max_size=8), lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)
_keys = st.sampled_from(["command", "algorithm", "privacy", "spends", "parameters", "release", "spends_by_tree"])


@settings(max_examples=150)
@given(st.dictionaries(_keys, _json, max_size=6), st.sampled_from(["publish", "forest train", "cluster",
                                                                  "kanon-select", "other"]))
def test_any_report_is_drawn_or_refused_as_data(body: dict, command: str) -> None:
    """A report of any shape: a page, or a DataError (one line on the command line) — never a crash."""
    rep = {"dpkit_version": "x", "command": command, **body}
    try:
        html = dpkit.report_card(rep)
    except dpkit.DataError as exc:
        assert "not a report this dpkit can draw" in str(exc)
    else:
        assert html.startswith("<!DOCTYPE html>") and "script" not in parse(html).tags


def test_delta_is_charted_against_its_budget_when_spent() -> None:
    page = parse(render(report("publish-learned")))
    delta = next(s for s in page.svgs if s.title == "δ spent by step against the budget")
    assert "domain: categories: 9e-07 (90%)" in delta.attrs["aria-label"]
    assert "budget δ: 1e-06" in delta.attrs["aria-label"]
    assert not [s for s in parse(render(report("publish"))).svgs if s.title.startswith("δ")]
