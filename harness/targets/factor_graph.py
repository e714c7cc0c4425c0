"""Discrete pairwise factor graphs (003_07f92522b9b1c588.txt, Sec. 1.1), with the enumerated joint.

pi(x) ∝ exp(U(x)), U(x) = sum_phi phi(x), x in {0, ..., D-1}^n. Every factor phi touches an
ordered pair of distinct variables (a, b) and is stored as a table ``tables[f, x_a, x_b]``, shifted
so that 0 <= phi <= M_phi (003's convention; the shift does not change pi). Everything a sampler
needs is precomputed here as plain arrays a Numba kernel can read: the adjacency A[i] in CSR form,
the sum of M_phi over A[i], and one alias table over M_phi per variable (Statement 1's O(1) draw).

Definitions follow 003, Sec. 1.1: ``L = max_i sum_{phi in A[i]} M_phi`` (local maximum energy),
``psi = sum_phi M_phi`` (total maximum energy, 003's Psi) and ``delta = max_i |A[i]|`` (maximum
degree, 003's Delta).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from harness.spec import Param, finite_number

#: Enumerating D^n states is ground truth only for tiny graphs.
MAX_ENUMERATED_STATES = 1 << 20


def readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


def check_n_vars(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise ValueError(f"n_vars = {n!r}; valid: an integer >= 2 (a factor needs a pair)")
    return int(n)


def checked_scopes(scopes: object, n: int) -> np.ndarray:
    """``scopes`` as a C-ordered int64 array of distinct variable pairs among 0..n-1."""
    scopes = np.array(scopes, dtype=np.int64, order="C")
    if scopes.size == 0:
        raise ValueError("scopes is empty (a graph with no factors); valid: >= 1 factor")
    if scopes.ndim != 2 or scopes.shape[1] != 2:
        raise ValueError(f"scopes has shape {scopes.shape}; valid: (n_factors, 2) variable pairs")
    for f, (a, b) in enumerate(scopes.tolist()):
        for v in (a, b):
            if not 0 <= v < n:
                raise ValueError(f"scopes[{f}] = {(a, b)} names variable {v}; valid: 0..{n - 1}")
        if a == b:
            raise ValueError(f"scopes[{f}] = {(a, b)}; valid: two distinct variables")
    return scopes


def _check_tables(tables: np.ndarray, M: np.ndarray, n_factors: int, D: int) -> None:
    if tables.shape != (n_factors, D, D):
        raise ValueError(f"tables has shape {tables.shape}; valid: {(n_factors, D, D)}")
    if M.shape != (n_factors,):
        raise ValueError(f"M has shape {M.shape}; valid: ({n_factors},), one bound per factor")
    for f, m in enumerate(M.tolist()):
        if not (math.isfinite(m) and m > 0.0):
            raise ValueError(
                f"M[{f}] = {m!r}; valid: a finite number > 0 (drop a constant factor instead)"
            )
    bad = ~np.isfinite(tables) | (tables < 0.0) | (tables > M[:, None, None])
    if bad.any():
        f, u, v = (int(k) for k in np.argwhere(bad)[0])
        raise ValueError(
            f"tables[{f}, {u}, {v}] = {float(tables[f, u, v])!r} (factor value); "
            f"valid: [0, M[{f}]] = [0, {float(M[f])!r}]"
        )


def alias_table(weights: list[float]) -> tuple[list[float], list[int]]:
    """Vose's alias method: draw k = floor(u * K), keep it with prob[k], else take alias[k].

    Built once per variable in plain Python floats, so reference and Numba read the same table.
    """
    K = len(weights)
    total = math.fsum(weights)
    scaled = [w * K / total for w in weights]
    prob = [1.0] * K
    alias = list(range(K))
    small = [k for k in range(K) if scaled[k] < 1.0]
    large = [k for k in range(K) if scaled[k] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        prob[s] = scaled[s]
        alias[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        (small if scaled[g] < 1.0 else large).append(g)
    return prob, alias  # leftovers keep prob 1 (rounding only)


def build_adjacency(target: PairwiseIndex) -> None:
    """Set the CSR adjacency A[i], the per-variable alias tables over M_phi, L, Psi and the
    maximum degree on a frozen pairwise target with ``n_vars``, ``scopes`` and ``M`` (003,
    Sec. 1.1; Statement 1 draws through these alias tables). Shared by the discrete and the
    continuous factor graphs, so the Poisson-count code reads the same arrays from both."""
    n = target.n_vars
    lists: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    for f, (a, b) in enumerate(target.scopes.tolist()):
        lists[a].append((f, 0, b))
        lists[b].append((f, 1, a))
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(lst) for lst in lists])
    flat = [t for lst in lists for t in lst]
    Ml = target.M.tolist()
    m_sum = np.array([math.fsum(Ml[f] for f, _, _ in lst) for lst in lists])
    prob: list[float] = []
    alias: list[int] = []
    for lst in lists:
        if lst:
            p, q = alias_table([Ml[f] for f, _, _ in lst])
            prob += p
            alias += q
    derived = {
        "adj_indptr": indptr,
        "adj_factors": np.array([t[0] for t in flat], dtype=np.int64),
        "adj_pos": np.array([t[1] for t in flat], dtype=np.int64),
        "adj_other": np.array([t[2] for t in flat], dtype=np.int64),
        "m_sum": m_sum,
        "alias_prob": np.array(prob, dtype=np.float64),
        "alias_idx": np.array(alias, dtype=np.int64),
    }
    for name, arr in derived.items():
        object.__setattr__(target, name, readonly(arr))
    object.__setattr__(target, "L", float(m_sum.max()))
    object.__setattr__(target, "psi", math.fsum(Ml))
    object.__setattr__(target, "delta", int(np.diff(indptr).max()))


@dataclass(frozen=True, eq=False)
class PairwiseIndex:
    """The fields :func:`build_adjacency` derives, shared by the discrete and the continuous
    factor graphs (``init=False``: a subclass's ``__post_init__`` sets them)."""

    adj_indptr: np.ndarray = field(init=False, repr=False)
    adj_factors: np.ndarray = field(init=False, repr=False)
    adj_pos: np.ndarray = field(init=False, repr=False)
    adj_other: np.ndarray = field(init=False, repr=False)
    m_sum: np.ndarray = field(init=False, repr=False)
    alias_prob: np.ndarray = field(init=False, repr=False)
    alias_idx: np.ndarray = field(init=False, repr=False)
    L: float = field(init=False)
    psi: float = field(init=False)
    delta: int = field(init=False)


@dataclass(frozen=True, eq=False)
class FactorGraphTarget(PairwiseIndex):
    """pi(x) ∝ exp(sum_f tables[f, x[scopes[f, 0]], x[scopes[f, 1]]]) over {0..D-1}^n_vars.

    Ground truth for tiny graphs: :attr:`pmf`, the joint over all D^n states in the order of
    :meth:`states` (variable 0 most significant), normalised with ``logsumexp`` of per-state
    energies summed by ``math.fsum``: exact to a few ulps.
    """

    n_vars: int
    D: int
    scopes: np.ndarray
    tables: np.ndarray
    M: np.ndarray
    name: str = "factor-graph"
    meta: dict = field(default_factory=dict)
    kind: ClassVar[str] = "factor-graph"

    def __post_init__(self) -> None:
        n, D = check_n_vars(self.n_vars), self.D
        if isinstance(D, bool) or not isinstance(D, int | np.integer) or D < 2:
            raise ValueError(f"D = {D!r} (domain size); valid: an integer >= 2")
        scopes = checked_scopes(self.scopes, n)
        tables = np.array(self.tables, dtype=np.float64, order="C")
        M = np.array(self.M, dtype=np.float64, order="C")
        _check_tables(tables, M, scopes.shape[0], int(D))
        object.__setattr__(self, "n_vars", n)
        object.__setattr__(self, "D", int(D))
        for name, arr in (("scopes", scopes), ("tables", tables), ("M", M)):
            object.__setattr__(self, name, readonly(arr))
        build_adjacency(self)

    @cached_property
    def slot_records(self) -> np.ndarray:
        """One flat float64 record of width ``4 + D * D`` per adjacency slot j (A[i] in CSR order):
        ``[alias_prob[j], alias_idx[j], M_phi, other variable, T]`` with T[u * D + v] = phi at
        x(i) = v and x(other) = u. A Poisson-Gibbs proposal (003, Alg. 2 / Statement 1) then
        reads one contiguous record, and the D values its minibatch energy needs lie side by
        side. The two indices are stored as floats (exact below 2^53). Built on first use: about
        (4 + D^2) * 8 bytes per slot, a copy of each factor table per endpoint."""
        D = self.D
        f, pos = self.adj_factors, self.adj_pos
        tab = self.tables[f]  # tab[j, a-value, b-value]
        first = pos == 0  # x(i) is the first argument: T[u, v] = tables[f, v, u]
        tab[first] = tab[first].transpose(0, 2, 1)
        rec = np.empty((f.size, 4 + D * D))
        rec[:, 0] = self.alias_prob
        rec[:, 1] = self.alias_idx
        rec[:, 2] = self.M[f]
        rec[:, 3] = self.adj_other
        rec[:, 4:] = tab.reshape(f.size, D * D)
        return readonly(rec.reshape(-1))

    @property
    def n_factors(self) -> int:
        return int(self.scopes.shape[0])

    def log_unnormalised(self, x: np.ndarray) -> float:
        """U(x) = sum_phi phi(x) (003, Sec. 1.1), correctly rounded."""
        x = np.asarray(x, dtype=np.int64)
        a, b = self.scopes[:, 0], self.scopes[:, 1]
        return math.fsum(self.tables[np.arange(self.n_factors), x[a], x[b]].tolist())

    def states(self) -> np.ndarray:
        """All D^n states, variable 0 most significant; raise for graphs too large to enumerate."""
        size = self.D**self.n_vars
        if size > MAX_ENUMERATED_STATES:
            raise ValueError(
                f"D^n = {self.D}^{self.n_vars} = {size} states; valid for enumeration: "
                f"<= {MAX_ENUMERATED_STATES}"
            )
        grid = np.indices((self.D,) * self.n_vars).reshape(self.n_vars, -1).T
        return readonly(np.ascontiguousarray(grid, dtype=np.int64))

    def state_index(self, x: np.ndarray) -> int:
        """Position of state x in :meth:`states`."""
        return int(
            np.ravel_multi_index(tuple(np.asarray(x, dtype=np.int64)), (self.D,) * self.n_vars)
        )

    @cached_property
    def log_unnormalised_all(self) -> np.ndarray:
        return readonly(np.array([self.log_unnormalised(x) for x in self.states()]))

    @cached_property
    def pmf(self) -> np.ndarray:
        """The enumerated joint pi over :meth:`states` (ground truth for tiny graphs)."""
        lu = self.log_unnormalised_all
        p = np.exp(lu - logsumexp(lu))
        p /= p.sum()
        return readonly(p)


#: The inverse temperature of a Potts or continuous-spin model, and the side of a grid of them.
BETA = finite_number("beta", above=0.0)
SIDE = Param("side", 2, int, low=2)


def potts_target(A: np.ndarray, beta: float, D: int, name: str = "potts") -> FactorGraphTarget:
    """Potts model: phi_ij(x) = beta A_ij 1[x_i == x_j], M_ij = beta A_ij, one factor per pair
    i < j with A_ij > 0 (003, Sec. 4.1)."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A has shape {A.shape}; valid: a square interaction matrix")
    if not np.allclose(A, A.T, rtol=0.0, atol=0.0) or np.any(A < 0) or not np.isfinite(A).all():
        raise ValueError("A must be symmetric, finite and >= 0 (interaction strengths A_ij)")
    BETA.check(beta)
    D = Param("D", 2, int, low=2, doc="domain size").check(D)
    i, j = np.nonzero(np.triu(A, k=1))
    M = beta * A[i, j]
    tables = M[:, None, None] * np.eye(D)[None, :, :]
    return FactorGraphTarget(
        int(A.shape[0]),
        D,
        np.stack([i, j], axis=1),
        tables,
        M,
        name=name,
        # Relabelling the D values leaves every factor unchanged: each marginal is uniform.
        meta={"beta": beta, "symmetric": True},
    )


def potts_grid(side: int, beta: float, D: int, scale: float = 1.5) -> FactorGraphTarget:
    """003, Sec. 4.1: a side x side grid, fully connected, A_ij = exp(-scale ||p_i - p_j||^2)."""
    side = SIDE.check(side)
    p = np.indices((side, side)).reshape(2, -1).T.astype(np.float64)
    d2 = ((p[:, None, :] - p[None, :, :]) ** 2).sum(axis=-1)
    A = np.exp(-scale * d2)
    np.fill_diagonal(A, 0.0)
    return potts_target(A, beta, D, name=f"potts-grid-{side}x{side}-D{D}-beta{beta:g}")


def random_factor_graph(
    n: int, D: int, rng: np.random.Generator, edge_prob: float = 0.7, max_M: float = 1.0
) -> FactorGraphTarget:
    """A tiny random pairwise graph for tests: each pair i < j is a factor with probability
    ``edge_prob`` (a chain 0-1-...-(n-1) is always present so no variable is isolated); its
    bound M ~ Unif(0.2, 1) * max_M and its table entries ~ Unif(0, M)."""
    n = Param("n", 2, int, low=2, doc="variables").check(n)
    D = Param("D", 2, int, low=2, doc="domain size").check(D)
    Param("edge_prob", 0.7, float, low=0.0, high=1.0).check(edge_prob)
    max_M = Param(
        "max_M", 1.0, float, low=0.0, high=math.inf, low_inclusive=False, high_inclusive=False
    ).check(max_M)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    keep = [(i, j) for (i, j) in pairs if j == i + 1 or rng.random() < edge_prob]
    M = max_M * (0.2 + 0.8 * rng.random(len(keep)))
    tables = rng.random((len(keep), D, D)) * M[:, None, None]
    return FactorGraphTarget(n, D, np.array(keep), tables, M, name=f"random-n{n}-D{D}")
