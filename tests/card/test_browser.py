"""The release card in a real browser (issue 44): headless Chromium opens each card at a desktop
and at a phone's width.

Checked: the page renders (its DOM has the headings and every chart), nothing is logged on the
console, no request leaves the page (Chromium's net log, with every host name mapped to
nowhere), the screenshot is not blank, nothing runs off the right edge at 390 px, and the
screenshot matches a stored reference in two ways:

- **coarse properties**, always: the share of the palette's landmark colours (the bars, the
  badges, the owner banner, the table heads), which colours appear at all, and the share of
  ink — within a relative tolerance that a different font face keeps (tested with a serif and
  a wider sans face: text reflows, the landmarks stay);
- **pixels**, where the fonts are the reference machine's (a probe line of text renders the
  same): both images as grayscale averaged over 8×8-pixel blocks, their mean absolute
  difference under :data:`TOLERANCE`, which any other card fails by twice over. With other
  fonts a pixel comparison is meaningless (a wider face moves it as much as another card
  does), so it is skipped, saying so.

The detectors are themselves tested on a canary page that logs an error and fetches an image.
Skipped, saying why, where Chromium is absent (Debian: ``apt-get install chromium``;
``DPKIT_CHROMIUM`` names another binary).
``DPKIT_UPDATE_CARD_REFS=1`` rewrites the references (tests/data/cards/*.png, screens.json).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import dpkit
from card.cardhtml import ALL_KINDS, CARDS, card_html, parse

#: Debian's chromium; ``DPKIT_CHROMIUM`` names another Chromium-based browser's binary
CHROMIUM = os.environ.get("DPKIT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium; or set DPKIT_CHROMIUM)"),
]
#: a desktop's and a phone's width (CSS pixels); the window is 2000 pixels high, and tall enough
#: for the whole page of the owner's card (its evaluation is at the end)
WIDTHS = (1200, 390)
HEIGHT = 2000
TALL = {"publish-owner": 9600}
#: averaged over BLOCK×BLOCK pixels before comparing
BLOCK = 8
#: the largest mean absolute difference (0 to 1) of the block-averaged grayscale images
TOLERANCE = 0.01
#: the coarse properties' relative tolerance (a share may move this far, relatively) and the
#: absolute share (percent of pixels) below which a colour counts as absent
RELATIVE = 0.3
ABSENT = 0.01
SCREENS = CARDS / "screens.json"
UPDATE = os.environ.get("DPKIT_UPDATE_CARD_REFS") == "1"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--force-device-scale-factor=1", "--enable-logging=stderr", "--v=0",
         "--host-resolver-rules=MAP * ~NOTFOUND"]


def chromium(tmp: Path, page: Path, *args: str) -> tuple[str, str, list[str]]:
    """(stdout, stderr, the URLs the page asked for) of one Chromium run on ``page``."""
    profile = tmp / f"profile-{len(list(tmp.iterdir()))}"
    netlog = profile.with_suffix(".netlog.json")
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--log-net-log={netlog}", *args,
                           page.as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr, page_requests(netlog)


def page_requests(netlog: Path) -> list[str]:
    """The URLs requested by a page (a request's initiator is an origin; the browser's own
    background requests — component updates, accounts — are "not an origin")."""
    log = json.loads(netlog.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    out = []
    for ev in log["events"]:
        p = ev.get("params") or {}
        url = str(p.get("url") or "")
        if ev["type"] == start and url and p.get("initiator") != "not an origin":
            if not url.startswith(("file:", "data:")):
                out.append(url)
    return out


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def landmarks(png: Path) -> dict[str, float]:
    """Percent of pixels of each landmark colour of the palette, and of ink (dark pixels)."""
    from PIL import Image

    from dpkit.card import palette as P

    with Image.open(png) as im:
        a = np.asarray(im.convert("RGB"), dtype=int)
    out = {}
    for name, colour in (("bars", P.ACCENT), ("second series", P.SECOND), ("declared badge", P.DECLARED_BG),
                         ("learned badge", P.LEARNED_BG), ("owner banner", P.OWNER_BG), ("table heads", P.PANEL)):
        rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
        out[name] = round(float((np.abs(a - rgb).sum(axis=2) <= 12).mean() * 100), 4)
    out["ink"] = round(float((a.mean(axis=2) < 128).mean() * 100), 4)
    return out


def close_landmarks(got: dict[str, float], ref: dict[str, float]) -> list[str]:
    """What differs: a colour present in one and absent in the other, or a share off by more
    than :data:`RELATIVE`."""
    bad = []
    for k, r in ref.items():
        v = got.get(k, 0.0)
        if (v > ABSENT) != (r > ABSENT):
            bad.append(f"{k}: {v}% against {r}% (present in one only)")
        elif r > ABSENT and abs(v - r) > RELATIVE * r:
            bad.append(f"{k}: {v}% against {r}%")
    return bad


def grey(png: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(png) as im:
        return np.asarray(im.convert("L"), dtype=float) / 255


def grey_blocks(png: Path) -> np.ndarray:
    a = grey(png)
    h, w = (a.shape[0] // BLOCK) * BLOCK, (a.shape[1] // BLOCK) * BLOCK
    return a[:h, :w].reshape(h // BLOCK, BLOCK, w // BLOCK, BLOCK).mean(axis=(1, 3))


def save_blocks(blocks: np.ndarray, path: Path) -> None:
    from PIL import Image

    Image.fromarray((blocks * 255).round().astype(np.uint8), mode="L").save(path, optimize=True)


def load_blocks(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im, dtype=float) / 255


PROBE = ("<!DOCTYPE html><html><body style='margin:0;background:#fff'><p style='font:15px/1.45 system-ui,"
         "-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;margin:8px'>Sphinx of black quartz, "
         "judge my vow — ε 0.7238 (72%) δ 1e-06 [15, 95]</p></body></html>")


@pytest.fixture(scope="module")
def same_fonts(tmp_path_factory) -> bool:
    """Whether text renders here as on the machine that made the references (a probe line)."""
    tmp = tmp_path_factory.mktemp("probe")
    page, png = tmp / "probe.html", tmp / "probe.png"
    page.write_text(PROBE, encoding="utf-8")
    chromium(tmp, page, f"--screenshot={png}", "--window-size=640,64")
    ref = CARDS / "font-probe.png"
    if UPDATE:
        save_blocks(grey_blocks(png), ref)
        return True
    return ref.exists() and float(np.abs(grey_blocks(png) - load_blocks(ref)).mean()) < 0.002


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> dict[tuple[str, int], tuple[Path, str, list[str]]]:
    """Each card at each width: (screenshot, stderr, page requests)."""
    tmp = tmp_path_factory.mktemp("cards")
    out = {}
    for kind in ALL_KINDS:
        page = tmp / f"{kind}.html"
        page.write_text(card_html(kind), encoding="utf-8")
        for width in WIDTHS:
            png = tmp / f"{kind}-{width}.png"
            height = TALL.get(kind, HEIGHT)
            _, err, requests = chromium(tmp, page, f"--screenshot={png}", f"--window-size={width},{height}")
            out[kind, width] = (png, err, requests)
    return out


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_the_dom_renders_without_console_errors_or_requests(tmp_path: Path, kind: str) -> None:
    page = tmp_path / "card.html"
    html = card_html(kind)
    page.write_text(html, encoding="utf-8")
    dom, err, requests = chromium(tmp_path, page, "--dump-dom")
    rendered, source = parse(dom), parse(html)
    assert rendered.headings == source.headings and len(rendered.svgs) == len(source.svgs) > 0
    assert [s.title for s in rendered.svgs] == [s.title for s in source.svgs]
    assert console_lines(err) == []
    assert requests == []


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ALL_KINDS)
def test_screenshot_matches_its_reference(shots, same_fonts, kind: str, width: int) -> None:
    png, err, requests = shots[kind, width]
    assert console_lines(err) == [] and requests == []
    blocks = grey_blocks(png)
    assert blocks.shape == (TALL.get(kind, HEIGHT) // BLOCK, width // BLOCK)
    ink = blocks < 0.97
    assert 0.03 < ink.mean() < 0.6, "blank (or black) screenshot"
    assert blocks.std() > 0.05
    edge = grey(png)[:, -4:] < 0.9  # the page's own margin: nothing drawn in its last 4 pixels
    assert edge.mean() < 0.005, "something runs off the right edge"
    name = f"{kind}-{width}"
    ref = CARDS / f"{name}.png"
    if UPDATE:
        save_blocks(blocks, ref)
        screens = json.loads(SCREENS.read_text()) if SCREENS.exists() else {}
        screens[name] = landmarks(png)
        SCREENS.write_text(json.dumps(dict(sorted(screens.items())), indent=1) + "\n")
        pytest.skip(f"wrote {ref.name}")
    assert close_landmarks(landmarks(png), json.loads(SCREENS.read_text())[name]) == []
    if not same_fonts:
        pytest.skip("fonts differ from the references' machine: coarse properties checked, pixels not compared")
    diff = float(np.abs(blocks - load_blocks(ref)).mean())
    assert diff < TOLERANCE, f"{kind} at {width}px differs from its reference by {diff:.4f}"


def test_the_tolerance_tells_cards_apart(shots) -> None:
    """A different card fails the comparison by far: the tolerance is not vacuous."""
    for width in WIDTHS:
        a = grey_blocks(shots["publish", width][0])
        for other in ("forest", "cluster", "kanon"):
            assert float(np.abs(a - grey_blocks(shots[other, width][0])).mean()) > 2 * TOLERANCE


@pytest.mark.parametrize("face", ["'DejaVu Serif',serif", "'Liberation Sans',sans-serif"])
def test_the_coarse_properties_survive_another_font(tmp_path: Path, shots, face: str) -> None:
    """The same card in another face (another machine's fonts: its pixels change) keeps its
    landmarks."""
    html = dpkit.report_card(CARDS / "publish-learned.report.json")
    page = tmp_path / "face.html"
    page.write_text(html.replace("font:15px/1.45 system-ui,", f"font:15px/1.45 {face},"), encoding="utf-8")
    png = tmp_path / "face.png"
    chromium(tmp_path, page, f"--screenshot={png}", f"--window-size=1200,{HEIGHT}")
    reference = shots["publish-learned", 1200][0]
    assert close_landmarks(landmarks(png), landmarks(reference)) == []
    assert float(np.abs(grey_blocks(png) - grey_blocks(reference)).mean()) > 0.002


def test_the_coarse_properties_tell_some_cards_apart(shots) -> None:
    """Declared against learned badges, a clustering's and a selection's pages: told apart."""
    base = landmarks(shots["publish", 1200][0])
    for other in ("publish-learned", "cluster", "kanon"):
        assert close_landmarks(landmarks(shots[other, 1200][0]), base) != []


def test_the_detectors_catch_a_console_error_and_a_request(tmp_path: Path) -> None:
    page = tmp_path / "canary.html"
    page.write_text("<!DOCTYPE html><html><body><h1>x</h1><img src='http://example.invalid/x.png'>"
                    "<script>console.error('canary'); missing();</script></body></html>", encoding="utf-8")
    _, err, requests = chromium(tmp_path, page, "--dump-dom")
    assert any("canary" in line for line in console_lines(err))
    assert requests == ["http://example.invalid/x.png"]
