from pathlib import Path

import numpy as np
import pytest

from harness.registry import build_registry
from harness.targets.continuous import TruncatedGumbelTarget
from harness.targets.discrete import synthetic_rewards

ROOT = Path(__file__).resolve().parent.parent
BROKEN = str(ROOT / "tests" / "plugins" / "broken_samplers.py")


@pytest.fixture(scope="session")
def registry():
    return build_registry()


@pytest.fixture(scope="session")
def small_discrete():
    return synthetic_rewards(6, 40, "normal", 1.0, np.random.default_rng(11))


@pytest.fixture(scope="session")
def small_trunc():
    return TruncatedGumbelTarget(0.5, 1.0)


def target_for(kind, small_discrete, small_trunc):
    return {"discrete": small_discrete, "continuous-1d": small_trunc}[kind]
