//! `ipu-as`: the tile assembler, disassembler and kernel-library front end.
//!
//!   ipu-as kernel.S -o kernel.o [-D NAME=VALUE]... [--meta kernel.json]
//!   ipu-as --disassemble kernel.o
//!   ipu-as --kernel gemm_amp -D TYPE=1 -D M=64 -D K=128 -D N=128   (cached)
//!   ipu-as --isa-table                                              (docs/isa.md table)
//!
//! Errors are printed at file:line:col with the source line.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use ipu_isa::asm::assemble;
use ipu_isa::disasm::disassemble_text;
use ipu_isa::elf::ObjectFile;
use ipu_isa::kernels::KernelCache;

#[derive(Parser)]
#[command(
    name = "ipu-as",
    about = "Assembler, disassembler and kernel library for the tile ISA"
)]
struct Cli {
    /// Assembly source (or, with --disassemble, an object file).
    input: Option<PathBuf>,
    /// Output object file.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Parameter values (`.param` overrides), NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    define: Vec<String>,
    /// Write the kernel metadata JSON here.
    #[arg(long)]
    meta: Option<PathBuf>,
    /// Disassemble an object file's code sections.
    #[arg(short = 'd', long)]
    disassemble: bool,
    /// Assemble a library kernel through the kernel cache and print its entry.
    #[arg(long)]
    kernel: Option<String>,
    /// Print the instruction table as Markdown.
    #[arg(long)]
    isa_table: bool,
}

fn parse_value(v: &str) -> Option<i64> {
    let v = v.trim();
    let (neg, v) = match v.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, v),
    };
    let n = if let Some(h) = v.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else {
        v.parse().ok()?
    };
    Some(if neg { -n } else { n })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut params = BTreeMap::new();
    for d in &cli.define {
        match d
            .split_once('=')
            .and_then(|(k, v)| Some((k.to_string(), parse_value(v)?)))
        {
            Some((k, v)) => {
                params.insert(k, v);
            }
            None => {
                eprintln!("error: -D expects NAME=VALUE with an integer value, got `{d}`");
                return ExitCode::from(2);
            }
        }
    }
    if cli.isa_table {
        print!("{}", ipu_isa::table::markdown_table());
        return ExitCode::SUCCESS;
    }
    if let Some(k) = &cli.kernel {
        return match KernelCache::from_env().get(k, &params) {
            Ok(c) => {
                println!(
                    "{} {} ({})",
                    c.meta.name,
                    c.dir.display(),
                    if c.hit { "cached" } else { "assembled" }
                );
                if let Some(o) = &cli.output {
                    if let Err(e) = ipu_files::write_atomic(o, c.object.to_elf()) {
                        eprintln!("error: {}: {e}", o.display());
                        return ExitCode::FAILURE;
                    }
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let Some(input) = &cli.input else {
        eprintln!("error: no input file (see --help)");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {}: {e}", input.display());
            return ExitCode::FAILURE;
        }
    };
    if cli.disassemble {
        return match ObjectFile::from_elf(&bytes) {
            Ok(o) => {
                for s in o.sections.iter().filter(|s| s.exec) {
                    println!("{}:", s.name);
                    print!("{}", disassemble_text(&s.data, 0, true));
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {}: {e}", input.display());
                ExitCode::FAILURE
            }
        };
    }
    let text = String::from_utf8_lossy(&bytes);
    let name = input.display().to_string();
    match assemble(&name, &text, &params) {
        Ok(a) => {
            let out = cli
                .output
                .clone()
                .unwrap_or_else(|| input.with_extension("o"));
            if let Err(e) = ipu_files::write_atomic(&out, a.elf_bytes()) {
                eprintln!("error: {}: {e}", out.display());
                return ExitCode::FAILURE;
            }
            if let Some(m) = &cli.meta {
                let json = serde_json::to_string_pretty(&a.meta).unwrap_or_default();
                if let Err(e) = ipu_files::write_atomic(m, json) {
                    eprintln!("error: {}: {e}", m.display());
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(errs) => {
            let color = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                ColorChoice::Auto
            } else {
                ColorChoice::Never
            };
            let mut w = StandardStream::stderr(color);
            errs.emit(&mut w);
            ExitCode::FAILURE
        }
    }
}
