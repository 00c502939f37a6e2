//! The command-line tools (`ipu-opt`, and the translate and run tools of the
//! later stages) as a library: each binary is a thin shell over a `main` here.

pub mod api;
pub mod check_ops;
pub mod cli;
pub mod conformance;
pub mod device;
pub mod expected;
pub mod floor;
pub mod load;
pub mod memory_report;
pub mod names;
pub mod opt;
pub mod report;
pub mod run;
pub mod split;
pub mod steady;
mod streams;
pub mod translate;

use ipu_ir::Registry;
use std::sync::Arc;

/// The registry every tool uses: all dialects, passes and pipelines.
pub fn full_registry() -> Arc<Registry> {
    let mut r = Registry::new();
    ipu_dialects::register_all_dialects(&mut r);
    ipu_passes::register_generic_passes(&mut r);
    ipu_lowering::register_lowering_passes(&mut r);
    r.register_pipeline(ipu_ir::pass::PipelineInfo {
        argument: "ipu-cleanup",
        description: "Canonicalize, eliminate common sub-expressions, then erase unreferenced private symbols.",
        pipeline: "builtin.module(canonicalize,cse,symbol-dce)",
    });
    Arc::new(r)
}

/// Keeps freed memory in the process's heap. The compiler makes and drops
/// large short-lived vectors (a phase's exchange events, a stream's runs);
/// with glibc's defaults each is mapped fresh and returned to the kernel, so
/// every phase pays page faults again (about 15% of the MLP's compile).
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any
    // thread is started, with values glibc documents as valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
    }
}

/// Installs the `tracing` subscriber: events to stderr, filtered by `RUST_LOG`.
pub fn init_tracing() {
    init_tracing_default("warn")
}

/// [`init_tracing`] with another filter when `RUST_LOG` is not set.
pub fn init_tracing_default(default_filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none(),
        )
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .try_init();
}
