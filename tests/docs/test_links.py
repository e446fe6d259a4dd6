"""Every relative markdown link in README.md, CHANGELOG.md and docs/**/*.md resolves (issue 45):
the file exists and, for a link to a heading, the heading does (GitHub's anchor rule)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*```")


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"<[^>]+>", "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6} (.+?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def links(page: Path):
    fenced = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in LINK.finditer(re.sub(r"`[^`]*`", "``", line)):  # not inside inline code
            yield number, m.group(1)


def test_slug_follows_github():
    assert slug("Defaults, and why (measured; docs/results/domain.md)") == "defaults-and-why-measured-docsresultsdomainmd"
    assert slug("Numbers: DP quantiles on a wide public grid") == "numbers-dp-quantiles-on-a-wide-public-grid"


def test_every_relative_link_resolves():
    broken, checked = [], 0
    for page in pages():
        for number, target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, …
                continue
            checked += 1
            path, _, fragment = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}:{number}: {target}"
            if not dest.exists():
                broken.append(f"{where} (no such file)")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                broken.append(f"{where} (no such heading)")
    assert checked > 100  # the pattern still finds the links
    assert not broken, "\n".join(broken)
