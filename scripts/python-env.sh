#!/usr/bin/env bash
# Makes the repository's Python environment, .venv/, from the pinned
# scripts/requirements.txt (once; later calls only compare a checksum), and
# prints the path of its python on stdout. Every Python tool and test uses it:
#
#   py="$(scripts/python-env.sh)"; "$py" onnx/minilm.py
#
# Needs python3 (3.11) with the venv module: on Debian that is the python3-venv
# package, installed with apt when missing. Messages go to stderr.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
req="$root/scripts/requirements.txt"
stamp="$venv/requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"

ready() { [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }
if ready; then
  echo "$venv/bin/python"
  exit 0
fi

# One maker at a time; a second caller waits, then finds it ready.
mkdir -p "$venv"
exec 9>"$venv.lock"
flock 9
if ready; then
  echo "$venv/bin/python"
  exit 0
fi

base="${IPU_BASE_PYTHON:-python3}"
command -v "$base" >/dev/null || { echo "python-env: no $base on PATH" >&2; exit 1; }
# Debian's python3 ships venv without ensurepip; python3-venv brings it.
if ! "$base" -c 'import ensurepip, venv' 2>/dev/null; then
  echo "python-env: $base has no ensurepip; installing python3-venv" >&2
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq python3-venv >/dev/null
fi
echo "python-env: creating $venv with $("$base" --version 2>&1) from scripts/requirements.txt" >&2
rm -f "$stamp"
"$base" -m venv --clear "$venv"
# The lock file lives beside the venv, so --clear leaves it alone.
PYTHONNOUSERSITE=1 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --no-input --only-binary=:all: --no-deps -r "$req" >&2
# The pins must be complete: pip check fails on any dependency they miss.
"$venv/bin/python" -m pip check >&2
echo "$want" >"$stamp"
echo "$venv/bin/python"
