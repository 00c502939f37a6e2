//! `ipu-run --report DIR`: one self-contained HTML page (inline SVG and
//! CSS, no script, nothing fetched) that shows why a run took its cycles
//! and where its memory went (`docs/report.md`):
//!
//! * `#summary`: the run's figures and verdicts;
//! * `#heatmap`: tile x superstep, coloured by the tile's cycles in the
//!   superstep (one SVG cell per tile and superstep);
//! * `#supersteps`: each superstep's simulated cycles against the compile's
//!   estimate, the exchange lower bound, and its roofline bound (the
//!   package's step bounds, or [`ReportInput::bounds`]) with their ratio,
//!   and the whole run's cycles against the roofline and the model's floor
//!   ([`ReportInput::floor`]);
//! * `#exchange`: each exchange phase's horizon against its endpoint lower
//!   bound;
//! * `#memory`: memory per tile by category and the bytes in use per
//!   superstep (from the compile's memory report), the fullest tiles and
//!   their tensors;
//! * `#golden`: the per-op golden table when there is one.

use ipu_lowering::exchange_to_machine::memory::{Category, MemoryReport, CATEGORY_COUNT};
use ipu_package::{Package, StepKind, TileSet};
use ipu_runtime::chip::ChipReport;
use ipu_target::Target;
use std::fmt::Write as _;

/// One row of a per-op golden check (device against reference per op).
#[derive(Clone, Debug, PartialEq)]
pub struct GoldenRow {
    pub op: String,
    pub loc: String,
    pub max_abs_error: f64,
    pub tolerance: f64,
    pub pass: bool,
}

/// The run's verdicts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    pub hardware: bool,
    pub numerical: bool,
    pub max_abs_error: Option<f64>,
}

/// What the page is made of.
pub struct ReportInput<'a> {
    /// The model or package run.
    pub name: &'a str,
    /// The package written from it, if any.
    pub package: Option<&'a str>,
    pub pkg: &'a Package,
    pub run: &'a ChipReport,
    pub target: &'a Target,
    /// The compile's memory report (absent for a package compiled elsewhere).
    pub memory: Option<&'a MemoryReport>,
    pub verdict: Option<Verdict>,
    /// A bound in cycles per superstep, its sync included, overriding the
    /// package's own step bounds (`StepSummary::bound`, the compile's
    /// roofline) when given.
    pub bounds: Option<&'a [Option<u64>]>,
    /// Hook: the per-op golden table (issue 14, item 1), when there is one.
    pub golden: Option<&'a [GoldenRow]>,
    /// The model's floor (`crate::floor`: plan-independent), when known.
    pub floor: Option<u64>,
}

/// Colour classes of the heat map: `c0` is zero cycles, `c1`..`c11` a
/// logarithmic scale up to the largest cell.
const HEAT_CLASSES: usize = 12;
const HEAT_COLOURS: [&str; HEAT_CLASSES] = [
    "#f2f2f2", "#2c115f", "#3b0f70", "#57157e", "#721f81", "#8c2981", "#a8327d", "#c43c75",
    "#de4968", "#f1605d", "#fc8961", "#fecf92",
];
const CAT_COLOURS: [&str; CATEGORY_COUNT] = [
    "#4e79a7", "#59a14f", "#edc948", "#b07aa1", "#e15759", "#f28e2b", "#76b7b2", "#9c755f",
    "#d9d9d9", "#ededed",
];

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

/// `12,345`.
fn num(v: u64) -> String {
    let s = v.to_string();
    let mut o = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            o.push(',');
        }
        o.push(c);
    }
    o
}

/// The horizon, endpoint lower bound and schedule kind an exchange step's
/// label carries: `x0 ... (horizon 8207, lower bound 8192, compact-streams)`.
pub fn exchange_figures(label: &str) -> Option<(u64, u64, &str)> {
    let open = label.rfind("(horizon ")?;
    let inner = label[open + 1..].strip_suffix(')')?;
    let mut parts = inner.split(", ");
    let h = parts.next()?.strip_prefix("horizon ")?.parse().ok()?;
    let lb = parts.next()?.strip_prefix("lower bound ")?.parse().ok()?;
    Some((h, lb, parts.next().unwrap_or("")))
}

/// Units per tile column, so that few tiles still make a wide chart.
fn column(tiles: usize) -> usize {
    (1200 / tiles.max(1)).max(1)
}

/// Tiles between axis labels: a power of two giving at most 16 labels.
fn tick_step(tiles: usize) -> usize {
    let mut step = 1;
    while tiles.div_ceil(step) > 16 {
        step *= 2;
    }
    step
}

