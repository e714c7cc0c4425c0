"""Built-in exact samplers under ``small-`` names, each on two or three cheap problems: the
runner and engine tests exercise seeding, resumption and backends, which do not need every
problem of the catalog (that is the family tests' job)."""

import dataclasses

import harness
from harness.registry import builtin_specs
from harness.spec import Check

PROBLEMS = {
    "gumbel-max": ("synthetic-normal-D10-N200", "synthetic-f0-D10-N200", "ties-zeros-D12-N50"),
    "cdf-inversion": ("synthetic-normal-D10-N200", "race-normal-D2-N1000-s0.3"),
    "top-down": ("synthetic-normal-D10-N200", "ties-zeros-D12-N50"),
    "truncated-gumbel": ("truncgumbel-phi0-b1", "truncgumbel-phi30-b0"),
}

for spec in builtin_specs():
    if spec.name in PROBLEMS:
        harness.register(
            dataclasses.replace(
                spec, name=f"small-{spec.name}", checks=(Check(problems=PROBLEMS[spec.name]),)
            )
        )
