"""Reads ipu-run's cycles line and the host link's process of its --profile
(lit/Runtime/runs.test): whether the steady state is the device's cycles,
whether any transfer runs while a run computes, whether runs follow each
other without a gap."""
import json
import re
import sys

line = next(l for l in open(sys.argv[1]) if " cycles=" in l)
f = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}
events = json.load(open(sys.argv[2]))["traceEvents"]
runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "device_run")
link = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "host_stream"]
during = any(s < re_ and rs < e for s, e in link for rs, re_ in runs)
print("steady == cycles:", f["cyclesPerRunSteadyState"] == f["cycles"])
print("steady >= cycles with host I/O:", f["cyclesPerRunSteadyState"] >= f["cyclesWithHostIo"])
print(f"runs {len(runs)}, transfers during a run: {during}")
print("runs back to back from run 1:", all(b[0] == a[1] for a, b in zip(runs[1:], runs[2:])))
