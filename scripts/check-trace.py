#!/usr/bin/env python3
"""Checks an `ipu-run --profile` trace (Chrome JSON trace events).

    py="$(scripts/python-env.sh)"
    "$py" scripts/check-trace.py PROFILE.json [--require-trace-processor]
    "$py" scripts/check-trace.py --find-trace-processor

Two checks, each failing (exit 1) with the first problem it finds:

1. The trace's shape, read as Perfetto's JSON importer reads it: every
   event is well formed (phase, integer ids, non-negative times, numeric
   counter values); slices on one track nest; the chip's track
   "supersteps" has one slice per superstep; every tile group (one per
   package image group) is a process with exactly one track holding one
   slice per superstep; memory counters exist on the chip and every group.
2. The trace loads in Perfetto's trace processor (the pinned `perfetto`
   Python package's TraceProcessor) and SQL queries over it find the same:
   one track per tile group, the supersteps as slices, the memory counter
   tracks, and no import errors in its `stats` table.

The trace processor is a native binary (`trace_processor_shell`) that the
`perfetto` package downloads from Perfetto's own storage on first use; no
package registry ships it. It is looked for in $IPU_TRACE_PROCESSOR, on
PATH, and where the pinned package caches the binary it downloads. Without
it, check 2 is skipped with a message, or fails with
--require-trace-processor.
"""

import json
import os
import platform
import shutil
import sys
from collections import defaultdict


def fail(msg):
    print(f"check-trace: FAIL: {msg}")
    sys.exit(1)


def find_trace_processor():
    """The path of a trace_processor_shell binary, or None."""
    env = os.environ.get("IPU_TRACE_PROCESSOR")
    if env:
        return env if os.path.isfile(env) else None
    on_path = shutil.which("trace_processor_shell")
    if on_path:
        return on_path
    # Where perfetto.prebuilts caches the binary of its pinned manifest.
    try:
        from perfetto.prebuilts.manifests.trace_processor_shell import (
            TRACE_PROCESSOR_SHELL_MANIFEST as manifest,
        )
    except ImportError:
        return None
    plat, machine = sys.platform.lower(), platform.machine().lower()
    for e in manifest:
        if e.get("platform") == plat and machine in e.get("machine", []):
            root, ext = os.path.splitext(e["file_name"])
            p = os.path.join(
                os.path.expanduser("~"), ".local", "share", "perfetto", "prebuilts",
                f"{root}-{e['sha256'][:16]}{ext}",
            )
            return p if os.path.isfile(p) else None
    return None


