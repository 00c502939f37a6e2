# LLVM lit configuration for the IPU compiler's regression tests.
# Run: lit -v lit/   (with the tools built: cargo build --bins)
import os
import shutil
import subprocess

import lit.formats

config.name = "IPU"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".S", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
repo = os.path.dirname(config.test_source_root)
config.test_exec_root = os.path.join(repo, "target", "lit")

tools_dir = os.environ.get("IPU_TOOLS_DIR", os.path.join(repo, "target", "debug"))
llvm_dir = os.environ.get("LLVM_TOOLS_DIR", "/usr/lib/llvm-22/bin")

# Python runs in the repository's one environment (.venv/, pinned by
# scripts/requirements.txt; the script makes it when missing and is quick
# when present): `%python` is its interpreter, and its bin/ comes first on
# PATH so a bare `python3` is that one too.
try:
    python = subprocess.run(
        [os.path.join(repo, "scripts", "python-env.sh")],
        check=True, stdout=subprocess.PIPE, text=True,
    ).stdout.strip()
except (OSError, subprocess.CalledProcessError) as e:
    lit_config.fatal(f"scripts/python-env.sh could not make the Python environment: {e}")
config.substitutions.append(("%python", python))

config.environment["PATH"] = os.pathsep.join(
    [tools_dir, llvm_dir, os.path.dirname(python), config.environment.get("PATH", os.environ.get("PATH", ""))]
)
# No user site-packages: nothing installed by hand outside the environment.
config.environment["PYTHONNOUSERSITE"] = "1"
# Diagnostics without colour, so FileCheck sees plain text.
config.environment["NO_COLOR"] = "1"
config.environment["TERM"] = "dumb"
# Assembled kernels are cached inside the repository's build folder.
config.environment["IPU_KERNEL_CACHE"] = os.environ.get("IPU_KERNEL_CACHE", os.path.join(repo, "target", "kernel-cache"))
config.substitutions.append(("%repo", repo))
config.substitutions.append(("%targets", os.path.join(repo, "targets")))

# `mlir-opt` is upstream MLIR's driver (Debian's mlir-22-tools), used to check
# that our generic output is valid MLIR.
mlir_opt = shutil.which("mlir-opt", path=llvm_dir) or shutil.which("mlir-opt-22")
if mlir_opt:
    config.available_features.add("mlir-opt")
    config.substitutions.append(("%mlir-opt", mlir_opt))

# ipu-translate built with the `mlir` feature (scripts/test-all.sh sets this
# for the lit run that follows that build).
if os.environ.get("IPU_LIT_MLIR_IMPORT") == "1":
    config.available_features.add("mlir-import")

# Headless Chromium (Debian's chromium; scripts/test-all.sh installs it) for
# the tests that load ipu-run's HTML report in a real browser.
if os.environ.get("CHROMIUM") or shutil.which("chromium"):
    config.available_features.add("chromium")
for var in ("CHROMIUM", "IPU_TRACE_PROCESSOR", "HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# Perfetto's trace processor binary, where one is at hand (the pinned
# perfetto package downloads it from outside the package registries).
if subprocess.run(
    [python, os.path.join(repo, "scripts", "check-trace.py"), "--find-trace-processor"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
).returncode == 0:
    config.available_features.add("perfetto-trace-processor")
