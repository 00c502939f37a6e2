//! `kernel-hashes`: assembles kernel specialisations with the current
//! sources and prints one line per specialisation, `HASH SOURCE PARAMS`,
//! sorted, so that two runs (before and after a change to `kernels/*.S` or
//! the assembler) can be compared with `diff`.
//!
//! The specialisations are those of kernel caches (every `kernel.json`
//! under the directories given with `--cache`, as tests and examples left
//! them), and those of an earlier run's output (`--from FILE`), so a run
//! can be repeated on exactly the same set. The hash covers the object as
//! the linker sees it: sections, relocations, symbols and the metadata,
//! but not the source's own SHA-256 (which any edit changes).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use ipu_isa::kernels::{assemble_kernel, sha256_hex};

type Spec = (String, BTreeMap<String, i64>);

fn from_cache(dir: &Path, out: &mut BTreeSet<Spec>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let Ok(json) = std::fs::read(entry.path().join("kernel.json")) else {
            continue;
        };
        let Ok(meta) = serde_json::from_slice::<ipu_isa::elf::KernelMeta>(&json) else {
            continue;
        };
        let name = meta
            .source
            .trim_start_matches("kernels/")
            .trim_end_matches(".S")
            .to_string();
        out.insert((name, meta.params));
    }
    Ok(())
}

fn parse_params(text: &str) -> Option<BTreeMap<String, i64>> {
    if text == "-" {
        return Some(BTreeMap::new());
    }
    text.split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

fn from_listing(path: &Path, out: &mut BTreeSet<Spec>) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (i, line) in text.lines().enumerate() {
        let mut f = line.split_whitespace().skip(1);
        let (Some(name), Some(params)) = (f.next(), f.next()) else {
            continue;
        };
        let params = parse_params(params)
            .ok_or_else(|| format!("{}:{}: bad parameters", path.display(), i + 1))?;
        out.insert((name.to_string(), params));
    }
    Ok(())
}

fn hash(name: &str, params: &BTreeMap<String, i64>) -> String {
    match assemble_kernel(name, params) {
        Ok(mut a) => {
            a.meta.source_sha256.clear();
            a.object.meta = Some(a.meta.clone());
            sha256_hex(&a.elf_bytes())[..16].to_string()
        }
        Err(e) => format!("error:{}", &sha256_hex(e.to_string().as_bytes())[..10]),
    }
}

fn main() -> ExitCode {
    let mut specs = BTreeSet::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let r = match (a.as_str(), args.next()) {
            ("--cache", Some(d)) => from_cache(Path::new(&d), &mut specs),
            ("--from", Some(f)) => from_listing(Path::new(&f), &mut specs),
            _ => Err("usage: kernel-hashes [--cache DIR]... [--from FILE]...".to_string()),
        };
        if let Err(e) = r {
            eprintln!("kernel-hashes: {e}");
            return ExitCode::FAILURE;
        }
    }
    for (name, params) in &specs {
        let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let p = if p.is_empty() {
            "-".into()
        } else {
            p.join(",")
        };
        println!("{} {name} {p}", hash(name, params));
    }
    ExitCode::SUCCESS
}