/// An `<svg>` drawn at its natural size, shrunk to the page when wider.
fn svg_open(h: &mut String, w: usize, ht: usize, label: &str, extra: &str) {
    let _ = write!(
        h,
        "<svg viewBox=\"0 0 {w} {ht}\" width=\"{w}\" height=\"{ht}\"{extra} role=\"img\" aria-label=\"{label}\">"
    );
}

/// Per superstep of the run: start cycle and simulated cycles.
fn spans(run: &ChipReport) -> Vec<(u64, u64)> {
    let mut start = 0;
    run.supersteps
        .iter()
        .map(|s| {
            let end = s.end_cycle.max(start);
            let r = (start, end - start);
            start = s.release_cycle.unwrap_or(end);
            r
        })
        .collect()
}

/// Per superstep of the run: its cycles with the sync that ends it (to the
/// release; the last superstep has none).
fn spans_with_sync(run: &ChipReport) -> Vec<u64> {
    let mut start = 0;
    run.supersteps
        .iter()
        .map(|s| {
            let end = s.release_cycle.unwrap_or(s.end_cycle).max(start);
            let c = end - start;
            start = end;
            c
        })
        .collect()
}

impl ReportInput<'_> {
    /// Superstep `i`'s roofline bound, its sync included.
    fn bound(&self, i: usize) -> Option<u64> {
        match self.bounds {
            Some(b) => b.get(i).copied().flatten(),
            None => self.pkg.meta.steps.get(i).and_then(|s| s.bound),
        }
    }

    /// The program's roofline: the sum of the steps' bounds, when any has one.
    fn roofline(&self) -> Option<u64> {
        let n = self.pkg.meta.steps.len().max(self.run.supersteps.len());
        let bounds: Vec<u64> = (0..n).filter_map(|i| self.bound(i)).collect();
        (!bounds.is_empty()).then(|| bounds.iter().sum())
    }

    fn step_label(&self, i: usize) -> String {
        self.pkg.meta.steps.get(i).map_or_else(
            || format!("superstep {i} (after the last sync)"),
            |s| s.label.clone(),
        )
    }

    fn step_name(&self, i: usize) -> String {
        self.pkg
            .meta
            .steps
            .get(i)
            .and_then(|s| s.label.split(' ').next().map(str::to_string))
            .unwrap_or_else(|| "end".into())
    }
}

/// The page.
pub fn html(r: &ReportInput<'_>) -> String {
    let mut h = String::with_capacity(1 << 20);
    let title = format!("ipu-run report: {} on {}", r.name, r.pkg.meta.target.name);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>\n{}</style></head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        css(),
        esc(&title)
    );
    summary(&mut h, r);
    heatmap(&mut h, r);
    supersteps(&mut h, r);
    exchange(&mut h, r);
    memory(&mut h, r);
    golden(&mut h, r);
    h.push_str("</body></html>\n");
    h
}

fn css() -> String {
    let mut c = String::from(
        "body{font-family:system-ui,sans-serif;margin:16px 24px;color:#222;max-width:1800px}\n\
         h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}\n\
         table{border-collapse:collapse;font-size:12px;margin:6px 0}\n\
         td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}th{background:#f4f4f4}\n\
         td.l,th.l{text-align:left}svg{display:block;max-width:100%;height:auto}\n\
         svg text{font-size:10px;fill:#333}.note{font-size:12px;color:#555}\n\
         .cells rect{width:1px;height:12px}.key{display:inline-block;width:12px;height:12px;vertical-align:middle;margin:0 3px 0 10px}\n\
         .pass{color:#1a7f37;font-weight:bold}.fail{color:#c62828;font-weight:bold}\n",
    );
    for (i, col) in HEAT_COLOURS.iter().enumerate() {
        let _ = writeln!(c, ".c{i}{{fill:{col}}}");
    }
    c.push_str(".cn{fill:#ffffff}\n");
    c
}

