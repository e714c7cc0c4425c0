"""Every relative link in README.md and docs/*.md names a file that exists and, after '#', a
heading of that file (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(text: str) -> set[str]:
    """The anchors GitHub makes from the headings of ``text`` (outside code blocks)."""
    out = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def broken_links(page: Path) -> list[str]:
    out = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # http:, mailto:
        path, _, anchor = target.partition("#")
        file = page.parent / path if path else page
        if not file.exists():
            out.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(file.read_text()):
            out.append(f"{target}: no such heading")
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page):
    assert broken_links(page) == []


def test_a_broken_link_is_caught(tmp_path):
    (tmp_path / "a.md").write_text("# Top A\n\n[ok](#top-a) [bad](b.md) [gone](a.md#nowhere)\n")
    assert broken_links(tmp_path / "a.md") == [
        "b.md: no such file",
        "a.md#nowhere: no such heading",
    ]
