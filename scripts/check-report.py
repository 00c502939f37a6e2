#!/usr/bin/env python3
"""Checks an `ipu-run --report DIR` page in a real browser.

    py="$(scripts/python-env.sh)"
    "$py" scripts/check-report.py DIR/report.html PROFILE.json [--screenshot OUT.png [--size W,H]]

Headless Chromium (Debian's `chromium`, or $CHROMIUM) loads the page with
the network off; the DOM it builds (`--dump-dom`) must have every section
(#summary, #heatmap, #supersteps, #exchange, #memory, #golden), a heat map
with one cell per tile and superstep (the counts come from the profile of
the same run, not from the page), one superstep bar per superstep, the
memory chart and its category table, and no script or fetched resource.
Exits 1 with the first problem. `--screenshot` also saves what Chromium
drew.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

SECTIONS = ["summary", "heatmap", "supersteps", "exchange", "memory", "golden"]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


def fail(msg):
    print(f"check-report: FAIL: {msg}")
    sys.exit(1)


def chromium():
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        fail("no chromium on PATH (Debian: apt-get install chromium) and no $CHROMIUM")
    return exe


def run_chromium(args):
    profile = tempfile.mkdtemp(prefix="check-report-")
    try:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--disable-extensions", "--hide-scrollbars",
               f"--user-data-dir={profile}"] + args
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        if r.returncode != 0:
            fail(f"chromium exited {r.returncode}: {r.stderr.decode(errors='replace')[-2000:]}")
        return r.stdout.decode("utf-8", errors="replace")
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Dom(HTMLParser):
    """Elements with their ancestors' tags, ids and classes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # (tag, attrs)
        self.found = []  # (tag, attrs, ancestors)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.found.append((tag, a, list(self.stack)))
        if tag not in VOID:
            self.stack.append((tag, a))

    def handle_startendtag(self, tag, attrs):
        self.found.append((tag, dict(attrs), list(self.stack)))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return


def inside(ancestors, tag=None, id_=None, cls=None):
    for t, a in ancestors:
        if (tag is None or t == tag) and (id_ is None or a.get("id") == id_) and \
                (cls is None or cls in a.get("class", "").split()):
            return True
    return False


def main(argv):
    args = argv[1:]
    shot, size = None, "1600,2000"
    if "--screenshot" in args:
        i = args.index("--screenshot")
        shot = args[i + 1]
        del args[i:i + 2]
    if "--size" in args:
        i = args.index("--size")
        size = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__)
        return 2
    page, profile = args
    with open(profile) as f:
        other = json.load(f)["otherData"]
    tiles, steps = other["tiles"], other["supersteps"]
    raw = open(page, encoding="utf-8").read()
    # Self-contained: nothing to run, nothing to fetch.
    if re.search(r"<script", raw, re.I):
        fail("the page has a script")
    if re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", raw, re.I) or "@import" in raw or "url(" in raw:
        fail("the page refers to an outside resource")
    url = "file://" + os.path.abspath(page)
    dom_text = run_chromium(["--dump-dom", url])
    dom = Dom()
    dom.feed(dom_text)
    ids = {a.get("id") for t, a, _ in dom.found if t == "section"}
    for s in SECTIONS:
        if s not in ids:
            fail(f"section #{s} is missing from the DOM Chromium built")
    # The heat map: one cell per tile and superstep, rows of `tiles` cells.
    cells = [(a, anc) for t, a, anc in dom.found
             if t == "rect" and inside(anc, "section", "heatmap") and inside(anc, "g", cls="cells")]
    if len(cells) != tiles * steps:
        fail(f"the heat map has {len(cells)} cells, the run {tiles} tiles x {steps} supersteps = {tiles * steps}")
    bad = [a.get("class") for a, _ in cells if not re.fullmatch(r"c(n|\d+)", a.get("class", ""))]
    if bad:
        fail(f"heat map cells without a colour class: {bad[:3]}")
    rows = [t for t, a, anc in dom.found
            if t == "g" and inside(anc, "g", cls="cells") and "transform" in a]
    if len(rows) != steps:
        fail(f"the heat map has {len(rows)} rows, not {steps}")
    bars = [1 for t, a, anc in dom.found
            if t == "g" and inside(anc, "section", "supersteps") and inside(anc, "g", cls="bars")]
    if len(bars) != steps:
        fail(f"the superstep chart has {len(bars)} bars, not {steps}")
    svgs = {s: sum(1 for t, _, anc in dom.found if t == "svg" and inside(anc, "section", s))
            for s in SECTIONS}
    for s in ("heatmap", "supersteps", "memory"):
        if svgs[s] == 0:
            fail(f"section #{s} has no chart")
    cats = [a.get("data-category") for t, a, anc in dom.found
            if t == "tr" and inside(anc, "section", "memory") and a.get("data-category")]
    if cats and len(cats) != 10:
        fail(f"the memory table has {len(cats)} categories, not 10")
    print(f"check-report: ok: sections {', '.join(SECTIONS)}; heat map {tiles} x {steps} = {len(cells)} cells; "
          f"{len(bars)} superstep bars; memory categories {len(cats)}")
    if shot:
        run_chromium([f"--screenshot={os.path.abspath(shot)}", f"--window-size={size}", url])
        if not os.path.isfile(shot) or os.path.getsize(shot) < 10000:
            fail(f"chromium drew no screenshot at {shot}")
        print(f"check-report: screenshot {shot} ({os.path.getsize(shot)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