fn summary(h: &mut String, r: &ReportInput<'_>) {
    let started: u64 = r.pkg.images.iter().map(|g| g.tiles.len()).sum();
    h.push_str("<section id=\"summary\"><h2>Run</h2><table>\n");
    let row = |h: &mut String, k: &str, v: String| {
        let _ = writeln!(
            h,
            "<tr><th class=\"l\">{k}</th><td class=\"l\">{v}</td></tr>"
        );
    };
    row(h, "model", esc(r.name));
    if let Some(p) = r.package {
        row(h, "package", esc(p));
    }
    row(
        h,
        "target",
        format!(
            "{} ({} tiles, {} B of memory each)",
            esc(&r.pkg.meta.target.name),
            r.pkg.meta.target.tile_count,
            num(u64::from(r.pkg.meta.target.memory_bytes))
        ),
    );
    row(
        h,
        "tiles running a program",
        format!(
            "{} in {} groups running the same code",
            started,
            r.pkg.images.len()
        ),
    );
    row(h, "supersteps", r.run.supersteps.len().to_string());
    row(h, "simulated cycles", num(r.run.cycles));
    if let Some(rf) = r.roofline() {
        row(
            h,
            "roofline cycles",
            format!(
                "{} (simulated / roofline {:.2})",
                num(rf),
                r.run.cycles as f64 / rf.max(1) as f64
            ),
        );
    }
    if let Some(f) = r.floor {
        row(
            h,
            "floor cycles",
            format!(
                "{} (the model's, whatever the plan; simulated / floor {:.2})",
                num(f),
                r.run.cycles as f64 / f.max(1) as f64
            ),
        );
    }
    let host = crate::device::host_io_cycles(r.pkg, r.target);
    row(
        h,
        "host I/O cycles",
        format!(
            "{} (every stream once at the host link's {} GB/s); cycles with host I/O {}",
            num(host),
            r.target.host.link_bytes_per_second / 1e9,
            num(r.run.cycles.saturating_add(host))
        ),
    );
    if let Some(v) = r.verdict {
        let pf = |ok: bool| {
            if ok {
                "<span class=\"pass\">PASS</span>"
            } else {
                "<span class=\"fail\">FAIL</span>"
            }
        };
        row(h, "hardware test", pf(v.hardware).into());
        row(
            h,
            "numerical test",
            format!(
                "{}{}",
                pf(v.numerical),
                v.max_abs_error
                    .map(|e| format!(" (largest error against the reference {e})"))
                    .unwrap_or_default()
            ),
        );
    }
    if let Some(m) = r.memory {
        let peak = m
            .in_use_by_step()
            .into_iter()
            .enumerate()
            .max_by_key(|(i, (_, v, _))| (*v, std::cmp::Reverse(*i)));
        if let Some((s, (t, v, _))) = peak {
            row(
                h,
                "most memory in use",
                format!(
                    "{} B on tile {t} in {} ({:.1}% of the tile)",
                    num(v),
                    esc(m.step_name(s)),
                    100.0 * v as f64 / m.tile_bytes.max(1) as f64
                ),
            );
        }
    }
    h.push_str("</table></section>\n");
}

fn heatmap(h: &mut String, r: &ReportInput<'_>) {
    let tiles = r.pkg.meta.target.tile_count as usize;
    let steps = r.run.supersteps.len();
    let sp = spans(r.run);
    let mut running = vec![false; tiles];
    for g in &r.pkg.images {
        for t in g.tiles.iter() {
            if let Some(x) = running.get_mut(t as usize) {
                *x = true;
            }
        }
    }
    // Cycles of each started tile in each superstep.
    let mut cells = vec![vec![None; tiles]; steps];
    let mut max = 1u64;
    for (s, st) in r.run.supersteps.iter().enumerate() {
        for ts in &st.tiles {
            let v = ts.arrival.saturating_sub(sp[s].0);
            if let Some(c) = cells[s].get_mut(ts.tile as usize) {
                *c = Some(v);
                max = max.max(v);
            }
        }
    }
    let class = |v: u64| -> usize {
        if v == 0 {
            return 0;
        }
        let f = (v as f64).ln() / (max as f64).ln().max(f64::MIN_POSITIVE);
        1 + ((f * (HEAT_CLASSES - 1) as f64) as usize).min(HEAT_CLASSES - 2)
    };
    const LEFT: usize = 160;
    const ROW: usize = 12;
    let cw = column(tiles);
    let width = LEFT + tiles * cw + 10;
    let height = steps * ROW + 28;
    let _ = write!(
        h,
        "<section id=\"heatmap\"><h2>Tile x superstep: cycles</h2>\n\
         <p class=\"note\">One cell per tile (columns, 0 to {}) and superstep (rows): the cycles from the superstep's start to the tile's arrival at its sync, on a logarithmic scale. White: a tile that runs no program. Hover a row for its superstep.</p>\n",
        tiles.saturating_sub(1)
    );
    svg_open(
        h,
        width,
        height,
        "tile by superstep heat map",
        " shape-rendering=\"crispEdges\"",
    );
    h.push_str("\n<g class=\"cells\">\n");
    for (s, row) in cells.iter().enumerate() {
        let _ = write!(
            h,
            "<g transform=\"translate({LEFT} {}) scale({cw} 1)\"><title>{}: {} cycles</title>",
            s * ROW,
            esc(&r.step_label(s)),
            num(sp[s].1)
        );
        for (t, c) in row.iter().enumerate() {
            let k = match c {
                Some(v) if running[t] => format!("c{}", class(*v)),
                _ => "cn".to_string(),
            };
            let _ = write!(h, "<rect x=\"{t}\" class=\"{k}\"/>");
        }
        h.push_str("</g>\n");
    }
    h.push_str("</g>\n<g class=\"labels\">");
    for s in 0..steps {
        let _ = write!(
            h,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LEFT - 4,
            s * ROW + 10,
            esc(&r.step_name(s))
        );
    }
    let axis = steps * ROW;
    let mut t = 0;
    while t < tiles {
        let _ = write!(
            h,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{t}</text><rect x=\"{}\" y=\"{axis}\" width=\"1\" height=\"4\" fill=\"#666\"/>",
            LEFT + t * cw + cw / 2,
            axis + 16,
            LEFT + t * cw + cw / 2
        );
        t += tick_step(tiles);
    }
    let _ = write!(
        h,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">tile</text></g>\n</svg>\n<p class=\"note\">cycles:",
        LEFT - 16,
        axis + 16
    );
    for (k, colour) in HEAT_COLOURS.iter().enumerate() {
        let lo = if k == 0 {
            0
        } else {
            (max as f64)
                .powf((k - 1) as f64 / (HEAT_CLASSES - 1) as f64)
                .ceil() as u64
        };
        let _ = write!(
            h,
            "<span class=\"key\" style=\"background:{colour}\"></span>{}{}",
            if k == 0 { "" } else { "&ge;" },
            num(lo)
        );
    }
    h.push_str("</p></section>\n");
}

