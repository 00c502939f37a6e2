//! `ipu-run`: runs a model and checks it. `--reference-only` runs the
//! reference interpreter alone: inputs from `.npy` files by argument name
//! (missing ones filled from a fixed-seed generator, and said so), results
//! written to `--output-dir` as `<name>.npy`.

use crate::load::{entry_function, load, value_name, LoadError};
use clap::{Arg, ArgAction, Command};
use codespan_reporting::term::termcolor::StandardStream;
use ipu_reference::{ElementType, Tensor, TensorData, TensorType};
use std::ffi::OsString;
use std::io::Write;
use std::time::Instant;

fn command() -> Command {
    Command::new("ipu-run")
        .about("Run a model on the reference interpreter (and, with a package, on the simulated device)")
        .version(env!("CARGO_PKG_VERSION"))
        .arg(Arg::new("model").required(true).help("Model: .mlir file (or '-' for standard input)"))
        .arg(Arg::new("reference-only").long("reference-only").action(ArgAction::SetTrue).help("Run the reference interpreter only"))
        .arg(Arg::new("input").long("input").value_name("NAME=FILE.npy").action(ArgAction::Append).help("An input by argument name"))
        .arg(Arg::new("output-dir").long("output-dir").value_name("DIR").help("Write each result to DIR/<name>.npy"))
        .arg(Arg::new("entry").long("entry").value_name("NAME").help("Function to run (default: @main, or the only public one)"))
        .arg(Arg::new("seed").long("seed").value_name("N").default_value("0").value_parser(clap::value_parser!(u64)).help("Seed of the generator for inputs not given"))
        .arg(Arg::new("print-outputs").long("print-outputs").action(ArgAction::SetTrue).help("Print every result's values"))
}

pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    crate::init_tracing();
    let m = match crate::cli::parse_args(command(), args) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let mut stderr = crate::cli::stderr_stream();
    match run(&m, &mut stderr) {
        Ok(code) => code,
        Err(msg) => {
            let _ = writeln!(stderr, "ipu-run: {msg}");
            1
        }
    }
}

fn run(m: &clap::ArgMatches, stderr: &mut StandardStream) -> Result<i32, String> {
    let path = m.get_one::<String>("model").expect("required");
    if !m.get_flag("reference-only") {
        return Err(
            "running on the simulated device is not available yet; use --reference-only".into(),
        );
    }
    let registry = crate::full_registry();
    let loaded = match load(&registry, path) {
        Ok(l) => l,
        Err(LoadError::Io(msg)) => return Err(msg),
        Err(LoadError::Diag(l, d)) => {
            l.sources.render(&l.cx, &d, stderr);
            return Ok(1);
        }
    };
    let cx = &loaded.cx;
    let f = entry_function(
        cx,
        loaded.module,
        m.get_one::<String>("entry").map(|s| s.as_str()),
    )?;
    let (inputs_ty, _) =
        ipu_dialects::func::function_type(cx, f).ok_or("entry function has no signature")?;
    let mut given: Vec<(String, String)> = Vec::new();
    for spec in m.get_many::<String>("input").into_iter().flatten() {
        let (n, file) = spec
            .split_once('=')
            .ok_or_else(|| format!("--input expects NAME=FILE.npy, got '{spec}'"))?;
        given.push((n.to_string(), file.to_string()));
    }
    let mut rng = SplitMix::new(*m.get_one::<u64>("seed").expect("default"));
    let mut inputs = Vec::new();
    let mut used = vec![false; given.len()];
    for (i, &t) in inputs_ty.iter().enumerate() {
        let name = value_name(cx, f, "arg_attrs", i, "arg");
        let ty =
            ipu_dialects::nn::tensor_type(cx, t).map_err(|e| format!("input '{name}': {e}"))?;
        match given.iter().position(|(n, _)| *n == name) {
            Some(k) => {
                used[k] = true;
                let file = &given[k].1;
                let tensor = ipu_reference::npy::read_npy(file)
                    .map_err(|e| format!("input '{name}': {e}"))?;
                if tensor.ty() != ty {
                    return Err(format!(
                        "input '{name}' from {file} is {}, but the model takes {ty}",
                        tensor.ty()
                    ));
                }
                inputs.push(tensor);
            }
            None => {
                let _ = writeln!(
                    stderr,
                    "note: input '{name}' ({ty}) not given: using random values (seed {})",
                    rng.seed
                );
                inputs.push(random_tensor(&ty, &mut rng)?);
            }
        }
    }
    if let Some(k) = used.iter().position(|u| !u) {
        return Err(format!("the model has no input named '{}'", given[k].0));
    }
    let start = Instant::now();
    let outputs = match ipu_dialects::interpret::interpret(cx, f, &inputs) {
        Ok(o) => o,
        Err(d) => {
            loaded.sources.render(cx, &d, stderr);
            return Ok(1);
        }
    };
    let elapsed = start.elapsed();
    let out_dir = m.get_one::<String>("output-dir");
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create '{dir}': {e}"))?;
    }
    let mut stdout = std::io::stdout().lock();
    for (i, t) in outputs.iter().enumerate() {
        let name = value_name(cx, f, "res_attrs", i, "result");
        if let Some(dir) = out_dir {
            let file = std::path::Path::new(dir).join(format!("{name}.npy"));
            ipu_reference::npy::write_npy(&file, t).map_err(|e| e.to_string())?;
        }
        if m.get_flag("print-outputs") {
            let _ = writeln!(stdout, "{name}: {} = {}", t.ty(), format_values(t));
        }
    }
    let _ = writeln!(
        stdout,
        "referenceRun=OK outputs={} referenceMilliseconds={:.3}",
        outputs.len(),
        elapsed.as_secs_f64() * 1e3
    );
    Ok(0)
}

/// A small deterministic generator (SplitMix64) for inputs not given.
pub struct SplitMix {
    pub seed: u64,
    state: u64,
}

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix { seed, state: seed }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

/// Random values for a tensor type: floats in [-1, 1), integers in [0, 4), booleans.
pub fn random_tensor(ty: &TensorType, rng: &mut SplitMix) -> Result<Tensor, String> {
    let n = ty.numel();
    let err = |e: ipu_reference::EvalError| e.to_string();
    if ty.dtype.is_float() {
        let v = (0..n).map(|_| rng.next_f32()).collect();
        Tensor::from_f32(ty.shape.clone(), ty.dtype, v).map_err(err)
    } else if ty.dtype == ElementType::I1 {
        let v = (0..n).map(|_| rng.next_u64() & 1 == 1).collect();
        Tensor::from_bool(ty.shape.clone(), v).map_err(err)
    } else {
        let v = (0..n).map(|_| (rng.next_u64() % 4) as i64).collect();
        Tensor::from_i64(ty.shape.clone(), ty.dtype, v).map_err(err)
    }
}

/// Values in nested brackets, at most 64 shown.
pub fn format_values(t: &Tensor) -> String {
    let shown = 64;
    let vals: Vec<String> = match t.data() {
        TensorData::F32(v) => v.iter().take(shown).map(|x| format!("{x}")).collect(),
        TensorData::I64(v) => v.iter().take(shown).map(|x| format!("{x}")).collect(),
    };
    let mut s = String::from("[");
    s.push_str(&vals.join(", "));
    if t.numel() > shown {
        s.push_str(&format!(", ... ({} more)", t.numel() - shown));
    }
    s.push(']');
    s
}
