#!/usr/bin/env bash
# Makes a Python virtual environment DIR from a pinned requirements file
# (exact versions, dependencies included): pip installs wheels only, without
# dependency resolution, then `pip check` fails on any dependency the pins
# miss. Remade only when the file changes (its SHA-256 is kept in
# DIR/requirements.sha256). Messages go to stderr.
#   scripts/pinned-venv.sh target/py-venv python/requirements-test.txt
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 DIR REQUIREMENTS" >&2; exit 2; }
dir="$1" req="$2"
base="${IPU_BASE_PYTHON:-python3}"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/requirements.sha256" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
echo "pinned-venv: creating $dir from $req" >&2
"$base" -m venv --clear "$dir"
PYTHONNOUSERSITE=1 "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --only-binary=:all: --no-deps -r "$req" >&2
"$dir/bin/python" -m pip check >&2
echo "$want" >"$dir/requirements.sha256"
