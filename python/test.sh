#!/usr/bin/env bash
# Tests the Python package as a user would: builds the wheel with the
# pinned maturin, installs it with pip into a fresh virtual environment
# made here (nothing installed by hand) and checks `import ipu_stack`,
# `python -m ipu_stack --help` and an example; then installs it into the
# test environment target/py-venv (python/requirements-test.txt, torch
# included; made once, remade when that file changes) and runs
# python/tests with pytest. Run from anywhere; prints pytest's closing line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
base="${IPU_BASE_PYTHON:-python3}"
pipq() { PYTHONNOUSERSITE=1 "$@" --quiet --disable-pip-version-check --no-input; }

echo "== python: build the wheel (maturin, release)"
scripts/pinned-venv.sh target/py-build python/requirements-build.txt
rm -rf target/wheels
start=$SECONDS
target/py-build/bin/maturin build --release --quiet -m python/Cargo.toml -o target/wheels >&2
wheel="$(ls target/wheels/ipu_stack-*.whl)"
echo "built $(basename "$wheel") in $((SECONDS - start)) s"

echo "== python: pip install into a fresh venv"
rm -rf target/py-venv-fresh
"$base" -m venv target/py-venv-fresh
pipq target/py-venv-fresh/bin/python -m pip install --only-binary=:all: -c python/requirements-fresh.txt "$wheel"
target/py-venv-fresh/bin/python -c "import ipu_stack; print('import ipu_stack', ipu_stack.__version__)"
target/py-venv-fresh/bin/python -m ipu_stack --help >/dev/null
echo "python -m ipu_stack --help: ok"

target/py-venv-fresh/bin/python -m ipu_stack examples/mlp.mlir

echo "== python: pytest (python/tests)"
scripts/pinned-venv.sh target/py-venv python/requirements-test.txt
pipq target/py-venv/bin/python -m pip install --no-deps --force-reinstall "$wheel"
export IPU_REPO="$root"
target/py-venv/bin/python -m pytest -q -p no:cacheprovider python/tests "$@"
