"""003 Thm. 3 (Trefethen's Thm. 8.2) on the kind of energy our PGITS and PGDA kernels
interpolate: the degree-m Chebyshev interpolant's error against 4 V rho^-m / (rho - 1).

The energy is a Poisson-minibatch one, U(v) = log(1 + kappa (v + 1)) on v in [0, 1] (003 Alg. 2
with a bilinear factor at x_j = 1; its weight sum_S s_phi scales error and bound alike, so it is
1 here). Its branch point at v = -(1 + 1 / kappa) limits the Bernstein ellipse; V(rho) is the
largest |U| on the ellipse's boundary (the maximum modulus principle), and the bound is the least
over rho. The interpolant is the samplers' own (first-kind points, the registered PGITS's parts),
while Trefethen states the theorem for second-kind points: that difference is what can fail.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from harness.registry import registry_for

#: kappa = L / (lambda M_phi) phi-scale: 1/4 is lambda = 2L on the spin model, larger kappa
#: a smaller lambda and a branch point nearer [0, 1].
KAPPAS = (0.25, 1.0, 4.0, 16.0)
DEGREES = (3, 10)
#: Errors below this are rounding, not interpolation: such cases are recorded, not judged.
ROUNDING = 1e-11
KEY = "chebyshev|thm3|" + ",".join(f"{k:g}" for k in KAPPAS) + "|m=" + ",".join(map(str, DEGREES))


def energy(kappa: float, t: np.ndarray) -> np.ndarray:
    """U at t in [-1, 1] (v = (t + 1) / 2), complex t allowed (principal log)."""
    v = (t + 1.0) / 2.0
    return np.log(1.0 + kappa * (v + 1.0) + 0j)


def bound(kappa: float, m: int, n_rho: int = 200, n_arc: int = 2000) -> tuple[float, float, float]:
    """(least bound, its rho, the branch point's rho) over rho below the branch point."""
    t_star = -2.0 / kappa - 3.0  # where 1 + kappa (v + 1) = 0
    rho_max = abs(t_star) + math.sqrt(t_star * t_star - 1.0)
    theta = np.linspace(0.0, 2.0 * math.pi, n_arc, endpoint=False)
    best = (math.inf, math.nan)
    for rho in np.linspace(1.0, rho_max, n_rho + 2)[1:-1]:
        z = 0.5 * (rho * np.exp(1j * theta) + np.exp(-1j * theta) / rho)
        V = float(np.abs(energy(kappa, z)).max())
        b = 4.0 * V * rho ** (-m) / (rho - 1.0)
        best = min(best, (float(b), float(rho)))
    return best[0], best[1], rho_max


def interpolation_error(kappa: float, m: int, n_grid: int = 4001) -> float:
    """max |U~ - U| on [-1, 1], U~ the samplers' degree-m interpolant."""
    part = registry_for(()).get("pgits").part  # PGITS's own interpolant
    t, table = part("cheb_plan")(m)
    c = part("cheb_coefficients")(energy(kappa, t).real.tolist(), table.tolist())
    grid = np.linspace(-1.0, 1.0, n_grid)
    clenshaw = part("clenshaw")
    approx = np.array([clenshaw(c, float(x)) for x in grid])
    return float(np.abs(approx - energy(kappa, grid).real).max())


def run_chebyshev() -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    cases = []
    for kappa in KAPPAS:
        for m in DEGREES:
            b, rho, rho_max = bound(kappa, m)
            err = interpolation_error(kappa, m)
            cases.append(
                {
                    "kappa": kappa,
                    "m": m,
                    "error": err,
                    "bound": b,
                    "rho": rho,
                    "rho_branch": rho_max,
                    "judged": err > ROUNDING,
                }
            )
    return [
        {
            "key": KEY,
            "type": "chebyshev",
            "cases": cases,
            "wall_s": time.perf_counter() - t0,
        }
    ]
