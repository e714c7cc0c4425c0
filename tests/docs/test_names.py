"""The code the documentation names exists: every dotted name under ``harness`` or
``implementations`` imports, and every repository path names a file or folder that is there."""

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose names this test holds to the code.
PAGES = [
    ROOT / "README.md",
    *(
        ROOT / "docs" / f"{name}.md"
        for name in ("algorithms", "verdicts", "experiments", "running", "testing-your-sampler")
    ),
]
DOTTED = re.compile(r"`((?:harness|implementations)(?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(r"`((?:harness|implementations|tests|suites|bench|docs)/[^`\s]*)`")


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or an attribute reached from its longest module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def missing(page: Path) -> list[str]:
    text = page.read_text()
    out = [f"{d}: does not import" for d in sorted(set(DOTTED.findall(text))) if not resolves(d)]
    for path in sorted(set(PATH.findall(text))):
        path = path.split(":", 1)[0]
        pattern = re.sub(r"<[^>]*>", "*", path).rstrip("/")  # harness/gates/<name>.py
        if not list(ROOT.glob(pattern)):
            out.append(f"{path}: no such file or folder")
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_named_module_object_and_path_exists(page):
    assert missing(page) == []


def test_a_stale_name_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("`harness.spec.AlgorithmSpec` `harness.spec.NoSuchThing` `harness/nowhere.py`")
    assert missing(page) == [
        "harness.spec.NoSuchThing: does not import",
        "harness/nowhere.py: no such file or folder",
    ]
