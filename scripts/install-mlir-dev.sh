#!/usr/bin/env bash
# Installs the LLVM/MLIR 22 development packages that the `mlir` feature of
# ipu-mlir-import (melior 0.27) builds against, when they are missing, and
# prints the environment it needs. Idempotent and quiet.
#
#   eval "$(scripts/install-mlir-dev.sh)"
#   cargo test -p ipu-mlir-import --features mlir
#
# Everything but the final `export` lines goes to stderr.
set -euo pipefail

PREFIX=/usr/lib/llvm-22
PACKAGES=(libmlir-22-dev mlir-22-tools llvm-22-dev libpolly-22-dev libclang-22-dev libzstd-dev libz3-dev)

missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if ((${#missing[@]})); then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO="sudo"
        else
            echo "install-mlir-dev: not root and no sudo; missing: ${missing[*]}" >&2
            exit 1
        fi
    fi
    echo "install-mlir-dev: installing ${missing[*]}" >&2
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null 2>&1 </dev/null || {
        echo "install-mlir-dev: apt-get install failed for: ${missing[*]}" >&2
        exit 1
    }
fi

if [ ! -e "$PREFIX/lib/libMLIR.so" ] && [ ! -e "$PREFIX/lib/libMLIRIR.a" ]; then
    echo "install-mlir-dev: $PREFIX has no MLIR libraries after install" >&2
    exit 1
fi

echo "export MLIR_SYS_220_PREFIX=$PREFIX"
echo "export TABLEGEN_220_PREFIX=$PREFIX"
echo "export LIBCLANG_PATH=$PREFIX/lib"
