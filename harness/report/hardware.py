"""The report's across-hardware panel, from ``harness speed --hardware --json`` and
``harness speed --bandwidth --json`` files: where racing on a CPU beats an exact draw on a GPU
(the saving each cell needs against the saving racing gets), and the device's read against a
copy of the same bytes. Cells without GPU numbers say so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.display import cell, microseconds, table
from harness.figures import inline_svg, legend_below
from harness.speed.timings import json_file

KEYS = ("hardware", "bandwidth")


def is_hardware(path: Path) -> bool:
    data = json_file(path)
    return isinstance(data, dict) and any(k in data for k in KEYS)


def load_hardware(path: Path) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    rows = data.get("hardware", {}).get("rows", [])
    need = {"kind", "D", "N", "racing_1core_s", "exact_cpu_s", "exact_gpu_s", "saving"}
    if not all(isinstance(r, dict) and need <= set(r) for r in rows):
        raise ValueError(
            f"hardware file {str(path)!r} is invalid; valid: {{'hardware': {{'rows': [rows "
            f"with {', '.join(sorted(need))}]}}}} as `harness speed --hardware --json` writes"
        )
    return {**data, "source": str(path)}


def _us(x: float | None) -> str:
    return "no GPU numbers" if x is None else microseconds(x)


#: The saving figure's colours, by the names its caption gives them.
WINS, LOSES, NEEDED = ("green", "#2e7d32"), ("red", "#c62828"), ("grey", "#bbbbbb")


def _wins(rows: list[dict[str, Any]]) -> np.ndarray:
    """Per row, whether racing's saving beats what it needs to tie the GPU."""
    return np.array([r["saving"] > r["needed_saving_1core"] for r in rows], dtype=bool)


def saving_caption(where: str, rows: list[dict[str, Any]]) -> str:
    """The saving figure's caption: it names the colours :func:`saving_figure` draws for
    ``rows``, and only those."""
    wins = _wins(rows)
    dots = [
        f"{name} where it {what}"
        for (name, _), what, drawn in (
            (WINS, "beats the GPU (right of its bar)", wins.any()),
            (LOSES, "does not (left of its bar's end)", (~wins).any()),
        )
        if drawn
    ]
    return (
        f"Where racing on one core beats the GPU ({where}): {NEEDED[0]} bars, the saving racing "
        f"needs to tie the GPU; dots, the saving it gets, {' and '.join(dots)}"
        + ("" if wins.any() else "; in no cell does racing beat the GPU")
    )