fn supersteps(h: &mut String, r: &ReportInput<'_>) {
    let sp = spans(r.run);
    let steps = sp.len();
    let lb_cycles = |i: usize| -> Option<u64> {
        let st = r.pkg.meta.steps.get(i)?;
        (st.kind == StepKind::Exchange)
            .then(|| exchange_figures(&st.label))
            .flatten()
            .map(|(_, lb, _)| r.target.exchange_phase_cycles(lb))
    };
    let bound = |i: usize| r.bound(i);
    let with_sync = spans_with_sync(r.run);
    let has_bounds = (0..steps).any(|i| bound(i).is_some());
    let mut max = 1u64;
    for (i, &(_, c)) in sp.iter().enumerate() {
        let e = r.pkg.meta.steps.get(i).and_then(|s| s.cycles).unwrap_or(0);
        max = max.max(c).max(e).max(bound(i).unwrap_or(0));
    }
    const LEFT: usize = 160;
    const ROW: usize = 16;
    const W: usize = 1000;
    let x = |v: u64| LEFT as f64 + v as f64 * W as f64 / max as f64;
    let height = steps * ROW + 24;
    let _ = write!(
        h,
        "<section id=\"supersteps\"><h2>Supersteps: simulated cycles against the estimate and the bounds</h2>\n\
         <p class=\"note\">Bars: simulated cycles. Black tick: the compile's estimate (kernel cycle formulas; for an exchange, the schedule's horizon plus the phase's fixed cost). Orange tick: an exchange's endpoint lower bound plus the fixed cost. Red tick: the superstep's roofline bound without its sync (compute at the peak rate of the model's types over every tile; an exchange's endpoint bound plus the fixed cost) &mdash; {}. The table compares the simulated cycles with their sync against the bound with its sync.</p>\n",
        if has_bounds {
            "from the compile"
        } else {
            "<b>none in this package</b> (compiled before format 3)"
        }
    );
    let sync = u64::from(r.target.exchange.sync_cycles);
    svg_open(h, LEFT + W + 80, height, "cycles per superstep", "");
    h.push_str("<g class=\"bars\">\n");
    for (i, &(_, c)) in sp.iter().enumerate() {
        let y = i * ROW;
        let colour = match r.pkg.meta.steps.get(i).map(|s| s.kind) {
            Some(StepKind::Exchange) => "#f28e2b",
            Some(StepKind::Compute) => "#4e79a7",
            _ => "#999",
        };
        let _ = write!(
            h,
            "<g><title>{}: {} cycles</title><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{LEFT}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" fill=\"{colour}\" fill-opacity=\"0.55\"/><text x=\"{:.1}\" y=\"{}\">{}</text>",
            esc(&r.step_label(i)),
            num(c),
            LEFT - 4,
            y + 11,
            esc(&r.step_name(i)),
            y + 2,
            x(c) - LEFT as f64,
            ROW - 4,
            x(c) + 4.0,
            y + 11,
            num(c)
        );
        let tick = |h: &mut String, v: u64, col: &str| {
            let _ = write!(
                h,
                "<rect x=\"{:.1}\" y=\"{}\" width=\"2\" height=\"{}\" fill=\"{col}\"/>",
                x(v) - 1.0,
                y,
                ROW
            );
        };
        if let Some(e) = r.pkg.meta.steps.get(i).and_then(|s| s.cycles) {
            tick(h, e, "#000");
        }
        if let Some(lb) = lb_cycles(i) {
            tick(h, lb, "#e8710a");
        }
        if let Some(b) = bound(i) {
            tick(h, b.saturating_sub(sync), "#c62828");
        }
        h.push_str("</g>\n");
    }
    h.push_str("</g></svg>\n<table><tr><th>#</th><th class=\"l\">superstep</th><th>simulated</th><th>estimate</th><th>simulated / estimate</th><th>exchange lower bound</th><th>simulated with sync</th><th>bound with sync (roofline)</th><th>simulated / bound</th></tr>\n");
    for (i, &(_, c)) in sp.iter().enumerate() {
        let e = r.pkg.meta.steps.get(i).and_then(|s| s.cycles);
        let cs = with_sync.get(i).copied().unwrap_or(c);
        let _ = writeln!(
            h,
            "<tr><td>{i}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.step_label(i)),
            num(c),
            e.map(num).unwrap_or_else(|| "-".into()),
            e.filter(|&e| e > 0)
                .map(|e| format!("{:.3}", c as f64 / e as f64))
                .unwrap_or_else(|| "-".into()),
            lb_cycles(i).map(num).unwrap_or_else(|| "-".into()),
            num(cs),
            bound(i).map(num).unwrap_or_else(|| "-".into()),
            bound(i)
                .filter(|&b| b > 0)
                .map(|b| format!("{:.2}", cs as f64 / b as f64))
                .unwrap_or_else(|| "-".into()),
        );
    }
    total_rows(h, r);
    h.push_str("</table></section>\n");
}

