"""The index returns racing-arch runs on (000, Sec. 5.2): daily prices shipped inside the arch
package, read offline, and a one-line error when that package is missing."""

from __future__ import annotations

import importlib
import re
from typing import Any

import numpy as np
import pytest

from harness.experiments.racing_arch import ArchConfig, chain
from harness.targets import arch


@pytest.mark.parametrize("name", sorted(arch.INDEXES))
def test_the_index_returns_load_whole_and_finite(name: str) -> None:
    series = arch.index_returns(name)
    r = series.returns
    assert r.shape == (arch.INDEX_RETURNS,) and r.dtype == np.float64
    assert np.all(np.isfinite(r)) and not r.flags.writeable
    assert (series.first, series.last) == ("1999-01-05", "2018-12-31")
    # Daily log returns as fractions: a sd of about 1-2%, a mean far below it.
    assert 0.005 < r.std() < 0.03 and abs(r.mean()) < r.std() / 50
    about = series.describe()
    assert about["n_returns"] == r.size and len(about["sha256"]) == 64
    assert arch.INDEXES[name] in about["source"] and "arch.data" in about["source"]
    # The modelled terms: every return after the first QMAX, about 5,000.
    assert arch.arch_data(r).N == arch.INDEX_RETURNS - arch.QMAX == 5000


def test_a_shorter_series_is_the_last_days() -> None:
    whole, last = arch.index_returns("nasdaq"), arch.index_returns("nasdaq", 630)
    np.testing.assert_array_equal(last.returns, whole.returns[-630:])
    assert last.last == whole.last and last.first > whole.first
    with pytest.raises(ValueError, match="5030"):
        arch.index_returns("nasdaq", arch.INDEX_RETURNS + 1)
    with pytest.raises(ValueError, match="'shanghai'"):
        arch.index_returns("shanghai")


def test_a_missing_arch_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def without_arch(name: str, *args: Any) -> Any:
        if name.split(".")[0] == "arch":
            raise ModuleNotFoundError(f"No module named {name!r}", name="arch")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_arch)
    with pytest.raises(arch.MissingPackage, match=re.escape("pip install 'arch>=8.0,<9'")) as info:
        arch.index_returns("sp500")
    # One line, and a RuntimeError too: the CLI prints it as its error, without a traceback.
    assert "\n" not in str(info.value) and isinstance(info.value, RuntimeError)


def test_the_primary_config_reads_the_index_and_the_variant_simulates() -> None:
    config = ArchConfig.for_level("quick", 0, N=600, variant_N=600, batch=50)
    (_, primary), (_, variant) = config.runs()
    r, about = chain.config_returns(primary)
    np.testing.assert_array_equal(r, arch.index_returns("nasdaq", 630).returns)
    assert about["simulated"] is False and about["first"] > "2016"
    sim, about = chain.config_returns(variant)
    assert sim.size == 630 and about["simulated"] is True and about["true_q"] == 10
    assert chain.config_data(primary).N == chain.config_data(variant).N == 600
