"""(being written)"""

from __future__ import annotations

from harness.gates.result import Supplement

SUPPLEMENTS: tuple[Supplement, ...] = ()
