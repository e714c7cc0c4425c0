"""Every paper file name the project cites (``NNN_<16 hex>.txt``) is listed in docs/papers.md,
which lists exactly the five papers: a clone has no copy of the papers, so that page is where a
reader learns which paper a name stands for."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAPERS_PAGE = ROOT / "docs" / "papers.md"
#: A paper's file name, as the code and the docs cite it.
PAPER_NAME = re.compile(r"\b\d{3}_[0-9a-f]{16}\.txt\b")
#: The tracked files scanned for citations.
SUFFIXES = (".py", ".md", ".toml", ".j2", ".txt")


def unlisted_papers(text: str, listed: set[str]) -> set[str]:
    """The paper file names cited in ``text`` that are not in ``listed``."""
    return set(PAPER_NAME.findall(text)) - listed


def listed_papers() -> set[str]:
    return set(PAPER_NAME.findall(PAPERS_PAGE.read_text()))


def tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = [ROOT / name for name in out.splitlines() if name.endswith(SUFFIXES)]
    return [f for f in files if f.is_file()]


def test_every_cited_paper_is_listed():
    listed = listed_papers()
    files = tracked_text_files()
    assert files, "git ls-files found no text files"
    missing = {
        str(f.relative_to(ROOT)): sorted(unlisted_papers(f.read_text(errors="replace"), listed))
        for f in files
    }
    assert {path: names for path, names in missing.items() if names} == {}


def test_the_page_lists_exactly_five_papers():
    text = PAPERS_PAGE.read_text()
    assert len(listed_papers()) == 5
    assert len(re.findall(r"^## \d{3}: ", text, flags=re.MULTILINE)) == 5


def test_an_unlisted_name_is_reported():
    # Built at run time, so that this module cites no unlisted name itself.
    fake = "999_" + "0123456789abcdef" + ".txt"
    text = f"Follows {fake}, Alg. 1, and 000_26bed7cc1ef3ab92.txt, Eq. 2."
    assert unlisted_papers(text, listed_papers()) == {fake}