/// The superstep table's last rows: the whole run against the roofline
/// (the sum of the steps' bounds) and against the model's floor.
fn total_rows(h: &mut String, r: &ReportInput<'_>) {
    let ratio = |b: Option<u64>| {
        b.filter(|&b| b > 0)
            .map(|b| format!("{:.2}", r.run.cycles as f64 / b as f64))
            .unwrap_or_else(|| "-".into())
    };
    let rf = r.roofline();
    let _ = writeln!(
        h,
        "<tr class=\"total\"><td></td><td class=\"l\">all supersteps against the roofline</td><td></td><td></td><td></td><td></td><td>{}</td><td>{}</td><td>{}</td></tr>",
        num(r.run.cycles),
        rf.map(num).unwrap_or_else(|| "-".into()),
        ratio(rf)
    );
    let _ = writeln!(
        h,
        "<tr class=\"total\"><td></td><td class=\"l\">all supersteps against the model's floor (plan-independent)</td><td></td><td></td><td></td><td></td><td>{}</td><td>{}</td><td>{}</td></tr>",
        num(r.run.cycles),
        r.floor.map(num).unwrap_or_else(|| "-".into()),
        ratio(r.floor)
    );
}

fn exchange(h: &mut String, r: &ReportInput<'_>) {
    let phases: Vec<(usize, String, u64, u64, String)> = r
        .pkg
        .meta
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == StepKind::Exchange)
        .filter_map(|(i, s)| {
            exchange_figures(&s.label).map(|(hz, lb, k)| {
                let name = s.label.split(" (horizon").next().unwrap_or("").to_string();
                (i, name, hz, lb, k.to_string())
            })
        })
        .collect();
    h.push_str("<section id=\"exchange\"><h2>Exchange phases: horizon against the endpoint lower bound</h2>\n");
    if phases.is_empty() {
        h.push_str(
            "<p class=\"note\">This program has no scheduled exchange phase.</p></section>\n",
        );
        return;
    }
    let _ = writeln!(
        h,
        "<p class=\"note\">The horizon is the cycle the phase's last transfer ends at, from the engine's start; the endpoint lower bound is the most bytes any one tile must send or receive (one 32-bit word per cycle per port). Grey: the bound; blue: the horizon.</p>"
    );
    let max = phases
        .iter()
        .map(|p| p.2.max(p.3))
        .max()
        .unwrap_or(1)
        .max(1);
    const LEFT: usize = 160;
    const ROW: usize = 18;
    const W: usize = 1000;
    let x = |v: u64| v as f64 * W as f64 / max as f64;
    svg_open(
        h,
        LEFT + W + 80,
        phases.len() * ROW + 8,
        "exchange horizons",
        "",
    );
    h.push_str("<g class=\"phases\">\n");
    for (k, (_, name, hz, lb, _)) in phases.iter().enumerate() {
        let y = k * ROW;
        let short = name.split(' ').next().unwrap_or("");
        let _ = writeln!(
            h,
            "<g><title>{}: horizon {hz}, lower bound {lb}</title><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{LEFT}\" y=\"{}\" width=\"{:.1}\" height=\"7\" fill=\"#bbb\"/><rect x=\"{LEFT}\" y=\"{}\" width=\"{:.1}\" height=\"7\" fill=\"#4e79a7\"/><text x=\"{:.1}\" y=\"{}\">{hz} / {lb}</text></g>",
            esc(name),
            LEFT - 4,
            y + 12,
            esc(short),
            y + 1,
            x(*lb),
            y + 8,
            x(*hz),
            LEFT as f64 + x(*hz.max(lb)) + 4.0,
            y + 12
        );
    }
    h.push_str("</g></svg>\n<table><tr><th class=\"l\">phase</th><th>horizon</th><th>lower bound</th><th>horizon / bound</th><th class=\"l\">schedule</th></tr>\n");
    for (_, name, hz, lb, kind) in &phases {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(name),
            num(*hz),
            num(*lb),
            if *lb > 0 {
                format!("{:.3}", *hz as f64 / *lb as f64)
            } else {
                "-".into()
            },
            esc(kind)
        );
    }
    h.push_str("</table></section>\n");
}

