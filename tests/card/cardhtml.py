"""What the card tests read from a page: parsed with the standard library's HTML parser."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

CARDS = Path(__file__).resolve().parents[1] / "data" / "cards"
#: the stored reports of the four commands' `make demo`-sized runs (seeded: reproducible)
KINDS = ("publish", "publish-learned", "forest", "cluster", "kanon")
#: and the owner's card of the publish run (its evaluation on Adult's test rows, stored)
ALL_KINDS = (*KINDS, "publish-owner")


def card_html(kind: str) -> str:
    """The card of a stored report; ``publish-owner``: with the stored evaluation of its test rows."""
    import json

    import dpkit

    if kind != "publish-owner":
        return dpkit.report_card(CARDS / f"{kind}.report.json")
    from dpkit.api.card import domain_of
    from dpkit.card import render

    report = json.loads((CARDS / "publish.report.json").read_text(encoding="utf-8"))
    evaluation = json.loads((CARDS / "publish.evaluation.json").read_text(encoding="utf-8"))
    schema = dpkit.load_schema(CARDS.parents[2] / "taxonomies" / "adult.yaml")
    return render(report, domain=domain_of(schema), evaluation=evaluation, source="publish.report.json")


@dataclass
class Svg:
    attrs: dict[str, str]
    title: str = ""


@dataclass
class Page(HTMLParser):
    """Headings in order, charts, table heads, every URL-bearing attribute, and the tags met."""

    headings: list[tuple[str, str]] = field(default_factory=list)
    svgs: list[Svg] = field(default_factory=list)
    ths: list[dict[str, str]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        HTMLParser.__init__(self, convert_charrefs=True)
        self._heading: str | None = None
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        self.classes.extend(a.get("class", "").split())
        for k in ("src", "href", "action", "xlink:href", "data", "poster", "srcset", "background"):
            if k in a:
                self.urls.append(a[k])
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = tag
            self.headings.append((tag, ""))
        elif tag == "svg":
            self.svgs.append(Svg(a))
        elif tag == "title" and self.svgs:
            self._in_title = True
        elif tag == "th":
            self.ths.append(a)

    def handle_endtag(self, tag: str) -> None:
        if tag == self._heading:
            self._heading = None
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._heading is not None:
            tag, text = self.headings[-1]
            self.headings[-1] = (tag, text + data)
        if self._in_title and self.svgs:
            self.svgs[-1].title += data


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page
