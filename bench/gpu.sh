#!/usr/bin/env bash
# Every GPU number in one run, in a few minutes, on a machine with a CUDA device, numba-cuda
# and this checkout's dependencies (docs/benchmarks.md, "Across hardware"):
#
#   bench/gpu.sh OUT_DIR [ASV_MACHINE_NAME]
#
# OUT_DIR gets: device.txt; contracts.txt (the cuda contract tests on the device);
# verify-cuda.txt and verify-numba-cuda.txt (harness verify --impl cuda, then numba,cuda with
# the device agreement); bandwidth.json and hardware.json (harness speed --bandwidth/--hardware,
# for `harness report`); and, where asv can run, asv-results/ to merge with the CPU machines'.
set -u
out=${1:?usage: bench/gpu.sh OUT_DIR [ASV_MACHINE_NAME]}
machine=${2:-gpu}
py=${PYTHON:-python3}
export HARNESS_REAL_CUDA=1 PYTHONUNBUFFERED=1
mkdir -p "$out"
$py -c "from harness.devices import cuda_unavailable as u; r = u(); print(r or 'cuda: ok'); raise SystemExit(2 if r else 0)" || exit 2
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/device.txt"
$py -m pytest -q -p no:cacheprovider tests/implementations/test_cuda_contracts.py 2>&1 | tail -5 | tee "$out/contracts.txt"
for impl in cuda numba,cuda; do
  log="$out/verify-${impl/,/-}.txt"
  $py -m harness.cli verify --impl "$impl" --algorithm gumbel-max --algorithm cdf-inversion \
    --out "$out/verify-${impl/,/-}" --no-progress > "$log" 2>&1
  echo "harness verify --impl $impl: exit $?" | tee -a "$log"
  tail -4 "$log"
done
$py -m harness.cli speed --bandwidth --json "$out/bandwidth.json"
$py -m harness.cli speed --hardware --budget "${HARDWARE_BUDGET:-240}" --json "$out/hardware.json"
if command -v asv > /dev/null && git rev-parse HEAD > /dev/null 2>&1; then
  asv machine --yes --machine "$machine" > /dev/null
  asv run --python=same --quick --bench ExactDrawAcrossHardware --machine "$machine" \
    --set-commit-hash="$(git rev-parse HEAD)" 2>&1 | tail -15
  mkdir -p "$out/asv-results" && cp -r .asv/results/"$machine" "$out/asv-results/"
else
  echo "asv not run: it needs asv and a git checkout"
fi