def saving_figure(rows: list[dict[str, Any]]) -> str:
    """Per cell, racing's saving (dot) against the saving it needs to tie the GPU (bar): racing
    pays on the GPU machine where the dot lies right of the bar's end."""
    fig, ax = plt.subplots(figsize=(7.0, 0.8 + 0.36 * len(rows)))
    y = np.arange(len(rows))
    need = np.array([r["needed_saving_1core"] for r in rows], dtype=float)
    got = np.array([r["saving"] for r in rows], dtype=float)
    wins = _wins(rows)
    ax.barh(y, need, color=NEEDED[1], height=0.6, label="saving needed to tie the GPU (1 core)")
    # One call per colour, so that the legend shows each colour with its meaning.
    for (_, colour), mine, label in (
        (WINS, wins, "saving racing gets, beating the GPU"),
        (LOSES, ~wins, "saving racing gets, short of the GPU"),
    ):
        if mine.any():
            ax.scatter(got[mine], y[mine], color=colour, zorder=3, label=label)
    ax.set_xscale("log")
    ax.set_yticks(y, [f"{r['kind']} D={r['D']} N={r['N']:.0e}" for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("N D / evaluations per draw")
    fig.tight_layout()
    legend_below(ax, ncol=3)
    return inline_svg(fig)


def _bandwidth_text(b: dict[str, Any], where: str) -> dict[str, Any]:
    return {
        "text": f"{b['device']} ({where}): a draw over {b['D']} x {b['N']} stored "
        f"factors takes {1e6 * b['draw_s']:.4g} us, a device-to-device copy of the "
        f"same {b['bytes'] / 1e9:.2f} GB {1e6 * b['copy_s']:.4g} us: ratio "
        f"{b['ratio_draw']:.2f} against the limit {b['limit']:g}",
        "passed": b["ratio_draw"] <= b["limit"],
    }


def _draw_table(hw: dict[str, Any], where: str, source: str) -> dict[str, Any]:
    body = [
        [
            cell(r["kind"]),
            cell(str(r["D"]), "num"),
            cell(f"{r['N']:.0e}", "num"),
            cell(_us(r["racing_1core_s"]), "num"),
            cell(_us(r["racing_allcores_bound_s"]), "num"),
            cell(_us(r["exact_cpu_s"]), "num"),
            cell(_us(r["exact_gpu_s"]), "num"),
            cell(f"{r['saving']:.3g}", "num"),
            cell(
                "-" if r["needed_saving_1core"] is None else f"{r['needed_saving_1core']:.3g}",
                "num",
            ),
        ]
        for r in hw["rows"]
    ]
    gpu_name = hw.get("gpu") or f"none ({hw.get('no_gpu')})"
    skipped = "; ".join(
        f"{s['kind']} D={s['D']} N={s['N']:.0e}: {s['why']}" for s in hw.get("skipped", [])
    )
    return table(
        f"Time per draw, microseconds ({where}; GPU: {gpu_name}; {hw['cores']} cores)",
        [
            "rewards",
            "D",
            "N",
            "racing, 1 core",
            "racing, all cores (bound)",
            "exact, CPU all cores",
            "exact, GPU",
            "racing's saving",
            "saving to tie the GPU",
        ],
        body,
        caption="Racing-Normal (delta "
        f"{hw['delta']:g}) and exact gumbel-max, Numba, against exact gumbel-max on "
        "the cuda key with its data on the device. 'All cores (bound)' is the one-core "
        "time over the cores, not a measurement. Saving to tie: N D times racing's "
        "cost per reward read over the GPU's time per draw."
        + (f" Not measured: {skipped}." if skipped else "")
        + f" From {source}.",
    )


def _mcmc_table(rows: list[dict[str, Any]], where: str, source: str) -> dict[str, Any]:
    body = [
        [
            cell(f"{r['N']:.0e}", "num"),
            cell(_us(r["rwmh_cpu_s"]), "num"),
            cell(_us(r["rwmh_gpu_s"]), "num"),
            cell(_us(r["flymc_cpu_s"]), "num"),
            cell(f"{r['query_saving']:.3g}", "num"),
            cell(f"{r['rwmh_acceptance']:.2f} / {r['flymc_acceptance']:.2f}", "num"),
        ]
        for r in rows
    ]
    upload = (
        ""
        if all(r.get("gpu_data_resident") for r in rows)
        else " In this file the GPU column includes one upload of the data per timed call "
        "(the recording predates resident data): at N = 1e6 a call is a few steps, so the "
        "upload dominates it."
    )
    return table(
        f"Time per MH step, microseconds ({where})",
        ["N", "rwmh, 1 core", "rwmh, GPU", "flymc-mh, 1 core", "FlyMC's query saving", "accept"],
        body,
        caption="Regular random-walk MH reads all N logistic terms a step (Numba on one core, "
        "or the cuda key summing them on the device); FlyMC with the same step reads the "
        "bright data and q_db N dark proposals (Numba, one core). Synthetic logistic data, "
        "P = 10, bounds tuned at the MAP. Acceptance is over the timed steps. Per-step cost "
        "only: mixing per step is 002's Table 1 and the flymc-table1 experiment."
        + upload
        + f" From {source}.",
    )


def hardware_section(files: list[dict[str, Any]]) -> dict[str, Any]:
    """Tables and figures of every hardware file; ``gpu`` says whether any GPU number exists."""
    tables, figures, bandwidth, gpu = [], [], [], False
    for f in files:
        # Recorded files carry no machine name: bench/results/<machine>/ gives it.
        machine = f.get("machine") or Path(f["source"]).parent.name
        where = machine + (f", commit {f['commit']}" if f.get("commit") else "")
        if "bandwidth" in f:
            bandwidth.append(_bandwidth_text(f["bandwidth"], where))
        hw = f.get("hardware")
        if not hw:
            continue
        gpu = gpu or any(r["exact_gpu_s"] is not None for r in hw["rows"])
        if hw["rows"]:
            tables.append(_draw_table(hw, where, f["source"]))
        if hw.get("mcmc"):
            tables.append(_mcmc_table(hw["mcmc"], where, f["source"]))
        measured = [r for r in hw["rows"] if r["needed_saving_1core"] is not None]
        if measured:
            figures.append(
                {
                    "svg": saving_figure(measured),
                    "title": saving_caption(where, measured),
                }
            )
    return {
        "present": bool(files),
        "gpu": gpu,
        "tables": tables,
        "figures": figures,
        "bandwidth": bandwidth,
    }