fn memory(h: &mut String, r: &ReportInput<'_>) {
    h.push_str("<section id=\"memory\"><h2>Memory per tile by category, and the bytes in use per superstep</h2>\n");
    let Some(m) = r.memory else {
        h.push_str("<p class=\"note\">No memory report: this package was compiled elsewhere. Run <code>ipu-run MODEL.mlir --report DIR</code> on the model, or <code>ipu-opt --ipu-lower-to-machine --memory-report=FILE.json</code>, for the byte-exact view.</p>\n<table><tr><th class=\"l\">tiles</th><th>code B</th><th>loaded data B (largest tile)</th></tr>\n");
        for g in &r.pkg.images {
            let data = g
                .tiles
                .iter()
                .map(|t| {
                    g.image.data.iter().map(|d| d.bytes.len()).sum::<usize>()
                        + g.tile_data
                            .get(&t)
                            .map_or(0, |v| v.iter().map(|d| d.bytes.len()).sum())
                })
                .max()
                .unwrap_or(0);
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
                g.tiles,
                num(g.image.code.len() as u64),
                num(data as u64)
            );
        }
        h.push_str("</table></section>\n");
        return;
    };
    // Legend.
    h.push_str("<p class=\"note\">");
    for c in Category::ALL {
        let _ = write!(
            h,
            "<span class=\"key\" style=\"background:{}\"></span>{}",
            CAT_COLOURS[c.index()],
            esc(c.title())
        );
    }
    h.push_str("</p>\n");
    // Per tile: the categories that hold bytes, stacked.
    let held: Vec<Category> = Category::ALL
        .iter()
        .copied()
        .filter(|c| !c.is_free() && *c != Category::Stack)
        .collect();
    let top = m.tiles.iter().map(|t| t.used()).max().unwrap_or(1).max(1);
    let tiles = m.tiles.len();
    let cw = column(tiles);
    const LEFT: usize = 70;
    const H: f64 = 220.0;
    let y = |v: u64| H - v as f64 * H / top as f64;
    let _ = writeln!(
        h,
        "<p class=\"note\">Bytes held on each tile (columns) by category, up to the fullest tile's {} B; the rest of each tile's {} B is free (the table below adds every category up to the chip's memory).</p>",
        num(top),
        num(m.tile_bytes)
    );
    svg_open(
        h,
        LEFT + tiles * cw + 10,
        H as usize + 30,
        "memory per tile",
        " shape-rendering=\"crispEdges\"",
    );
    let _ = writeln!(
        h,
        "<g class=\"tilemem\" transform=\"translate({LEFT} 6) scale({cw} 1)\">"
    );
    let mut base = vec![0u64; tiles];
    for c in &held {
        let _ = write!(
            h,
            "<path data-category=\"{}\" stroke=\"{}\" stroke-width=\"1\" fill=\"none\" d=\"",
            c.key(),
            CAT_COLOURS[c.index()]
        );
        for (i, t) in m.tiles.iter().enumerate() {
            let v = t.bytes[c.index()];
            if v == 0 {
                continue;
            }
            let (y0, y1) = (y(base[i]), y(base[i] + v));
            let _ = write!(h, "M{}.5 {:.1}V{:.1}", i, y0, y1);
            base[i] += v;
        }
        h.push_str("\"/>\n");
    }
    let _ = writeln!(
        h,
        "</g><g transform=\"translate({LEFT} 6)\"><text x=\"-4\" y=\"8\" text-anchor=\"end\">{}</text><text x=\"-4\" y=\"{H}\" text-anchor=\"end\">0</text><text x=\"0\" y=\"{}\">tile 0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">tile {}</text></g></svg>",
        num(top),
        H + 16.0,
        tiles * cw,
        H + 16.0,
        tiles.saturating_sub(1)
    );
    // Totals by category.
    let totals = m.totals();
    let chip = m.tile_bytes * tiles as u64;
    h.push_str("<table><tr><th class=\"l\">category</th><th>all tiles B</th><th>%</th><th>largest on a tile B</th><th>tile</th></tr>\n");
    for c in Category::ALL {
        let (mt, mv) = m
            .tiles
            .iter()
            .map(|t| (t.tile, t.bytes[c.index()]))
            .fold((0, 0), |a, b| if b.1 > a.1 { b } else { a });
        let _ = writeln!(
            h,
            "<tr data-category=\"{}\"><td class=\"l\"><span class=\"key\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td></tr>",
            c.key(),
            CAT_COLOURS[c.index()],
            esc(c.title()),
            num(totals[c.index()]),
            100.0 * totals[c.index()] as f64 / chip.max(1) as f64,
            num(mv),
            mt
        );
    }
    let _ = writeln!(
        h,
        "<tr><th class=\"l\">total</th><th>{}</th><th>{:.2}</th><th></th><th></th></tr></table>\n<p class=\"note\">Stack: 0 bytes on every tile: {}.</p>",
        num(totals.iter().sum()),
        100.0 * totals.iter().sum::<u64>() as f64 / chip.max(1) as f64,
        esc(crate::memory_report::STACK_NOTE)
    );
    liveness(h, m);
    // The fullest groups and their tensors.
    h.push_str("<h3>The fullest tiles and the tensors in them</h3>\n");
    for g in m
        .groups()
        .into_iter()
        .take(crate::memory_report::LARGEST_GROUPS)
    {
        let t = g.memory;
        let peak = t.peak_step();
        let set = TileSet::from_tiles(g.tiles.iter().copied());
        let which = match g.tiles.len() {
            1 => format!("tile {set}"),
            n => format!("tiles {set}</b> ({n} tiles)<b>"),
        };
        let _ = writeln!(
            h,
            "<p class=\"note\"><b>{which}</b>: {} B held, {} B free; most live data in {}: {} B</p>\n<table><tr><th>address</th><th>bytes</th><th class=\"l\">buffer</th><th class=\"l\">category</th><th class=\"l\">alive</th><th class=\"l\">op</th><th class=\"l\">location</th></tr>",
            num(t.used()),
            num(t.bytes[Category::Free.index()]),
            esc(m.step_name(peak)),
            num(t.live[peak])
        );
        let mut ps: Vec<_> = t.placements.iter().collect();
        ps.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.address.cmp(&b.address)));
        for p in ps {
            let b = &m.buffers[p.buffer];
            let _ = writeln!(
                h,
                "<tr><td>{:#x}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{} to {}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                p.address,
                num(p.bytes),
                esc(&b.name),
                esc(b.category.title()),
                esc(m.step_name(p.first as usize)),
                esc(m.step_name(p.last as usize)),
                esc(&b.op),
                esc(&b.loc)
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("</section>\n");
}

/// The bytes in use per superstep: the fullest tile, and the mean over the
/// tiles as areas by category.
fn liveness(h: &mut String, m: &MemoryReport) {
    let by = m.in_use_by_step();
    let cats = m.live_by_category();
    let n = by.len();
    let tiles = m.tiles.len().max(1) as u64;
    let resident: u64 = m.tiles.iter().map(|t| t.resident()).sum::<u64>() / tiles;
    let top = by.iter().map(|x| x.1).max().unwrap_or(1).max(1);
    const LEFT: f64 = 70.0;
    const W: f64 = 1000.0;
    const H: f64 = 200.0;
    let x = |s: usize| LEFT + (s as f64 + 0.5) * W / n.max(1) as f64;
    let y = |v: u64| 10.0 + H - v as f64 * H / top as f64;
    let _ = write!(
        h,
        "<h3>Bytes in use per superstep</h3>\n<p class=\"note\">Line: the tile with the most bytes in use (code, records and rows, and its live data). Areas: the mean over all tiles, the resident code and tables at the bottom, the live data by category above.</p>\n"
    );
    svg_open(
        h,
        (LEFT + W + 20.0) as usize,
        (H + 50.0) as usize,
        "bytes in use per superstep",
        "",
    );
    h.push_str("<g class=\"liveness\">\n");
    // Stacked mean areas: the resident part, then each data category.
    let mut lower = vec![resident; n];
    let area = |h: &mut String, lo: &[u64], hi: &[u64], col: &str, what: &str| {
        let mut d = String::new();
        for (s, &v) in hi.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1} {:.1}",
                if s == 0 { "M" } else { "L" },
                x(s),
                y(v)
            );
        }
        for (s, &v) in lo.iter().enumerate().rev() {
            let _ = write!(d, "L{:.1} {:.1}", x(s), y(v));
        }
        let _ = writeln!(
            h,
            "<path d=\"{d}Z\" fill=\"{col}\" fill-opacity=\"0.8\"><title>{}</title></path>",
            esc(what)
        );
    };
    area(
        h,
        &vec![0; n],
        &lower,
        CAT_COLOURS[Category::Code.index()],
        "code, records and rows (mean per tile)",
    );
    for c in Category::ALL.iter().filter(|c| {
        !c.is_free()
            && !matches!(
                c,
                Category::Code | Category::KernelRecords | Category::ExchangeRows | Category::Stack
            )
    }) {
        let upper: Vec<u64> = (0..n)
            .map(|s| lower[s] + cats[s][c.index()] / tiles)
            .collect();
        area(
            h,
            &lower,
            &upper,
            CAT_COLOURS[c.index()],
            &format!("{} (mean per tile)", c.title()),
        );
        lower = upper;
    }
    let mut d = String::new();
    for (s, (_, v, _)) in by.iter().enumerate() {
        let _ = write!(
            d,
            "{}{:.1} {:.1}",
            if s == 0 { "M" } else { "L" },
            x(s),
            y(*v)
        );
    }
    let _ = writeln!(
        h,
        "<path class=\"max\" d=\"{d}\" fill=\"none\" stroke=\"#c62828\" stroke-width=\"2\"/>"
    );
    for (s, (t, v, _)) in by.iter().enumerate() {
        let _ = writeln!(
            h,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#c62828\"><title>{}: {} B on tile {t}</title></circle><text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            x(s),
            y(*v),
            esc(m.step_label(s)),
            num(*v),
            x(s),
            H + 26.0,
            esc(m.step_name(s))
        );
    }
    let _ = writeln!(
        h,
        "<text x=\"{}\" y=\"16\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text></g></svg>",
        LEFT - 4.0,
        num(top),
        LEFT - 4.0,
        H + 10.0
    );
}

