//! Exchange scheduler benchmark: realistic 1472-tile phases on ipu21.
//!
//! Prints, per phase: transfers, initial and selected horizon, endpoint lower
//! bound, horizon / bound, kind, largest row and scheduling time, then the
//! time to reuse a relocated copy. Run with
//! `cargo run --release -p ipu-lowering --example exchange_bench [target [filter]]`.

use ipu_exchange_schedule::{
    evaluate_variants, patterns, summarize, verify, ExchangeScheduler, Phase,
};
use ipu_target::Target;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// Appends a line to the report (printed once at the end, so a closed pipe
/// cannot make the benchmark panic mid-way).
macro_rules! outln {
    ($out:ident) => { $out.push('\n') };
    ($out:ident, $($arg:tt)*) => {{ let _ = writeln!($out, $($arg)*); }};
}

fn main() {
    let mut out = String::new();
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "ipu21".to_string());
    let target = match Target::load(&name) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let n = target.tiles();
    let phases: Vec<(&str, Phase)> = vec![
        ("shift+1 1KiB", patterns::shift(n, 1, 1024)),
        ("shift+37 1KiB", patterns::shift(n, 37, 1024)),
        ("pair-swap 256B", patterns::pair_swap(n, 256)),
        ("all-to-all/16 512B", patterns::all_to_all(n, 16, 512)),
        ("all-to-all/64 128B", patterns::all_to_all(n, 64, 128)),
        ("broadcast 8x4KiB", patterns::broadcast(n, 8, 4096)),
        (
            "group-bcast 32x4x1KiB",
            patterns::group_broadcast(n, 32, 4, 1024),
        ),
        ("gather/16 2KiB", patterns::gather(n, 16, 2048)),
        (
            "grid-allgather 32x46",
            patterns::grid_allgather(32, n / 32, 256, 512),
        ),
        (
            "random-hot 8/tile",
            patterns::random_hot(n, 8, 512, 16, 20, 3),
        ),
        ("random 8/tile <=1KiB", patterns::random(n, 8, 1024, 0, 1)),
        (
            "random 32/tile <=256B mc",
            patterns::random(n, 32, 256, 8, 2),
        ),
    ];
    // Optional second argument: only phases whose label contains it.
    let filter = std::env::args().nth(2).unwrap_or_default();
    let phases: Vec<(&str, Phase)> = phases
        .into_iter()
        .filter(|(l, _)| l.contains(filter.as_str()))
        .collect();
    outln!(out, "target {target}");
    outln!(
        out,
        "{:<26} {:>9} {:>9} {:>9} {:>9} {:>6} {:<16} {:>4} {:>6} {:>9} {:>9}",
        "phase",
        "transfers",
        "initial",
        "horizon",
        "bound",
        "ratio",
        "kind",
        "impr",
        "row_w",
        "sched_ms",
        "reuse_ms"
    );
    let mut sched = ExchangeScheduler::new(target.clone());
    for (label, phase) in &phases {
        let t0 = Instant::now();
        let s = match sched.schedule(phase) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{label}: error: {e}");
                std::process::exit(1);
            }
        };
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let moved = patterns::relocated(phase, 64);
        let t1 = Instant::now();
        let r = sched.schedule(&moved);
        let reuse_ms = t1.elapsed().as_secs_f64() * 1e3;
        let reused = match &r {
            Ok(r) if r.kind.as_str() == "reused" && verify(&moved, r, &target).is_ok() => {
                format!("{reuse_ms:.1}")
            }
            _ => "no".to_string(),
        };
        outln!(
            out,
            "{:<26} {:>9} {:>9} {:>9} {:>9} {:>6.3} {:<16} {:>4} {:>6} {:>9.1} {:>9}",
            label,
            s.transfers,
            s.initial_horizon,
            s.horizon,
            s.lower_bound,
            s.ratio(),
            s.kind.as_str(),
            s.improvements,
            s.rows.max_row_words,
            ms,
            reused
        );
    }
    if std::env::var_os("EXCHANGE_BENCH_VARIANTS").is_some() {
        outln!(out);
        for (label, phase) in &phases {
            let Ok(reports) = evaluate_variants(phase, &target) else {
                continue;
            };
            for r in reports {
                outln!(
                    out,
                    "{label:<26} {:?}/{}{} horizon={} row_words={} fragments={}",
                    r.variant.order,
                    if r.variant.min_chunk == u64::MAX {
                        "whole".to_string()
                    } else {
                        r.variant.min_chunk.to_string()
                    },
                    if r.variant.paired { "/paired" } else { "" },
                    r.horizon,
                    r.max_row_words,
                    r.fragments
                );
            }
        }
    }
    outln!(out);
    for (label, phase) in phases.iter().take(3) {
        outln!(out, "{label}:");
        for line in summarize(phase).lines(4) {
            outln!(out, "  {line}");
        }
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
}
