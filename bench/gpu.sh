#!/usr/bin/env bash
# Every GPU number in one run, in a few minutes, on a machine with a CUDA device, numba-cuda
# and this checkout's dependencies (docs/benchmarks.md, "Across hardware"):
#
#   bench/gpu.sh OUT_DIR [ASV_MACHINE_NAME]
#
# OUT_DIR gets, step by step (steps.txt says when each began, so a cut-off run keeps what it
# finished): device.txt; contracts.txt (the cuda contract tests on the device); verify.txt and
# verify-records.jsonl (harness verify of every spec with a cuda key, --impl numba,cuda: the
# cuda key's own gates and the numba-vs-cuda device agreement); asv-results/ (the
# across-hardware asv suites, to merge with the CPU machines' results); bandwidth.json and
# hardware.json (harness speed --bandwidth/--hardware, for `harness report`); roofline.csv
# (Nsight Compute's counts for the computed kernels, where ncu runs).
set -u
out=${1:?usage: bench/gpu.sh OUT_DIR [ASV_MACHINE_NAME]}
machine=${2:-gpu}
py=${PYTHON:-python3}
export HARNESS_REAL_CUDA=1 PYTHONUNBUFFERED=1
mkdir -p "$out"
step() { echo "$(date +%T) $*" | tee -a "$out/steps.txt"; }
$py -c "from harness.devices import cuda_unavailable as u; r = u(); print(r or 'cuda: ok'); raise SystemExit(2 if r else 0)" || exit 2
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/device.txt"

step contracts
$py -m pytest -q -p no:cacheprovider tests/implementations/test_cuda_contracts.py \
  tests/implementations/test_cuda_chain_contracts.py 2>&1 | tail -5 | tee "$out/contracts.txt"

step verify
algos=$($py -c "from harness.registry import build_registry as b; print(' '.join('--algorithm ' + s.name for s in b() if 'cuda' in s.implementations))")
# shellcheck disable=SC2086  # $algos is a list of options
$py -m harness.cli verify --impl "${VERIFY_IMPL:-numba,cuda}" $algos --out /tmp/gpu-verify \
  --no-progress > "$out/verify.txt" 2>&1
echo "harness verify --impl ${VERIFY_IMPL:-numba,cuda} $algos: exit $?" | tee -a "$out/verify.txt"
tail -6 "$out/verify.txt"
cp /tmp/gpu-verify/records.jsonl "$out/verify-records.jsonl"

step asv
# asv's benchmark processes do not inherit PYTHONPATH, so they would load the image's own numpy
# (too new for numba-cuda 0.30). A venv over the image's packages, holding the carried wheels
# (.whl/, where present) and a .pth naming this checkout, comes first on their path instead.
asv_py=$py
if [ -d .whl ] && $py -m venv --system-site-packages --without-pip /tmp/asv-venv; then
  site=$(/tmp/asv-venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  $py -m pip install -q --no-index --no-deps --no-compile --target "$site" .whl/*.whl &&
    pwd > "$site/sampler-harness-checkout.pth" && asv_py=/tmp/asv-venv/bin/python
fi
$asv_py -c "import numpy, numba, harness; print('asv runs on numpy', numpy.__version__)"
if $asv_py -m asv --version > /dev/null 2>&1 && git rev-parse HEAD > /dev/null 2>&1; then
  $asv_py -m asv machine --yes --machine "$machine" > /dev/null
  $asv_py -m asv run --python=same --quick --bench "AcrossHardware" --machine "$machine" \
    --set-commit-hash="$(git rev-parse HEAD)" 2>&1 | tail -15
  mkdir -p "$out/asv-results" && cp -r .asv/results/"$machine" "$out/asv-results/"
else
  echo "asv not run: it needs asv and a git checkout"
fi

step bandwidth
$py -m harness.cli speed --bandwidth --json "$out/bandwidth.json"
step hardware
$py -m harness.cli speed --hardware --budget "${HARDWARE_BUDGET:-240}" --json "$out/hardware.json"

step roofline
if command -v ncu > /dev/null; then
  timeout 150 ncu --csv --section SpeedOfLight \
    --metrics dram__bytes_read.sum,gpu__time_duration.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum \
    -k regex:'computed_sums|log_lik_sums' --launch-count 3 \
    $py bench/roofline.py > "$out/roofline.csv" 2> "$out/roofline.err"
  echo "ncu: exit $?"
else
  echo "ncu not found: no roofline counts"
fi
step done
