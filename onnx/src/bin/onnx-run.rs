//! Import an ONNX model and run it on the reference evaluator.
//!
//! Usage: onnx-run MODEL --input NAME=FILE.npy ... [--out-dir DIR] [--repeat N]
//!
//! Input shapes are taken from the given arrays. Each output is written
//! as `DIR/output_<i>.npy`; a summary line per output is printed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use ipu_onnx::{import_model, read_model, ImportOptions};
use ipu_reference::npy::{read_npy, write_npy};

#[derive(Parser)]
#[command(about = "Run an ONNX model on the ipu-reference evaluator")]
struct Args {
    model: PathBuf,
    /// NAME=FILE.npy, one per graph input.
    #[arg(long = "input")]
    inputs: Vec<String>,
    /// Directory for `output_<i>.npy` files.
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Run the graph this many times (timing).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Print the time spent per op kind (last run).
    #[arg(long)]
    profile: bool,
}

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1);
}

fn main() {
    let args = Args::parse();
    let t0 = Instant::now();
    let model = read_model(&args.model).unwrap_or_else(|e| fail(e));
    let mut given = HashMap::new();
    for spec in &args.inputs {
        let (name, path) = spec
            .split_once('=')
            .unwrap_or_else(|| fail(format!("--input `{spec}` is not NAME=FILE")));
        let t = read_npy(path).unwrap_or_else(|e| fail(e));
        if given.insert(name.to_string(), t).is_some() {
            fail(format!("--input `{name}` is given more than once"));
        }
    }
    let mut opts = ImportOptions::default();
    for (n, t) in &given {
        opts.input_shapes.insert(n.clone(), t.shape().to_vec());
    }
    let graph = import_model(&model, &opts).unwrap_or_else(|e| fail(e));
    for w in &graph.warnings {
        eprintln!("warning: {w}");
    }
    let t1 = Instant::now();
    let mut inputs = Vec::new();
    for (k, &id) in graph.inputs.iter().enumerate() {
        let name = &graph.values[id].name;
        // An input not given takes its default value (its initializer), if any.
        let default = graph.input_defaults.get(k).cloned().flatten();
        let t = given
            .remove(name)
            .or(default)
            .unwrap_or_else(|| fail(format!("no --input for graph input `{name}`")));
        inputs.push(t);
    }
    let (consts, elems) = graph.constant_stats();
    eprintln!(
        "imported {} ops ({} constants, {} constant elements) in {:.3}s",
        graph.nodes.len(),
        consts,
        elems,
        (t1 - t0).as_secs_f64()
    );
    let mut outputs = Vec::new();
    let mut per_op: HashMap<&'static str, (usize, f64)> = HashMap::new();
    for _ in 0..args.repeat.max(1) {
        per_op.clear();
        let t = Instant::now();
        outputs = graph
            .run_with(&inputs, |n, d| {
                let e = per_op.entry(n.op.name()).or_default();
                e.0 += 1;
                e.1 += d.as_secs_f64();
            })
            .unwrap_or_else(|e| fail(e));
        eprintln!("run: {:.3}s", t.elapsed().as_secs_f64());
    }
    if args.profile {
        let mut rows: Vec<_> = per_op.into_iter().collect();
        rows.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1));
        for (op, (count, secs)) in rows {
            eprintln!("  {op:<16} {count:>5} ops {:>9.3} ms", secs * 1e3);
        }
    }
    for (i, (&id, t)) in graph.outputs.iter().zip(&outputs).enumerate() {
        println!("output {i} `{}`: {}", graph.values[id].name, t.ty());
        if let Some(dir) = &args.out_dir {
            if let Err(e) = std::fs::create_dir_all(dir) {
                fail(format!("{}: {e}", dir.display()));
            }
            write_npy(dir.join(format!("output_{i}.npy")), t).unwrap_or_else(|e| fail(e));
        }
    }
}
