"""Small inline SVG charts for the release card: horizontal bars, paired bars, lines, a scatter.

Each chart is an ``<svg role="img">`` with a ``<title>`` and an ``aria-label`` (its text
alternative: what it shows, and the numbers a reader needs), sized by its ``viewBox`` so that
it scales to a phone's width. Every text drawn goes through :func:`html.escape`. No script, no
external reference: the card must open from an e-mail attachment.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from dpkit.card.palette import ACCENT, GRID, MUTED, SECOND, TEXT

#: chart widths in SVG units: narrow enough that a phone (390 px) shows the text near its size
WIDTH = 460
#: a bar's row: its label on a line of its own, then the bar
ROW = 34
FONT = 13


def fmt(value: float) -> str:
    """A number as a reader wants it on a chart: 4 significant digits, no exponent for counts."""
    if value == 0:
        return "0"
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _svg_open(width: int, height: int, title: str, label: str) -> str:
    # drawn at most at its own size (a small chart is not blown up on a wide screen), scaled
    # down to the column on a narrow one
    return (f'<svg role="img" aria-label="{_e(label)}" viewBox="0 0 {width} {height}" width="100%" '
            f'style="max-width:{width}px" preserveAspectRatio="xMinYMin meet" class="chart">'
            f"<title>{_e(title)}</title>")


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def bars(items: Sequence[tuple[str, float]], *, title: str, limit: float | None = None, limit_label: str = "",
         unit: str = "", share_of: float | None = None) -> str:
    """Horizontal bars, one per ``(label, value)``, each under its label, on an axis from 0 to
    ``limit`` (a budget: drawn as a dashed line) or the largest value; each bar is labelled with
    its value (and its share of ``share_of``), so that no number is read from a length alone."""
    top = max([v for _, v in items] + [limit or 0.0, 1e-12])
    plot = WIDTH - 130
    height = ROW * len(items) + (30 if limit else 8)
    alt = "; ".join(f"{lab}: {fmt(v)}{unit}" + (f" ({v / share_of:.0%})" if share_of else "") for lab, v in items)
    if limit:
        alt += f"; {limit_label or 'limit'}: {fmt(limit)}{unit}"
    out = [_svg_open(WIDTH, height, title, f"{title}. {alt}")]
    for i, (lab, v) in enumerate(items):
        y = i * ROW
        w = max(plot * v / top, 1.0 if v > 0 else 0.0)
        text = f"{fmt(v)}{unit}" + (f" ({v / share_of:.0%})" if share_of else "")
        out.append(f'<text x="2" y="{y + 14}" fill="{TEXT}" font-size="{FONT}">{_e(_clip(lab, 60))}</text>'
                   f'<rect x="2" y="{y + 18}" width="{w:.1f}" height="12" fill="{ACCENT}"/>'
                   f'<text x="{w + 7:.1f}" y="{y + 29}" fill="{TEXT}" font-size="{FONT}">{_e(text)}</text>')
    if limit:
        x = 2 + plot * limit / top
        y2 = len(items) * ROW + 4
        out.append(f'<line x1="{x:.1f}" y1="16" x2="{x:.1f}" y2="{y2}" stroke="{TEXT}" stroke-dasharray="4 3"/>'
                   f'<text x="{x:.1f}" y="{y2 + 18}" text-anchor="end" fill="{TEXT}" font-size="{FONT}">'
                   f"{_e(limit_label)} {_e(fmt(limit))}{_e(unit)}</text>")
    return "".join(out) + "</svg>"


def paired_bars(labels: Sequence[str], first: Sequence[float], second: Sequence[float], *, title: str,
                names: tuple[str, str]) -> str:
    """Two bars per label (shares in [0, 1]) under it: ``first`` solid, ``second`` light with an
    outline, and a legend in words — the two series differ by more than colour."""
    plot = WIDTH - 70
    top = max([*first, *second, 1e-12])
    row = 50
    height = row * len(labels) + 24
    alt = "; ".join(f"{lab}: {names[0]} {a:.1%}, {names[1]} {b:.1%}" for lab, a, b in zip(labels, first, second,
                                                                                          strict=True))
    out = [_svg_open(WIDTH, height, title, f"{title}. {alt}")]
    out.append(f'<rect x="2" y="4" width="12" height="12" fill="{ACCENT}"/>'
               f'<text x="18" y="15" fill="{TEXT}" font-size="{FONT}">{_e(names[0])}</text>'
               f'<rect x="150" y="4" width="12" height="12" fill="{SECOND}" stroke="{TEXT}"/>'
               f'<text x="166" y="15" fill="{TEXT}" font-size="{FONT}">{_e(names[1])}</text>')
    for i, (lab, a, b) in enumerate(zip(labels, first, second, strict=True)):
        y = 24 + i * row
        out.append(f'<text x="2" y="{y + 13}" fill="{TEXT}" font-size="{FONT}">{_e(_clip(lab, 60))}</text>')
        for j, (v, colour) in enumerate(((a, ACCENT), (b, SECOND))):
            w = plot * v / top
            yy = y + 17 + j * 14
            stroke = f' stroke="{TEXT}" stroke-width="0.5"' if j else ""
            out.append(f'<rect x="2" y="{yy}" width="{w:.1f}" height="11" fill="{colour}"{stroke}/>'
                       f'<text x="{w + 7:.1f}" y="{yy + 10}" fill="{TEXT}" font-size="12">{v:.1%}</text>')
    return "".join(out) + "</svg>"


def lines(series: Sequence[tuple[str, Sequence[float], Sequence[float]]], *, title: str, x_label: str,
          y_label: str, diagonal: bool = True, alt: str = "") -> str:
    """Lines on the unit square (a ROC curve): each ``(name, xs, ys)`` in its own colour and dash
    pattern, named in a legend; ``diagonal`` draws chance."""
    size, pad = 320, 44
    width = size + pad + 16
    legend_y = size + 60
    out = [_svg_open(width, legend_y + 20 * len(series) + 4, title, f"{title}. {alt}")]

    def px(x: float, y: float) -> str:
        return f"{pad + x * size:.1f},{10 + (1 - y) * size:.1f}"

    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{pad}" y1="{10 + (1 - t) * size:.1f}" x2="{pad + size}" y2="{10 + (1 - t) * size:.1f}" '
                   f'stroke="{GRID}"/><text x="{pad - 4}" y="{14 + (1 - t) * size:.1f}" text-anchor="end" '
                   f'fill="{MUTED}" font-size="11">{t:g}</text>'
                   f'<text x="{pad + t * size:.1f}" y="{size + 26}" text-anchor="middle" fill="{MUTED}" '
                   f'font-size="11">{t:g}</text>')
    out.append(f'<text x="{pad + size / 2}" y="{size + 42}" text-anchor="middle" fill="{TEXT}" font-size="12">'
               f"{_e(x_label)}</text>"
               f'<text x="12" y="{10 + size / 2}" transform="rotate(-90 12 {10 + size / 2})" text-anchor="middle" '
               f'fill="{TEXT}" font-size="12">{_e(y_label)}</text>')
    if diagonal:
        out.append(f'<polyline points="{px(0, 0)} {px(1, 1)}" fill="none" stroke="{MUTED}" stroke-dasharray="2 3"/>')
    styles = [(ACCENT, ""), (SECOND, ' stroke-dasharray="6 3"'), (TEXT, ' stroke-dasharray="1 3"')]
    for i, (name, xs, ys) in enumerate(series):
        colour, dash = styles[i % len(styles)]
        pts = " ".join(px(x, y) for x, y in zip(xs, ys, strict=True))
        ly = legend_y + i * 20
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
                   f'<line x1="{pad}" y1="{ly}" x2="{pad + 26}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>'
                   f'<text x="{pad + 32}" y="{ly + 4}" fill="{TEXT}" font-size="{FONT}">{_e(name)}</text>')
    return "".join(out) + "</svg>"


def scatter(points: Sequence[tuple[float, float]], *, bounds: tuple[tuple[float, float], tuple[float, float]],
            title: str, axes: tuple[str, str], sizes: Sequence[float] | None = None, alt: str = "") -> str:
    """Points (centroids) on the public box ``bounds`` (drawn as the frame), each numbered; with
    ``sizes``, a circle's area follows its size and the number is written beside it."""
    size, pad = 340, 76
    (x0, x1), (y0, y1) = bounds
    sx, sy = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    out = [_svg_open(size + pad + 20, size + pad + 20, title, f"{title}. {alt}"),
           f'<rect x="{pad}" y="10" width="{size}" height="{size}" fill="none" stroke="{MUTED}"/>']
    for lab, x, anchor in ((fmt(x0), pad, "start"), (fmt(x1), pad + size, "end")):
        out.append(f'<text x="{x}" y="{size + 26}" text-anchor="{anchor}" fill="{MUTED}" font-size="11">{_e(lab)}</text>')
    out.append(f'<text x="{pad - 4}" y="{size + 10}" text-anchor="end" fill="{MUTED}" font-size="11">{_e(fmt(y0))}</text>'
               f'<text x="{pad - 4}" y="20" text-anchor="end" fill="{MUTED}" font-size="11">{_e(fmt(y1))}</text>'
               f'<text x="{pad + size / 2}" y="{size + 42}" text-anchor="middle" fill="{TEXT}" font-size="12">'
               f"{_e(axes[0])}</text>"
               f'<text x="14" y="{10 + size / 2}" transform="rotate(-90 14 {10 + size / 2})" text-anchor="middle" '
               f'fill="{TEXT}" font-size="12">{_e(axes[1])}</text>')
    big = max(sizes) if sizes else 0
    for i, (x, y) in enumerate(points):
        cx, cy = pad + size * (x - x0) / sx, 10 + size * (1 - (y - y0) / sy)
        r = 4 + (14 * (max(sizes[i], 0) / big) ** 0.5 if sizes and big > 0 else 0)
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="{ACCENT}" fill-opacity="0.55" '
                   f'stroke="{TEXT}"/><text x="{cx + r + 2:.1f}" y="{cy + 4:.1f}" fill="{TEXT}" font-size="11">'
                   f"{i + 1}</text>")
    return "".join(out) + "</svg>"
