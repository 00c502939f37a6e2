//! Simulator benchmark (`bench/simulator.sh`): runs a package on the
//! simulated chip as `ipu-run` does (load every tile, write the input
//! streams, run to the end) and prints the simulated tile-instructions per
//! CPU-second of that run.
//!
//! CPU seconds are the process's user + system time (every rayon thread)
//! around `device::run_on_chip`, read from `/proc/self/stat` (10 ms ticks),
//! so the figure does not depend on how busy the machine is; the wall time
//! is printed beside it. Inputs are deterministic values in [-1, 1).
//!
//! Usage: simulator_bench PACKAGE.ipuexe [RUNS]   (best of RUNS, default 3)
//! Prints one `key=value` line per run and a `best` line; the simulated
//! figures (cycles, instructions, supersteps, an FNV-1a hash of the
//! outputs) must not differ between runs or builds.

use std::collections::BTreeMap;
use std::time::Instant;

use ipu_driver::device;

/// User + system seconds of this process so far (all threads).
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Host bytes of every stream that goes to the device: values in [-1, 1)
/// from a fixed-seed generator, rounded to the host's element type.
fn inputs(pkg: &ipu_package::Package) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    let mut out = BTreeMap::new();
    for s in pkg.meta.streams.iter().filter(|s| s.direction.to_device()) {
        let shape: Vec<usize> = s.shape.iter().map(|&d| d as usize).collect();
        let n: usize = shape.iter().product();
        let values: Vec<f32> = (0..n).map(|_| next()).collect();
        let e = s.host_type();
        let t = ipu_reference::Tensor::from_f32(shape, device::reference_type(e), values)
            .map_err(|err| format!("stream `{}`: {err}", s.name))?;
        out.insert(s.name.clone(), device::tensor_to_bytes(&t, e)?);
    }
    Ok(out)
}

fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

fn main() {
    if let Err(e) = run() {
        eprintln!("simulator_bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: simulator_bench PACKAGE.ipuexe [RUNS]")?;
    let runs: usize = match args.get(2) {
        Some(r) => r.parse().map_err(|_| format!("bad RUNS `{r}`"))?,
        None => 3,
    };
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    let pkg = ipu_package::Package::from_elf_bytes(&bytes).map_err(|e| format!("{path}: {e}"))?;
    let target = ipu_target::Target::load(&pkg.meta.target.name).map_err(|e| e.to_string())?;
    let host = inputs(&pkg)?;
    let entry = if pkg.meta.entry_points.iter().any(|e| e.name == "main") {
        "main".to_string()
    } else {
        match pkg.meta.entry_points.as_slice() {
            [only] => only.name.clone(),
            _ => return Err("the package has no entry point `main`".into()),
        }
    };
    let mut best: Option<(f64, f64, u64)> = None;
    for k in 0..runs.max(1) {
        let (c0, w0) = (cpu_seconds(), Instant::now());
        let run = device::run_on_chip(&pkg, &target, &host, &entry, 1_000_000_000)?;
        let wall = w0.elapsed().as_secs_f64();
        let cpu = match (c0, cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => wall,
        };
        if !run.hardware_pass() {
            return Err(device::describe_faults(&run.faults).join("\n"));
        }
        let r = &run.report;
        let ins = r.total_instructions();
        let hash = run
            .outputs
            .values()
            .fold(0xcbf2_9ce4_8422_2325, |h, b| fnv1a(h, b));
        println!(
            "run={k} cycles={} supersteps={} tile_instructions={ins} outputs_fnv1a={hash:016x} cpu_s={cpu:.2} wall_s={wall:.2} M_instr_per_cpu_s={:.1}",
            r.cycles,
            r.supersteps.len(),
            ins as f64 / cpu.max(1e-9) / 1e6,
        );
        if best.is_none_or(|b| cpu < b.0) {
            best = Some((cpu, wall, ins));
        }
    }
    if let Some((cpu, wall, ins)) = best {
        println!(
            "best cpu_s={cpu:.2} wall_s={wall:.2} M_instr_per_cpu_s={:.1}",
            ins as f64 / cpu.max(1e-9) / 1e6
        );
    }
    Ok(())
}