fn golden(h: &mut String, r: &ReportInput<'_>) {
    h.push_str("<section id=\"golden\"><h2>Per-op golden checks</h2>\n");
    match r.golden {
        None => h.push_str("<p class=\"note\">No per-op golden table in this run: the run compares the model's outputs with the reference interpreter (the summary above); the per-op checks (issue 14, item 1) fill this table when they exist.</p>\n"),
        Some(rows) => {
            h.push_str("<table><tr><th class=\"l\">op</th><th class=\"l\">location</th><th>largest error</th><th>tolerance</th><th class=\"l\">verdict</th></tr>\n");
            for g in rows {
                let _ = writeln!(
                    h,
                    "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:e}</td><td>{:e}</td><td class=\"l {}\">{}</td></tr>",
                    esc(&g.op),
                    esc(&g.loc),
                    g.max_abs_error,
                    g.tolerance,
                    if g.pass { "pass" } else { "fail" },
                    if g.pass { "PASS" } else { "FAIL" }
                );
            }
            h.push_str("</table>\n");
        }
    }
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchange_labels_give_their_figures() {
        assert_eq!(
            exchange_figures(
                "x0 operand #0 of s1 tile.matmul (horizon 8207, lower bound 8192, compact-streams)"
            ),
            Some((8207, 8192, "compact-streams"))
        );
        assert_eq!(exchange_figures("s1 tile.matmul"), None);
    }

    #[test]
    fn text_is_escaped_and_numbers_grouped() {
        assert_eq!(esc("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
        assert_eq!(num(53333), "53,333");
        assert_eq!(num(100), "100");
        assert_eq!(num(1234567), "1,234,567");
    }
}
