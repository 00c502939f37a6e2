//! Runs the ONNX backend node tests (`onnx/backend/test/data/node/*`)
//! through the importer and the reference evaluator.
//!
//! Usage: onnx-conformance --data DIR [--baseline FILE] [--write-baseline FILE]
//!        [--filter SUBSTRING] [--details]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use clap::Parser;
use ipu_onnx::conformance::{case_ops, run_case_with, Outcome, REQUIRED};
use rayon::prelude::*;

#[derive(Parser)]
#[command(about = "ONNX backend node-test conformance of the importer + reference evaluator")]
struct Args {
    /// Directory holding the node test cases (onnx/backend/test/data/node).
    #[arg(long)]
    data: PathBuf,
    /// File listing cases that passed before (one per line); any of them
    /// not passing now makes the run fail.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Write the list of passing cases to this file.
    #[arg(long)]
    write_baseline: Option<PathBuf>,
    /// Only run cases whose name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Print every failing and unsupported case with its reason.
    #[arg(long)]
    details: bool,
    /// Do not give graph-input values to the importer for operands that
    /// must be static (shapes, axes, ...): such cases become unsupported.
    #[arg(long)]
    no_specialize: bool,
}

fn main() {
    let args = Args::parse();
    let mut cases: Vec<(String, PathBuf)> = match std::fs::read_dir(&args.data) {
        Ok(rd) => rd
            .flatten()
            .filter(|e| e.path().join("model.onnx").exists())
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .filter(|(n, _)| args.filter.as_ref().is_none_or(|f| n.contains(f.as_str())))
            .collect(),
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.data.display());
            std::process::exit(2);
        }
    };
    cases.sort();
    if cases.is_empty() {
        eprintln!("error: no test cases under {}", args.data.display());
        std::process::exit(2);
    }
    let ops = case_ops(&cases);
    let results: Vec<(String, Outcome)> = cases
        .par_iter()
        .map(|(name, dir)| {
            let r = std::panic::catch_unwind(|| run_case_with(dir, !args.no_specialize))
                .unwrap_or_else(|_| Outcome::Fail("PANIC (bug)".into()));
            (name.clone(), r)
        })
        .collect();

    #[derive(Default)]
    struct Count {
        pass: usize,
        fail: usize,
        unsup: usize,
    }
    let mut by_op: BTreeMap<String, Count> = BTreeMap::new();
    let (mut req, mut total) = (Count::default(), Count::default());
    for (name, r) in &results {
        let op = ops.get(name).cloned().unwrap_or_default();
        let c = by_op.entry(op.clone()).or_default();
        let required = REQUIRED.contains(&op.as_str());
        for c in [Some(c), Some(&mut total), required.then_some(&mut req)]
            .into_iter()
            .flatten()
        {
            match r {
                Outcome::Pass => c.pass += 1,
                Outcome::Fail(_) => c.fail += 1,
                Outcome::Unsupported(_) => c.unsup += 1,
            }
        }
    }
    println!("{:<28} {:>6} {:>6} {:>6}", "op", "pass", "fail", "unsup");
    for (op, c) in &by_op {
        let mark = if REQUIRED.contains(&op.as_str()) {
            "*"
        } else {
            " "
        };
        println!(
            "{mark}{:<27} {:>6} {:>6} {:>6}",
            op, c.pass, c.fail, c.unsup
        );
    }
    println!();
    if args.details {
        for (name, r) in &results {
            match r {
                Outcome::Fail(m) => println!("FAIL  {name} [{}]: {m}", ops[name]),
                Outcome::Unsupported(m) => println!("UNSUP {name} [{}]: {m}", ops[name]),
                Outcome::Pass => {}
            }
        }
        println!();
    } else {
        for (name, r) in &results {
            if let Outcome::Fail(m) = r {
                if REQUIRED.contains(&ops[name].as_str()) {
                    println!("FAIL  {name} [{}]: {m}", ops[name]);
                }
            }
        }
    }
    println!(
        "required ops (*): {} passed, {} failed, {} unsupported",
        req.pass, req.fail, req.unsup
    );
    println!(
        "all cases: {} passed, {} failed, {} unsupported (of {})",
        total.pass,
        total.fail,
        total.unsup,
        results.len()
    );
    if let Some(p) = &args.write_baseline {
        let mut s = String::from("# ONNX node tests passing with ipu-onnx + ipu-reference\n");
        for (name, r) in &results {
            if *r == Outcome::Pass {
                s.push_str(name);
                s.push('\n');
            }
        }
        if let Err(e) = std::fs::write(p, s) {
            eprintln!("error: cannot write {}: {e}", p.display());
            std::process::exit(2);
        }
    }
    if let Some(p) = &args.baseline {
        let text = match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read baseline {}: {e}", p.display());
                std::process::exit(2);
            }
        };
        let now: HashMap<&str, &Outcome> = results.iter().map(|(n, r)| (n.as_str(), r)).collect();
        let mut regressions = 0;
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if args
                .filter
                .as_ref()
                .is_some_and(|f| !line.contains(f.as_str()))
            {
                continue;
            }
            match now.get(line) {
                Some(Outcome::Pass) => {}
                Some(r) => {
                    regressions += 1;
                    println!("REGRESSION {line}: {r:?}");
                }
                None => {
                    regressions += 1;
                    println!("REGRESSION {line}: case missing");
                }
            }
        }
        if regressions > 0 {
            println!("{regressions} baseline case(s) no longer pass");
            std::process::exit(1);
        }
        println!("baseline: no regressions");
    }
}
