//! The `paths` fuzz target's checks: the rules that keep a model's names
//! and references inside the folders the user gave (issue 32), on any
//! input. The first byte picks the surface, the rest is its input:
//!
//! - 0: result names (one a line): names `check_result_names` accepts as
//!   file names give `DIR/<name>.npy` files directly inside `DIR`, pairwise
//!   distinct also ignoring case;
//! - 1: a weights reference: one `is_contained` accepts stays inside its
//!   folder after lexical resolution;
//! - 2: an IR path and a weights path (`ir\nweights`): `weights_reference`
//!   without `--allow-external-weights` only gives contained references;
//! - 3: IR text whose module may name weights: `read_weights` from an empty
//!   folder refuses or reads, never panics, and never reads outside it.

use std::path::{Component, Path};

pub fn check(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match mode % 4 {
        0 => result_names(&text),
        1 => reference(&text),
        2 => {
            let (ir, w) = text.split_once('\n').unwrap_or((&text, "w.bin"));
            if let Ok(r) = ipu_driver::load::weights_reference(ir, w, false) {
                assert!(ipu_driver::load::is_contained(&r), "{ir:?} {w:?} -> {r:?}");
            }
        }
        _ => ir_weights(&text),
    }
}

fn result_names(text: &str) {
    let names: Vec<String> = text.split('\n').map(str::to_string).collect();
    if ipu_driver::names::check_result_names(&names, true).is_some() {
        return;
    }
    let dir = Path::new("/out");
    let mut seen = std::collections::HashSet::new();
    for n in &names {
        let file = dir.join(format!("{n}.npy"));
        assert_eq!(file.parent(), Some(dir), "{n:?} leaves the folder");
        assert!(
            matches!(file.components().next_back(), Some(Component::Normal(_))),
            "{n:?}"
        );
        assert!(seen.insert(n.to_lowercase()), "{n:?} collides");
    }
}

fn reference(text: &str) {
    if !ipu_driver::load::is_contained(text) {
        return;
    }
    let mut depth = 0i64;
    for c in Path::new(text).components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            other => panic!("{text:?} accepted with {other:?}"),
        }
    }
    assert!(depth >= 1, "{text:?} names no file");
}

fn ir_weights(text: &str) {
    let mut cx = ipu_ir::Context::new(crate::registry());
    let Ok(m) = ipu_ir::parser::parse_source(&mut cx, "fuzz.mlir", text) else {
        return;
    };
    // An empty folder: any reference that resolves outside it would have
    // to be refused before it is read.
    let base = std::env::temp_dir().join(format!("ipu-fuzz-paths-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&base);
    let file = cx
        .get_str_attr(m, ipu_driver::load::WEIGHTS_ATTR)
        .map(str::to_string);
    if let Ok(true) = ipu_driver::load::read_weights(&mut cx, m, &base, false) {
        let f = file.unwrap_or_default();
        assert!(ipu_driver::load::is_contained(&f), "read {f:?}");
    }
}

#[cfg(test)]
mod tests {
    /// Every committed seed passes the checks (and so would a fuzz run
    /// that starts from them).
    #[test]
    fn the_seeds_pass() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/paths");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            super::check(&std::fs::read(e.unwrap().path()).unwrap());
            n += 1;
        }
        assert!(n >= 10);
    }
}
