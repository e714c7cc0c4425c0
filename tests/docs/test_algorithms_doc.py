"""docs/algorithms.md's A* example runs as written and draws exactly."""

from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]


def test_the_astar_example_draws_exactly(capsys):
    text = (ROOT / "docs" / "algorithms.md").read_text()
    block = text.split("<!-- astar-example -->", 1)[1].split("<!-- /astar-example -->", 1)[0]
    namespace: dict = {}
    exec(block.split("```python", 1)[1].split("```", 1)[0], namespace)
    assert len(capsys.readouterr().out.split()) == 3
    target, draws = namespace["target"], namespace["draws"]
    assert stats.kstest(draws.values, target.cdf).pvalue > 1e-3
    gumbel = stats.gumbel_r(loc=target.truth.log_z).cdf
    assert stats.kstest(draws.extras["gumbel_max"], gumbel).pvalue > 1e-3
    assert np.all(draws.extras["bound_evals"] >= 1)
