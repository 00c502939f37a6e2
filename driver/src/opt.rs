//! `ipu-opt`: reads IR, verifies it, runs a pass pipeline and prints the
//! result, with mlir-opt's flags and exit codes (0 on success, 1 on any error).

use crate::expected;
use crate::split;
use clap::{Arg, ArgAction, ArgMatches, Command};
use codespan_reporting::term::termcolor::StandardStream;
use ipu_ir::diag::{Diagnostic, SourceMap};
use ipu_ir::pass::{timing_report, IrPrinting, PassManager};
use ipu_ir::printer::{PrintOptions, Printer};
use ipu_ir::{Context, Registry};
use std::ffi::OsString;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn command(registry: &Registry) -> Command {
    let mut cmd = Command::new("ipu-opt")
        .about("IPU compiler optimizer driver: parse, verify, transform and print IR")
        .version(env!("CARGO_PKG_VERSION"))
        .arg(
            Arg::new("input")
                .default_value("-")
                .help("Input file, or '-' for standard input"),
        )
        .arg(
            Arg::new("output")
                .short('o')
                .value_name("FILE")
                .default_value("-")
                .help("Output file"),
        )
        .arg(
            Arg::new("pass-pipeline")
                .long("pass-pipeline")
                .value_name("PIPELINE")
                .help(
                    "A textual pass pipeline, e.g. 'builtin.module(func.func(cse),canonicalize)'",
                ),
        )
        .arg(flag(
            "allow-unregistered-dialect",
            "Accept ops of dialects that are not registered (kept, printed in generic form)",
        ))
        .arg(flag(
            "mlir-print-debuginfo",
            "Print locations after ops and block arguments",
        ))
        .arg(flag(
            "mlir-print-op-generic",
            "Print every op in the generic form",
        ))
        .arg(flag(
            "split-input-file",
            "Split the input at '// -----' lines and process each chunk on its own",
        ))
        .arg(flag(
            "verify-diagnostics",
            "Check that the diagnostics produced are those the input's expected-* comments name",
        ))
        .arg(flag(
            "mlir-print-ir-before-all",
            "Print the IR before every pass (to stderr)",
        ))
        .arg(flag(
            "mlir-print-ir-after-all",
            "Print the IR after every pass (to stderr)",
        ))
        .arg(flag(
            "mlir-print-ir-after-change",
            "Print the IR after a pass only when the pass changed it",
        ))
        .arg(flag(
            "mlir-print-ir-after-failure",
            "Print the IR after a pass that failed",
        ))
        .arg(flag(
            "mlir-timing",
            "Print a per-pass execution time report (to stderr)",
        ))
        .arg(flag(
            "mlir-pass-statistics",
            "Print pass statistics (to stderr)",
        ))
        .arg(flag(
            "dump-pass-pipeline",
            "Print the pass pipeline that will run (to stderr)",
        ))
        .arg(flag(
            "allow-external-weights",
            "Read a weights file the module names outside its own folder (an absolute path, or one with '..')",
        ))
        .arg(flag(
            "no-verify-each",
            "Do not verify the IR after each pass",
        ))
        .arg(
            Arg::new("target")
                .long("target")
                .value_name("NAME|FILE")
                .help("Target description for target-dependent passes (a built-in name or a file)"),
        )
        .arg(
            Arg::new("memory-report")
                .long("memory-report")
                .value_name("FILE.json")
                .require_equals(true)
                .help("Write the memory report of the machine stage's build (convert-exchange-to-machine): every tile's bytes by category, the live bytes at every superstep, the fullest tiles and their tensors; its readable summary goes beside it (FILE.txt)"),
        );
    for p in registry.passes() {
        let mut help = p.description.to_string();
        if !p.options.is_empty() {
            let opts: Vec<String> = p
                .options
                .iter()
                .map(|o| format!("{}={} ({})", o.name, o.default, o.description))
                .collect();
            help.push_str(&format!(" Options: {}.", opts.join("; ")));
        }
        cmd = cmd.arg(
            Arg::new(p.argument)
                .long(p.argument)
                .help(help)
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("")
                .value_name("OPTIONS")
                .action(ArgAction::Append)
                .help_heading("Passes"),
        );
    }
    for p in registry.pipelines() {
        cmd = cmd.arg(
            Arg::new(p.argument)
                .long(p.argument)
                .help(format!("{} [{}]", p.description, p.pipeline))
                .action(ArgAction::Append)
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("")
                .hide_possible_values(true)
                .help_heading("Pass pipelines"),
        );
    }
    cmd
}

