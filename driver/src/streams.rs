//! Matching a model's inputs and results with a package's host streams, as
//! both `ipu-run` ([`crate::run`]) and the library API ([`crate::api`]) do
//! before a device run. Notes (how streams were matched, inputs left unsent)
//! are collected in a vector: the tool prints them, the API returns them.

use crate::device;
use ipu_package::{Direction, HostStream, Package};
use ipu_reference::{Tensor, TensorType};
use std::collections::BTreeMap;

/// The package's streams of direction `dir` for `names`: by name, or in
/// order when no name matches and the counts agree (said in `notes`).
pub(crate) fn match_streams<'p>(
    names: &[String],
    pkg: &'p Package,
    dir: Direction,
    notes: &mut Vec<String>,
) -> Vec<Option<&'p HostStream>> {
    let streams: Vec<&HostStream> = pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction == dir || (dir.to_device() && s.direction.to_device()))
        .collect();
    let by_name: Vec<Option<&HostStream>> = names
        .iter()
        .map(|n| streams.iter().copied().find(|s| &s.name == n))
        .collect();
    if by_name.iter().all(Option::is_none) && !names.is_empty() && streams.len() == names.len() {
        notes.push(format!(
            "note: no {dir} stream is named like the model's values: matching them in order"
        ));
        return streams.into_iter().map(Some).collect();
    }
    by_name
}

/// Whether stream `s` carries a tensor of type `t` (same shape, and the
/// reference type of its host type).
fn stream_fits(s: &HostStream, t: &TensorType) -> bool {
    s.shape
        .iter()
        .map(|&d| d as usize)
        .eq(t.shape.iter().copied())
        && device::reference_type(s.host_type()) == t.dtype
}

/// The inputs as the bytes of their streams, by stream name, checked
/// against the streams' types; every input stream of the package must be fed.
pub(crate) fn input_bytes(
    pkg: &Package,
    inputs: &[(String, Tensor)],
    notes: &mut Vec<String>,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let names: Vec<String> = inputs.iter().map(|(n, _)| n.clone()).collect();
    let streams = match_streams(&names, pkg, Direction::Input, notes);
    let mut bytes = BTreeMap::new();
    for ((name, tensor), s) in inputs.iter().zip(&streams) {
        let Some(s) = s else {
            notes.push(format!(
                "note: input '{name}' has no stream in the package: not sent"
            ));
            continue;
        };
        if !stream_fits(s, &tensor.ty()) {
            return Err(format!(
                "input '{name}' is {}, but its stream `{}` is {}",
                tensor.ty(),
                s.name,
                s.type_string()
            ));
        }
        bytes.insert(
            s.name.clone(),
            device::tensor_to_bytes(tensor, s.host_type())?,
        );
    }
    if let Some(s) = pkg
        .meta
        .streams
        .iter()
        .find(|s| s.direction.to_device() && !bytes.contains_key(&s.name))
    {
        return Err(format!(
            "input stream `{}` matches no input of the model",
            s.name
        ));
    }
    Ok(bytes)
}

/// The output stream of each result (`names`, `results`), checked against
/// its type.
pub(crate) fn output_streams<'p>(
    pkg: &'p Package,
    names: &[String],
    results: &[Tensor],
    notes: &mut Vec<String>,
) -> Result<Vec<&'p HostStream>, String> {
    let streams = match_streams(names, pkg, Direction::Output, notes);
    let mut found = Vec::with_capacity(streams.len());
    for ((name, t), s) in names.iter().zip(results).zip(streams) {
        match s {
            None => {
                return Err(format!(
                    "the package has no output stream for result '{name}'"
                ))
            }
            Some(s) if !stream_fits(s, &t.ty()) => {
                return Err(format!(
                    "result '{name}' is {}, but its stream `{}` is {}",
                    t.ty(),
                    s.name,
                    s.type_string()
                ))
            }
            Some(s) => found.push(s),
        }
    }
    Ok(found)
}

/// The package's entry point: `main`, or its only one.
pub(crate) fn entry_point(pkg: &Package) -> Result<String, String> {
    if pkg.meta.entry_points.iter().any(|e| e.name == "main") {
        return Ok("main".to_string());
    }
    match pkg.meta.entry_points.as_slice() {
        [only] => Ok(only.name.clone()),
        _ => Err("the package has no entry point `main`".into()),
    }
}