def check_shape(trace):
    events = trace.get("traceEvents")
    if not isinstance(events, list) or not events:
        fail("no traceEvents")
    other = trace.get("otherData", {})
    steps = other.get("supersteps")
    groups = other.get("tile_groups")
    if not isinstance(steps, int) or not isinstance(groups, int):
        fail("otherData lacks supersteps or tile_groups")
    proc_names, thread_names = {}, {}
    slices = defaultdict(list)  # (pid, tid) -> [(ts, end, name)]
    counters = defaultdict(set)  # pid -> {track names}
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph not in ("M", "X", "C"):
            fail(f"event {i}: phase {ph!r} is not one this profile writes")
        for k in ("pid", "tid"):
            if not isinstance(e.get(k), int) or e[k] < 0:
                fail(f"event {i}: {k} {e.get(k)!r} is not a non-negative integer")
        if not isinstance(e.get("name"), str) or not e["name"]:
            fail(f"event {i}: no name")
        key = (e["pid"], e["tid"])
        if ph == "M":
            name = e.get("args", {}).get("name")
            if e["name"] == "process_name":
                proc_names[e["pid"]] = name
            elif e["name"] == "thread_name":
                thread_names[key] = name
            continue
        ts = e.get("ts")
        if not isinstance(ts, int) or ts < 0:
            fail(f"event {i}: ts {ts!r}")
        if ph == "X":
            dur = e.get("dur")
            if not isinstance(dur, int) or dur < 0:
                fail(f"event {i}: dur {dur!r}")
            slices[key].append((ts, ts + dur, e["name"]))
        else:
            args = e.get("args")
            if not isinstance(args, dict) or not args:
                fail(f"event {i}: a counter without values")
            for k, v in args.items():
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    fail(f"event {i}: counter value {k}={v!r} is not a number")
                # Perfetto names a counter track "<event name> <arg key>".
                counters[e["pid"]].add(f"{e['name']} {k}")
    # Slices on a track nest: each one ends before its enclosing one does.
    for key, ss in slices.items():
        ss.sort(key=lambda s: (s[0], -s[1]))
        open_ends = []
        for ts, end, name in ss:
            while open_ends and open_ends[-1] <= ts:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                fail(f"track {key}: slice {name!r} [{ts}, {end}) overlaps its enclosing slice")
            open_ends.append(end)
    chip = [k for k, n in thread_names.items() if n == "supersteps"]
    if len(chip) != 1:
        fail(f"{len(chip)} tracks named 'supersteps'")
    if len(slices[chip[0]]) != steps:
        fail(f"the supersteps track has {len(slices[chip[0]])} slices, the run {steps} supersteps")
    group_pids = sorted(p for p, n in proc_names.items() if str(n).startswith("group "))
    if len(group_pids) != groups:
        fail(f"{len(group_pids)} group processes, the package {groups} tile groups")
    for p in group_pids:
        tracks = [k for k in thread_names if k[0] == p]
        if len(tracks) != 1:
            fail(f"group process {proc_names[p]!r} has {len(tracks)} tracks, not one")
        if len(slices[tracks[0]]) != steps:
            fail(f"group {proc_names[p]!r} has {len(slices[tracks[0]])} slices, not {steps}")
        if not any(n.startswith("memory ") for n in counters[p]):
            fail(f"group {proc_names[p]!r} has no memory counter")
    if not any(n.startswith("memory ") for n in counters[chip[0][0]]):
        fail("the chip has no memory counter")
    chip_counters = sorted(counters[chip[0][0]])
    print(f"check-trace: shape ok: {len(events)} events, {steps} supersteps, "
          f"{groups} tile groups with one track each, memory counters {chip_counters}")
    return steps, groups


def check_trace_processor(path, shell, steps, groups):
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    tp = TraceProcessor(trace=path, config=TraceProcessorConfig(bin_path=shell))
    try:
        def rows(q):
            return list(tp.query(q))

        errors = rows("select name, idx, value from stats "
                      "where severity in ('error', 'data_loss') and value > 0")
        if errors:
            fail("the trace processor reports import errors: "
                 + ", ".join(f"{r.name}={r.value}" for r in errors))
        per_group = rows(
            "select thread.name as name, count(slice.id) as n from thread "
            "join thread_track using (utid) left join slice on slice.track_id = thread_track.id "
            "where thread.name like 'group %' group by thread_track.id")
        if len(per_group) != groups:
            fail(f"the trace processor finds {len(per_group)} group tracks, not {groups}")
        for r in per_group:
            if r.n != steps:
                fail(f"the trace processor finds {r.n} slices on {r.name}, not {steps}")
        chip = rows(
            "select count(slice.id) as n from slice join thread_track on slice.track_id = thread_track.id "
            "join thread using (utid) where thread.name = 'supersteps'")
        if not chip or chip[0].n != steps:
            fail(f"the trace processor finds {chip[0].n if chip else 0} superstep slices, not {steps}")
        mem = rows("select distinct name from counter_track where name like 'memory %'")
        if not mem:
            fail("the trace processor finds no memory counter track")
        print(f"check-trace: trace processor ok: {groups} group tracks of {steps} slices, "
              f"{steps} superstep slices, counters {sorted(r.name for r in mem)}")
    finally:
        tp.close()


def main(argv):
    if argv[1:] == ["--find-trace-processor"]:
        p = find_trace_processor()
        if p:
            print(p)
            return 0
        return 1
    args = [a for a in argv[1:] if not a.startswith("--")]
    require = "--require-trace-processor" in argv
    if len(args) != 1:
        print(__doc__)
        return 2
    path = args[0]
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {path}: {e}")
    steps, groups = check_shape(trace)
    shell = find_trace_processor()
    if shell is None:
        msg = ("trace processor: not available (no $IPU_TRACE_PROCESSOR, no trace_processor_shell on "
               "PATH, nothing in the perfetto package's cache; the package downloads it from outside "
               "the package registries)")
        if require:
            fail(msg)
        print(f"check-trace: skipped: {msg}")
        return 0
    check_trace_processor(path, shell, steps, groups)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
