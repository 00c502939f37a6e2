//! The memory report as files: JSON (`ipu-opt --memory-report=FILE.json`,
//! `ipu-run --report DIR`) and its readable summary beside it
//! (`docs/report.md` describes both).

use ipu_lowering::exchange_to_machine::memory::{Category, MemoryReport};
use ipu_package::TileSet;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Groups of tiles listed with their tensors.
pub const LARGEST_GROUPS: usize = 5;

/// Why the stack category is always empty.
pub const STACK_NOTE: &str = "kernels are called through the link register $m15 and keep their state in registers and state records: the machine has no memory stack";

/// The report as JSON: every tile's bytes by category (in `categories`
/// order) and live data bytes per superstep, totals, bytes in use per
/// superstep, and the fullest groups of tiles with their buffers and regions.
pub fn to_json(r: &MemoryReport) -> String {
    let cats: Vec<&str> = Category::ALL.iter().map(|c| c.key()).collect();
    let by_cat = |v: &[u64]| -> Value {
        Value::Object(
            Category::ALL
                .iter()
                .map(|c| (c.key().to_string(), json!(v[c.index()])))
                .collect(),
        )
    };
    let steps: Vec<String> = (0..=r.steps.len())
        .map(|s| r.step_label(s).to_string())
        .collect();
    let live_cat = r.live_by_category();
    let in_use: Vec<Value> = r
        .in_use_by_step()
        .into_iter()
        .enumerate()
        .map(|(s, (tile, max, all))| {
            json!({
                "superstep": r.step_name(s),
                "max_tile": tile,
                "max_tile_bytes": max,
                "all_tiles_bytes": all,
                "live_data_by_category": by_cat(&live_cat[s]),
            })
        })
        .collect();
    let tiles: Vec<Value> = r
        .tiles
        .iter()
        .map(|t| {
            json!({
                "tile": t.tile,
                "started": t.started,
                "bytes": t.bytes.to_vec(),
                "used": t.used(),
                "live": t.live,
                "peak_superstep": t.peak_step(),
            })
        })
        .collect();
    let largest: Vec<Value> = r
        .groups()
        .into_iter()
        .take(LARGEST_GROUPS)
        .map(|g| {
            let m = g.memory;
            let mut ps: Vec<_> = m.placements.iter().collect();
            ps.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.address.cmp(&b.address)));
            let peak = m.peak_step();
            json!({
                "tiles": TileSet::from_tiles(g.tiles.iter().copied()).to_string(),
                "tile_count": g.tiles.len(),
                "used": m.used(),
                "free": m.bytes[Category::Free.index()],
                "bytes": by_cat(&m.bytes),
                "peak_superstep": r.step_name(peak),
                "peak_live": m.live[peak],
                "buffers": ps.iter().map(|p| {
                    let b = &r.buffers[p.buffer];
                    json!({
                        "name": b.name,
                        "category": b.category.key(),
                        "address": format!("{:#x}", p.address),
                        "bytes": p.bytes,
                        "program_bytes": b.bytes,
                        "first": r.step_name(p.first as usize),
                        "last": r.step_name(p.last as usize),
                        "op": b.op,
                        "loc": b.loc,
                    })
                }).collect::<Vec<_>>(),
                "regions": m.regions.iter().map(|x| json!([
                    format!("{:#x}", x.start),
                    x.len,
                    x.category.key(),
                    x.buffer.map(|b| r.buffers[b].name.as_str()),
                ])).collect::<Vec<_>>(),
            })
        })
        .collect();
    let buffers: Vec<Value> = r
        .buffers
        .iter()
        .map(|b| {
            json!({
                "name": b.name,
                "category": b.category.key(),
                "bytes": b.bytes,
                "op": b.op,
                "loc": b.loc,
                "tiles": b.tiles,
            })
        })
        .collect();
    let v = json!({
        "format": "ipu-memory-report 1",
        "target": r.target,
        "tile_bytes": r.tile_bytes,
        "memory_base": format!("{:#x}", r.memory_base),
        "categories": cats,
        "category_titles": Category::ALL.iter().map(|c| c.title()).collect::<Vec<_>>(),
        "stack": STACK_NOTE,
        "supersteps": steps,
        "totals": by_cat(&r.totals()),
        "in_use_by_superstep": in_use,
        "largest": largest,
        "buffers": buffers,
        "tiles": tiles,
        "functions": r.functions.iter().map(|f| json!({
            "name": f.name,
            "calls": f.calls,
            "outlined_calls": f.outlined,
            "code_bytes": f.code_bytes,
            "per_call_bytes": f.per_call_bytes,
        })).collect::<Vec<_>>(),
        "weights": r.weights.iter().map(|w| json!({
            "name": w.name,
            "bytes": w.bytes,
            "held": w.held,
            "copies": w.held as f64 / w.bytes.max(1) as f64,
            "widened": w.widened,
        })).collect::<Vec<_>>(),
    });
    let mut s = serde_json::to_string(&v).expect("JSON values serialise");
    s.push('\n');
    s
}

/// The summary's path beside `json`: `FILE.json` -> `FILE.txt`.
pub fn text_path(json: &Path) -> PathBuf {
    if json.extension().is_some_and(|e| e == "json") {
        json.with_extension("txt")
    } else {
        let mut p = json.as_os_str().to_owned();
        p.push(".txt");
        PathBuf::from(p)
    }
}

/// Writes the JSON report to `json` and the summary beside it; returns the
/// summary's path.
pub fn write(r: &MemoryReport, json: &Path) -> Result<PathBuf, String> {
    let txt = text_path(json);
    crate::cli::write_output(json, to_json(r))?;
    crate::cli::write_output(&txt, r.summary_text(LARGEST_GROUPS))?;
    Ok(txt)
}
