"""The card's colours, and the WCAG 2.1 contrast ratio its tests hold them to.

Text colours are paired with the backgrounds they are drawn on (:data:`TEXT_PAIRS`); every pair
keeps a contrast ratio of at least 4.5:1 (WCAG 2.1 success criterion 1.4.3, normal text).
Meaning never rests on colour alone: badges carry words, chart series differ in fill and
outline or dash pattern and are named in a legend.
"""

from __future__ import annotations

TEXT = "#1f2328"
MUTED = "#57606a"
BACKGROUND = "#ffffff"
PANEL = "#f6f8fa"
GRID = "#d0d7de"
ACCENT = "#2f6fb5"
SECOND = "#f2b25c"
LINK = "#0b57b0"
DECLARED_FG, DECLARED_BG = "#0f5132", "#d1e7dd"
LEARNED_FG, LEARNED_BG = "#664d03", "#fff3cd"
OWNER_FG, OWNER_BG = "#6a1a21", "#f8d7da"
WARN_FG, WARN_BG = "#664d03", "#fff3cd"

#: (text colour, background) pairs the page draws text with
TEXT_PAIRS = {
    "body": (TEXT, BACKGROUND),
    "muted": (MUTED, BACKGROUND),
    "panel": (TEXT, PANEL),
    "muted on panel": (MUTED, PANEL),
    "link": (LINK, BACKGROUND),
    "declared badge": (DECLARED_FG, DECLARED_BG),
    "learned badge": (LEARNED_FG, LEARNED_BG),
    "owner banner": (OWNER_FG, OWNER_BG),
    "warning": (WARN_FG, WARN_BG),
    "on accent": (BACKGROUND, ACCENT),
}


def luminance(colour: str) -> float:
    """Relative luminance of an ``#rrggbb`` colour (WCAG 2.1, "relative luminance")."""
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio ``(L1 + 0.05) / (L2 + 0.05)`` of two colours, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