fn flag(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .action(ArgAction::SetTrue)
        .help(help)
}

struct Options {
    input: String,
    output: String,
    pipeline: Vec<(usize, String, String)>,
    pass_pipeline: Option<String>,
    allow_unregistered: bool,
    print: PrintOptions,
    split: bool,
    verify_diagnostics: bool,
    printing: IrPrinting,
    timing: bool,
    statistics: bool,
    dump_pipeline: bool,
    verify_each: bool,
    target: Option<String>,
    memory_report: Option<String>,
    allow_external_weights: bool,
}

fn options(registry: &Registry, m: &ArgMatches) -> Options {
    let mut pipeline = Vec::new();
    for p in registry.passes() {
        if let (Some(idx), Some(vals)) =
            (m.indices_of(p.argument), m.get_raw_occurrences(p.argument))
        {
            for (i, occ) in idx.zip(vals) {
                let v: Vec<_> = occ.collect();
                let opts = v
                    .first()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                pipeline.push((i, p.argument.to_string(), opts));
            }
        }
    }
    for p in registry.pipelines() {
        if let Some(idx) = m.indices_of(p.argument) {
            for i in idx {
                pipeline.push((i, p.argument.to_string(), String::new()));
            }
        }
    }
    pipeline.sort();
    let print = PrintOptions {
        generic: m.get_flag("mlir-print-op-generic"),
        debug_info: m.get_flag("mlir-print-debuginfo"),
    };
    Options {
        input: m
            .get_one::<String>("input")
            .cloned()
            .unwrap_or_else(|| "-".into()),
        output: m
            .get_one::<String>("output")
            .cloned()
            .unwrap_or_else(|| "-".into()),
        pipeline,
        pass_pipeline: m.get_one::<String>("pass-pipeline").cloned(),
        allow_unregistered: m.get_flag("allow-unregistered-dialect"),
        print,
        split: m.get_flag("split-input-file"),
        verify_diagnostics: m.get_flag("verify-diagnostics"),
        printing: IrPrinting {
            before_all: m.get_flag("mlir-print-ir-before-all"),
            after_all: m.get_flag("mlir-print-ir-after-all"),
            after_change: m.get_flag("mlir-print-ir-after-change"),
            after_failure: m.get_flag("mlir-print-ir-after-failure"),
            print,
        },
        timing: m.get_flag("mlir-timing"),
        statistics: m.get_flag("mlir-pass-statistics"),
        dump_pipeline: m.get_flag("dump-pass-pipeline"),
        verify_each: !m.get_flag("no-verify-each"),
        target: m.get_one::<String>("target").cloned(),
        memory_report: m.get_one::<String>("memory-report").cloned(),
        allow_external_weights: m.get_flag("allow-external-weights"),
    }
}

fn build_pass_manager(registry: &Registry, o: &Options) -> Result<PassManager, String> {
    let mut pm = PassManager::new("builtin.module");
    pm.verify_each = o.verify_each;
    pm.printing = o.printing;
    if let Some(p) = &o.pass_pipeline {
        if !o.pipeline.is_empty() {
            return Err("'--pass-pipeline' cannot be used with individual pass options".into());
        }
        pm.add_pipeline(registry, p)?;
    }
    for (_, name, opts) in &o.pipeline {
        pm.add_by_name(registry, name, opts)?;
    }
    Ok(pm)
}

