#!/usr/bin/env bash
# Records a SHA-256 of every output the tools write while the lit suite and
# the examples run, so that a refactoring can show that it changes no byte of
# IR, package or result: run it before and after, then `diff` the two lists.
#   scripts/golden-outputs.sh OUT.txt [THREADS]
# The tools are wrapped (target/golden/bin): each call's stdout and every file
# named after -o / --write-package / --to-ipuexe is hashed, keyed by the call's
# arguments; lit runs with the wrappers first on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "$1")"
threads="${2:-2}"
cargo build --workspace --bins --quiet
bin="$PWD/target/golden/bin"
rm -rf "$bin" && mkdir -p "$bin"
log="$PWD/target/golden/calls.log"
: >"$log"
ln -s "$PWD/target/debug/onnx-conformance" "$bin/onnx-conformance"
for tool in ipu-opt ipu-translate ipu-run ipu-as; do
  cat >"$bin/$tool" <<WRAP
#!/usr/bin/env bash
real="$PWD/target/debug/$tool"
tmp="\$(mktemp)"
set +e
"\$real" "\$@" >"\$tmp"
rc=\$?
set -e
files=""
prev=""
for a in "\$@"; do
  case "\$prev" in -o|--write-package) [ -f "\$a" ] && files="\$files \$(sha256sum <"\$a" | cut -c1-16)";; esac
  prev="\$a"
done
echo "$tool \$* | rc=\$rc stdout=\$(sha256sum <"\$tmp" | cut -c1-16) files=\$files" >>"$log"
cat "\$tmp"
rm -f "\$tmp"
exit \$rc
WRAP
  chmod +x "$bin/$tool"
done
export RAYON_NUM_THREADS="$threads"
IPU_TOOLS_DIR="$bin" /usr/lib/llvm-22/bin/lit -q lit/ || true
for m in examples/*.mlir; do
  for stage in tile exchange machine; do
    "$bin/ipu-opt" --target ipu21 "--ipu-lower-to-$stage" "$m" >/dev/null 2>&1 || true
  done
done
sort "$log" >"$out"
echo "$(wc -l <"$out") tool calls recorded in $out"
