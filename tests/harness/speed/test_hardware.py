"""harness.speed.hardware and the report's across-hardware panel: bad input, a CPU-only table whose
GPU column is empty and says why, and the panel rendered from the recorded H200 results."""

import json
from pathlib import Path

import pytest

from harness.report.hardware import hardware_section, is_hardware, load_hardware
from harness.speed.hardware import format_hardware, hardware_table

RECORDED = Path(__file__).resolve().parents[3] / "bench" / "results" / "nvidia-h200"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"Ds": (1,)}, "'D'"), ({"Ns": ()}, "'N'"), ({"kinds": ("gpu",)}, "kind")],
)
def test_bad_cells_are_refused_before_any_timing(kwargs, match):
    with pytest.raises(ValueError, match=match):
        hardware_table(**kwargs)


def test_a_machine_without_a_device_gets_cpu_numbers_and_the_reason(tmp_path):
    result = hardware_table(
        Ds=(4,), Ns=(600,), repeat=1, seconds=0.005, budget_s=60, mcmc_Ns=(800,)
    )
    assert [r["kind"] for r in result["rows"]] == ["precomputed", "computed"]
    (mcmc,) = result["mcmc"]
    assert mcmc["rwmh_gpu_s"] is None and mcmc["flymc_beats_gpu"] is None
    assert mcmc["rwmh_cpu_s"] > 0 and mcmc["flymc_cpu_s"] > 0 and mcmc["query_saving"] > 1
    assert 0 < mcmc["rwmh_acceptance"] < 1 and "flymc-mh 1 core" in format_hardware(result)
    for r in result["rows"]:
        assert r["exact_gpu_s"] is None and r["needed_saving_1core"] is None
        assert r["racing_1core_s"] > 0 and r["exact_cpu_s"] > 0 and r["saving"] >= 1
    assert result["no_gpu"] and result["no_gpu"] in format_hardware(result)
    path = tmp_path / "hw.json"
    path.write_text(json.dumps({"hardware": result}))
    section = hardware_section([load_hardware(path)])
    assert section["present"] and not section["gpu"] and not section["figures"]


def test_the_recorded_gpu_run_renders_a_panel_with_its_limit():
    files = [load_hardware(p) for p in sorted(RECORDED.glob("*.json")) if is_hardware(p)]
    assert len(files) == 3  # bandwidth, the draw cells, the MCMC steps
    section = hardware_section(files)
    assert section["gpu"] and len(section["figures"]) == 1
    titles = [t["title"] for t in section["tables"]]
    assert len(titles) == 2 and any("MH step" in t and "nvidia-h200" in t for t in titles), titles
    assert "<svg" in section["figures"][0]["svg"]
    (band,) = section["bandwidth"]
    assert band["passed"] and "H200" in band["text"]


def test_a_hardware_file_without_rows_fields_is_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hardware": {"rows": [{"kind": "precomputed"}]}}))
    assert is_hardware(bad)
    with pytest.raises(ValueError, match=r"bad\.json"):
        load_hardware(bad)