/// Runs `ipu-opt` with `args`; returns the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    crate::init_tracing();
    let registry = crate::full_registry();
    let matches = match crate::cli::parse_args(command(&registry), args) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let o = options(&registry, &matches);
    let mut stderr = crate::cli::stderr_stream();
    // Validate the pipeline once up front, so errors in it are reported before parsing.
    if let Err(e) = build_pass_manager(&registry, &o) {
        let _ = writeln!(stderr, "ipu-opt: {e}");
        return 1;
    }
    let (name, text) = match read_input(&o.input) {
        Ok(x) => x,
        Err(e) => {
            let _ = writeln!(stderr, "ipu-opt: {e}");
            return 1;
        }
    };
    // A file output is a temporary until the run has succeeded: a failed
    // run leaves the old file as it was (finding 1 of issue 32).
    let mut out = match crate::cli::Output::open(&o.output) {
        Ok(out) => out,
        Err(e) => {
            let _ = writeln!(stderr, "ipu-opt: {e}");
            return 1;
        }
    };
    // Shared without copying the text (a large input is read once).
    let text: Arc<String> = Arc::new(text);
    // One source map for the whole file: chunk locations count its lines.
    let mut sources = SourceMap::new();
    sources.add_string(&name, text.clone());
    let chunks = if o.split {
        split::split(&text)
    } else {
        vec![split::Chunk {
            first_line: 0,
            text: &text,
        }]
    };
    let mut ok = true;
    let mut reports = Vec::new();
    for (i, chunk) in chunks.into_iter().enumerate() {
        if i > 0 {
            let _ = writeln!(out, "{}", split::MARKER);
        }
        ok &= process_chunk(
            &registry,
            &o,
            &name,
            &sources,
            chunk,
            &mut out,
            &mut stderr,
            &mut reports,
        );
    }
    if let Some(file) = &o.memory_report {
        if ok {
            if let Err(e) = write_memory_report(&reports, file) {
                let _ = writeln!(stderr, "ipu-opt: {e}");
                ok = false;
            }
        }
    }
    if !ok {
        // Dropped uncommitted: standard output has what was printed, a file is untouched.
        let _ = out.flush();
        return 1;
    }
    if let Err(e) = out.commit() {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = writeln!(stderr, "ipu-opt: failed to write the output: {e}");
        }
        return 1;
    }
    if ok {
        0
    } else {
        1
    }
}

/// Writes the one memory report the run made to `file` (and its summary).
fn write_memory_report(
    reports: &[ipu_lowering::exchange_to_machine::memory::MemoryReport],
    file: &str,
) -> Result<(), String> {
    match reports {
        [r] => crate::memory_report::write(r, std::path::Path::new(file)).map(|_| ()),
        [] => Err("--memory-report: no machine-stage build ran (the pipeline must include convert-exchange-to-machine, e.g. --ipu-lower-to-machine)".into()),
        _ => Err(format!(
            "--memory-report: {} machine-stage builds ran (one per input chunk); give one at a time",
            reports.len()
        )),
    }
}

fn read_input(path: &str) -> Result<(String, String), String> {
    crate::load::read_text(path)
}

/// Parses, verifies, transforms and prints one buffer. Returns success;
/// the machine stage's memory reports go to `reports` when asked for.
#[allow(clippy::too_many_arguments)]
fn process_chunk(
    registry: &Arc<Registry>,
    o: &Options,
    name: &str,
    sources: &SourceMap,
    chunk: split::Chunk<'_>,
    out: &mut dyn Write,
    stderr: &mut StandardStream,
    reports: &mut Vec<ipu_lowering::exchange_to_machine::memory::MemoryReport>,
) -> bool {
    let total_start = Instant::now();
    let text = chunk.text;
    let mut cx = Context::new(registry.clone());
    cx.allow_unregistered = o.allow_unregistered;
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut timing: Vec<(usize, String, Duration)> = Vec::new();

    let mut expectations = if o.verify_diagnostics {
        match expected::parse_expectations(text) {
            Ok(mut e) => {
                for x in &mut e {
                    x.line += chunk.first_line;
                    x.at.0 += chunk.first_line;
                }
                Some(e)
            }
            Err((line, col, msg)) => {
                let loc = cx.file_loc(name, chunk.first_line + line, col);
                sources.render(&cx, &Diagnostic::error(loc, msg), stderr);
                return false;
            }
        }
    } else {
        None
    };

    let mut pm = match build_pass_manager(registry, o) {
        Ok(pm) => pm,
        Err(_) => return false, // reported once in main
    };
    let t = Instant::now();
    let parsed = {
        let _s = tracing::info_span!("parse", file = name).entered();
        ipu_ir::parser::parse_source_at(&mut cx, name, text, chunk.first_line)
    };
    timing.push((0, "Parser".into(), t.elapsed()));
    let mut module = None;
    match parsed {
        Err(d) => diags.push(d),
        Ok(m) => {
            // The weights side file a module names is read beside the input,
            // as `ipu-run` does, so lowering has its constants' bytes. A
            // missing one is left alone: only passes that need the bytes
            // refuse, at the constant (text-only transforms work without).
            let base = std::path::Path::new(&o.input)
                .parent()
                .filter(|_| o.input != "-")
                .unwrap_or(std::path::Path::new("."));
            let weights = crate::load::read_weights(&mut cx, m, base, o.allow_external_weights);
            let t = Instant::now();
            let v = match weights {
                Err(crate::load::WeightsError::Damaged(d)) => Err(d),
                _ => {
                    let _s = tracing::info_span!("verify").entered();
                    ipu_ir::verify::verify(&cx, m)
                }
            };
            timing.push((0, "Verifier".into(), t.elapsed()));
            match v {
                Err(d) => diags.push(d),
                Ok(()) => {
                    if let Some(t) = &o.target {
                        // Target-dependent passes read the module's target.
                        let a = cx.string_attr(t);
                        cx.set_attr(m, ipu_lowering::target::TARGET_ATTR, a);
                    }
                    if o.dump_pipeline {
                        let _ = writeln!(stderr, "Pass Manager with {}", pm.root.to_text());
                    }
                    let mut log = std::io::stderr();
                    let r = if o.memory_report.is_some() {
                        let (r, mut got) =
                            ipu_lowering::exchange_to_machine::memory::collecting(|| {
                                pm.run(&mut cx, m, &mut log)
                            });
                        reports.append(&mut got);
                        r
                    } else {
                        pm.run(&mut cx, m, &mut log)
                    };
                    timing.extend(pm.timing_rows());
                    diags.append(&mut cx.diagnostics);
                    match r {
                        Err(d) => diags.push(d),
                        Ok(()) => module = Some(m),
                    }
                }
            }
        }
    }
    let mut ok = true;
    match expectations.as_mut() {
        Some(exp) => {
            let failures = expected::check(&mut cx, sources, name, &diags, exp);
            for f in &failures {
                sources.render(&cx, f, stderr);
            }
            ok = failures.is_empty();
        }
        None => {
            for d in &diags {
                sources.render(&cx, d, stderr);
                if d.severity == ipu_ir::Severity::Error {
                    ok = false;
                }
            }
        }
    }
    if let Some(m) = module {
        let t = Instant::now();
        let mut p = Printer::with_sink(&cx, o.print, out);
        if let Err(e) = p.print_top(m) {
            // A reader that went away (`| head`) is not worth a message.
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                let _ = writeln!(stderr, "ipu-opt: failed to write the output: {e}");
            }
            ok = false;
        }
        timing.push((0, "Output".into(), t.elapsed()));
    }
    if o.statistics {
        let _ = write!(stderr, "{}", pm.statistics_report());
    }
    if o.timing {
        let total = total_start.elapsed();
        let accounted: Duration = timing.iter().filter(|r| r.0 == 0).map(|r| r.2).sum();
        timing.push((0, "Rest".into(), total.saturating_sub(accounted)));
        let _ = write!(stderr, "{}", timing_report(&timing, total));
    }
    ok
}
