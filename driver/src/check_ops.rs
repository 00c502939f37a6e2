//! Per-op golden checks (`ipu-run --check-ops`) and the FP8-anchored
//! reference of the numerical verdict.
//!
//! The package's probes (`.ipu.debug`) say where each op's result sits
//! once its step has ended; the run reads them there. The reference
//! interpreter then walks the model in program order, and each op with a
//! probe is evaluated on the *device's* values of its operands and compared
//! with the device's result: an op's row measures that op's own error, not
//! what it inherited. Ops with no probe (views, values only an exchange
//! made) are computed by the reference and say so.

use std::collections::HashMap;

use ipu_ir::context::{Context, Op};
use ipu_ir::diag::loc_key;
use ipu_ir::types::LocKind;
use ipu_package::{ElementType as StreamType, Package};
use ipu_reference::{OpKind, Tensor};

use crate::device;

/// One op's row.
#[derive(Clone, Debug)]
pub struct OpCheck {
    /// Program order, from 1.
    pub index: usize,
    pub op: String,
    /// `file:line:col`, or the ONNX node name with its position.
    pub location: String,
    pub ty: String,
    /// `None`: the device stores no copy of this value (a view, or a value
    /// only an exchange made, or a parameter's cast the host made at load);
    /// the row is the reference's.
    pub observed: Option<Observed>,
    /// The op is an exact widening of an argument that the host does (a
    /// parameter's when it loads the program, an input's as it streams it
    /// in: `ipu_lowering::nn_to_tile::is_load_cast`): no device op
    /// computes it.
    pub at_load: bool,
    /// The op is a result's cast to 8- or 16-bit integers that the host
    /// does as it streams the result out
    /// (`ipu_lowering::nn_to_tile::is_returned_narrowing`).
    pub at_store: bool,
    /// The op is part of a chain the compiler replaced by one op (its
    /// location is in that op's fused location, not its last): the device
    /// never computes it alone.
    pub fused: bool,
}

/// How an observed op's device result compares with the reference's
/// evaluation of that op on the device's operands.
#[derive(Clone, Debug)]
pub struct Observed {
    pub max_abs_error: f64,
    pub max_abs_reference: f64,
    pub tolerance: f64,
    pub failures: usize,
    pub elements: usize,
    /// For a cast to FP8: values beyond the largest finite FP8 value, and
    /// non-zero values that became zero.
    pub fp8: Option<Fp8Counts>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Counts {
    pub saturated: usize,
    pub underflowed: usize,
}

impl Observed {
    pub fn pass(&self) -> bool {
        self.failures == 0
    }
}

/// The device values the run probed, by op location key: each key's probes
/// in package order (an op lowered to several tile ops has several; its
/// result is the last of its type).
pub struct Probed<'a> {
    by_key: HashMap<&'a str, Vec<(&'a ipu_package::Probe, &'a [u8])>>,
    /// Keys of ops folded into a fused op, other than its last.
    fused: std::collections::HashSet<&'a str>,
    /// Per last key of a fused op's chain, the keys before it.
    chains: HashMap<&'a str, Vec<&'a str>>,
}

impl<'a> Probed<'a> {
    pub fn new(pkg: &'a Package, bytes: &'a [Option<Vec<u8>>]) -> Probed<'a> {
        let mut by_key: HashMap<&str, Vec<_>> = HashMap::new();
        let mut fused = std::collections::HashSet::new();
        let mut chains = HashMap::new();
        for (p, b) in pkg.meta.probes.iter().zip(bytes) {
            let keys = fused_keys(&p.source);
            if let Some(keys) = &keys {
                fused.extend(keys.iter().take(keys.len() - 1).copied());
                if let Some((&last, before)) = keys.split_last() {
                    chains.insert(last, before.to_vec());
                }
            }
            if let Some(b) = b {
                by_key
                    .entry(p.source.as_str())
                    .or_default()
                    .push((p, b.as_slice()));
                // An op that replaced a chain (nn-fuse-gelu, composed
                // transposes) fuses the chain's locations in program order:
                // its result is the last op's, so it answers for that op too.
                if let Some(&last) = keys.as_ref().and_then(|k| k.last()) {
                    by_key.entry(last).or_default().push((p, b.as_slice()));
                }
            }
        }
        Probed {
            by_key,
            fused,
            chains,
        }
    }

    /// The keys of the ops before `op` in the chain a fused op computed,
    /// when `op` is that chain's last.
    fn chain_before(&self, key: &str) -> &[&'a str] {
        self.chains.get(key).map_or(&[], |v| v.as_slice())
    }

    /// Whether the op of `key` was folded into a fused op before its chain's last.
    fn is_fused(&self, key: &str) -> bool {
        self.fused.contains(key)
    }

    /// The device's value of the result of `op` (whose key, in the call it
    /// runs in, is `key`: [`instance_key`]) like `reference`, if probed.
    fn value(
        &self,
        cx: &Context,
        op: Op,
        key: &str,
        reference: &Tensor,
    ) -> Result<Option<Tensor>, String> {
        let Some(list) = self.by_key.get(key) else {
            return Ok(None);
        };
        let probe_of = |shape: &[usize]| {
            list.iter().rev().find(|(p, _)| {
                device::reference_type(p.stream.element) == reference.dtype()
                    && p.stream
                        .shape
                        .iter()
                        .map(|&d| d as usize)
                        .eq(shape.iter().copied())
            })
        };
        let read = |(p, bytes): &(&ipu_package::Probe, &[u8]), shape: &[usize]| {
            device::bytes_to_tensor(bytes, shape, p.stream.element, reference.fp8_scale())
                .map_err(|e| format!("probe of {} at {}: {e}", p.op, p.source))
        };
        if let Some(found) = probe_of(reference.shape()) {
            return read(found, reference.shape()).map(Some);
        }
        // A cast the compiler moved before the layout views it read
        // (canonicalize's cast-before-view) is probed at the views' input
        // shape: its value here is those views of it.
        let views = views_before(cx, op);
        let Some(&root) = views.last() else {
            return Ok(None);
        };
        let shape: Vec<usize> = cx
            .value_shape(cx.operand(root, 0))
            .iter()
            .map(|&d| d.max(0) as usize)
            .collect();
        let Some(found) = probe_of(&shape) else {
            return Ok(None);
        };
        let mut t = read(found, &shape)?;
        for &view in views.iter().rev() {
            let kind = ipu_dialects::nn::op_kind(cx, view)?;
            t = ipu_reference::eval::evaluate(&kind, &[&t]).map_err(|e| e.to_string())?;
        }
        Ok(Some(t))
    }
}

/// The key of `op` as it runs inside the calls `path` (outermost first):
/// the key its probes carry ([`ipu_ir::diag::key_in_call`]; the machine
/// stage gives a callee's probes the key of each call it expands).
pub fn instance_key(cx: &Context, path: &[Op], op: Op) -> String {
    let mut key = loc_key(cx, cx.op_loc(op));
    for &call in path.iter().rev() {
        key = ipu_ir::diag::key_in_call(&key, &loc_key(cx, cx.op_loc(call)));
    }
    key
}

/// [`location`] of `op` inside the calls `path`, each call's after it.
pub fn instance_location(cx: &Context, path: &[Op], op: Op) -> String {
    let mut s = location(cx, op);
    for &call in path.iter().rev() {
        s = format!("{s} at {}", location(cx, call));
    }
    s
}

/// The casts to FP8 of computed values ([`is_anchored_cast`]) that run in
/// `f`, each once per call of the function it is in.
pub fn anchored_casts(cx: &Context, f: Op) -> usize {
    fn go(cx: &Context, f: Op, depth: usize) -> usize {
        let Some(entry) = cx.entry_block(cx.region(f, 0)) else {
            return 0;
        };
        cx.block_ops(entry)
            .map(|op| {
                if is_anchored_cast(cx, op) {
                    return 1;
                }
                let callee = ipu_dialects::func::Call::cast(cx, op).and_then(|c| {
                    let name = cx.str(c.callee(cx));
                    cx.nearest_symbol_table(op)
                        .and_then(|t| cx.lookup_symbol(t, name))
                });
                match callee {
                    Some(g) if depth < 64 && cx.num_regions(g) > 0 => go(cx, g, depth + 1),
                    _ => 0,
                }
            })
            .sum()
    }
    go(cx, f, 0)
}

/// The layout views (`nn.reshape`, `nn.transpose`) a cast `op` reads
/// through, nearest first, when it is a cast of such a chain that only the
/// cast reads.
fn views_before(cx: &Context, op: Op) -> Vec<Op> {
    let mut out = Vec::new();
    if !cx.is(op, "nn.cast") {
        return out;
    }
    let mut v = cx.operand(op, 0);
    while let Some(d) = cx
        .defining_op(v)
        .filter(|&d| cx.is(d, "nn.reshape") || cx.is(d, "nn.transpose"))
    {
        if cx.uses(v).len() != 1 || cx.operands(d).len() != 1 {
            break;
        }
        out.push(d);
        v = cx.operand(d, 0);
    }
    out
}

/// The locations of a fused location key (`fused[a, b]` gives `a`, `b`),
/// when none is itself fused.
fn fused_keys(key: &str) -> Option<Vec<&str>> {
    let keys = ipu_ir::diag::fused_key_parts(key)?;
    (!keys.iter().any(|k| k.is_empty() || k.contains('['))).then_some(keys)
}

/// Where `op` is in the source: `file:line:col` (a name location shows its
/// name first).
pub fn location(cx: &Context, op: Op) -> String {
    fn go(cx: &Context, l: ipu_ir::Loc) -> String {
        match cx.loc_kind(l) {
            LocKind::FileLineCol { file, line, col } => {
                format!("{}:{line}:{col}", cx.str(*file))
            }
            LocKind::Name { name, child } => match cx.loc_kind(*child) {
                LocKind::Unknown => cx.str(*name).to_string(),
                _ => format!("{} ({})", cx.str(*name), go(cx, *child)),
            },
            _ => loc_key(cx, l),
        }
    }
    go(cx, cx.op_loc(op))
}

fn is_fp8(t: &Tensor) -> bool {
    t.dtype().fp8_format().is_some()
}

/// Counts, for a cast of `input` to FP8 `result` (scale and saturation of
/// the cast), the values that saturated and those that underflowed to zero.
fn fp8_counts(input: &Tensor, result: &Tensor) -> Option<Fp8Counts> {
    let format = result.dtype().fp8_format()?;
    let max = f64::from(format.max_finite()) * 2f64.powi(result.fp8_scale());
    let x = input.to_f32_vec();
    let y = result.to_f32_vec();
    let mut c = Fp8Counts {
        saturated: 0,
        underflowed: 0,
    };
    for (&a, &b) in x.iter().zip(&y) {
        if a.is_finite() && f64::from(a).abs() > max {
            c.saturated += 1;
        } else if a != 0.0 && b == 0.0 {
            c.underflowed += 1;
        }
    }
    Some(c)
}

/// Exact comparison (casts to FP8 round the same input the same way on both
/// sides); NaN meets NaN.
fn compare_exact(device: &Tensor, reference: &Tensor) -> device::Comparison {
    let d = device.to_f32_vec();
    let r = reference.to_f32_vec();
    let mut c = device::Comparison {
        max_abs_error: 0.0,
        max_abs_reference: r
            .iter()
            .filter(|x| x.is_finite())
            .fold(0f64, |a, &x| a.max(f64::from(x).abs())),
        tolerance: 0.0,
        failures: Vec::new(),
        failure_count: 0,
    };
    for (i, (&x, &y)) in d.iter().zip(&r).enumerate() {
        let same = x == y || (x.is_nan() && y.is_nan());
        if !same {
            let e = f64::from((x - y).abs());
            c.max_abs_error = c
                .max_abs_error
                .max(if e.is_nan() { f64::INFINITY } else { e });
            c.failure_count += 1;
            if c.failures.len() < 8 {
                c.failures.push((i, f64::from(x), f64::from(y)));
            }
        }
    }
    c
}

fn stream_type(t: &Tensor) -> Option<StreamType> {
    device::stream_type(t.dtype())
}

/// The cast kind of `op`, when it is an `nn.cast`.
fn cast_kind(cx: &Context, op: Op) -> Option<OpKind> {
    if !cx.is(op, "nn.cast") {
        return None;
    }
    ipu_dialects::nn::op_kind(cx, op).ok()
}

/// Checks every op of `f` (program order) on `inputs`: probed ops on the
/// device's operand values against the device's result. Also returns the
/// function's results as this walk computed them (the device's values where
/// probed, the reference's on them elsewhere).
pub fn check_ops(
    cx: &Context,
    f: Op,
    inputs: &[Tensor],
    probed: &Probed<'_>,
) -> Result<(Vec<OpCheck>, Vec<Tensor>), String> {
    let mut rows = Vec::new();
    let mut failure: Option<String> = None;
    // The result type of every op so far, by location key: a fused chain's
    // value is compared at the tolerance of the narrowest float it went
    // through (its earlier results are the reference's, not the device's,
    // which rounded them to their types), as a model output is.
    let mut types: HashMap<String, StreamType> = HashMap::new();
    let mut observe = |path: &[Op], op: Op, operands: &[&Tensor], results: Vec<Tensor>| {
        if cx.is(op, "nn.constant") || cx.is(op, "func.call") {
            return Ok(results);
        }
        let key = instance_key(cx, path, op);
        if let Some(t) = results.first().and_then(stream_type) {
            types.entry(key.clone()).or_insert(t);
        }
        let precision = probed
            .chain_before(&key)
            .iter()
            .filter_map(|k| types.get(*k).copied())
            .fold(None, |p: Option<StreamType>, t| {
                Some(p.map_or(t, |p| device::compared_type(p, Some(t))))
            });
        let mut out = Vec::with_capacity(results.len());
        for r in results {
            let device = match probed.value(cx, op, &key, &r) {
                Ok(d) => d,
                Err(e) => {
                    failure.get_or_insert(e);
                    None
                }
            };
            let observed = device.as_ref().map(|d| {
                let fp8_cast = is_fp8(&r) && cast_kind(cx, op).is_some();
                // A cast to FP8 rounds the device's own input as the
                // reference does: exact. At the end of a fused chain its
                // input is the reference's, and a value at a rounding
                // boundary may fall either side: FP8's tolerance then.
                let c = if (fp8_cast && precision.is_none()) || stream_type(&r).is_none() {
                    compare_exact(d, &r)
                } else {
                    let e = stream_type(&r).expect("checked");
                    device::compare(d, &r, device::compared_type(e, precision))
                };
                Observed {
                    max_abs_error: c.max_abs_error,
                    max_abs_reference: c.max_abs_reference,
                    tolerance: c.tolerance,
                    failures: c.failure_count,
                    elements: r.numel(),
                    fp8: if fp8_cast {
                        operands.first().and_then(|x| fp8_counts(x, d))
                    } else {
                        None
                    },
                }
            });
            rows.push(OpCheck {
                index: rows.len() + 1,
                op: cx.name_str(op).to_string(),
                location: instance_location(cx, path, op),
                ty: r.ty().to_string(),
                at_load: observed.is_none() && {
                    // The function the op is in: `f`, or a callee.
                    let g = cx.parent_op(op).unwrap_or(f);
                    ipu_lowering::nn_to_tile::is_load_cast(cx, g, op)
                },
                at_store: observed.is_none()
                    && ipu_lowering::nn_to_tile::is_returned_narrowing(cx, op),
                fused: observed.is_none() && probed.is_fused(&key),
                observed,
            });
            // Later ops see what the device computed.
            out.push(device.unwrap_or(r));
        }
        Ok(out)
    };
    let outputs = ipu_dialects::interpret::interpret_observed_in_calls(cx, f, inputs, &mut observe)
        .map_err(|d| d.message.clone())?;
    match failure {
        Some(e) => Err(e),
        None => Ok((rows, outputs)),
    }
}

/// Whether `op` is an `nn.cast` to FP8 of a computed value (not an
/// argument or a constant): a cast the numerical verdict anchors.
pub fn is_anchored_cast(cx: &Context, op: Op) -> bool {
    cx.is(op, "nn.cast")
        && cx.results(op).next().is_some_and(|r| {
            let t = cx.value_type(r);
            let e = cx.tensor_parts(t).map(|(_, e)| e).unwrap_or(t);
            matches!(
                cx.type_kind(e),
                ipu_ir::TypeKind::F8E4M3FN | ipu_ir::TypeKind::F8E5M2
            )
        })
        && cx
            .operands(op)
            .first()
            .and_then(|&v| cx.defining_op(v))
            .is_some_and(|d| !cx.is(d, "nn.constant"))
}

/// The reference with every cast to FP8 of a computed value taking the
/// device's FP8 result, where the per-op check found that cast exact on
/// the device's own input (`exact_casts`: their locations). A value near a
/// rounding boundary of FP8 falls either side after tiny differences
/// upstream, and the FP8 step (1/16 of the value for E4M3) then dwarfs
/// every other error; anchored, each side's error is its own arithmetic.
/// Returns the outputs and the number of casts anchored.
pub fn anchored_reference(
    cx: &Context,
    f: Op,
    inputs: &[Tensor],
    probed: &Probed<'_>,
    exact_casts: &std::collections::HashSet<String>,
) -> Result<(Vec<Tensor>, usize), String> {
    let mut anchored = 0;
    let mut observe = |path: &[Op], op: Op, _: &[&Tensor], results: Vec<Tensor>| {
        if results.len() == 1
            && is_anchored_cast(cx, op)
            && exact_casts.contains(&instance_location(cx, path, op))
        {
            let key = instance_key(cx, path, op);
            if let Ok(Some(d)) = probed.value(cx, op, &key, &results[0]) {
                anchored += 1;
                return Ok(vec![d]);
            }
        }
        Ok(results)
    };
    let out = ipu_dialects::interpret::interpret_observed_in_calls(cx, f, inputs, &mut observe)
        .map_err(|d| d.message.clone())?;
    Ok((out, anchored))
}

/// The table, one line per op, then a summary naming the first op outside
/// its tolerance.
pub fn render(rows: &[OpCheck]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let loc_w = rows
        .iter()
        .map(|r| r.location.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let op_w = rows.iter().map(|r| r.op.len()).max().unwrap_or(2).max(2);
    let ty_w = rows.iter().map(|r| r.ty.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(
        s,
        "{:>3}  {:op_w$}  {:loc_w$}  {:ty_w$}  {:>10}  {:>10}  {:>10}  verdict",
        "#", "op", "location", "type", "max|err|", "err/max|r|", "tolerance"
    );
    for r in rows {
        let _ = write!(
            s,
            "{:>3}  {:op_w$}  {:loc_w$}  {:ty_w$}  ",
            r.index, r.op, r.location, r.ty
        );
        match &r.observed {
            None if r.at_load => {
                let _ = writeln!(
                    s,
                    "{:>10}  {:>10}  {:>10}  widened exactly by the host (a parameter at load, an input as it streams in): reference value used",
                    "-", "-", "-"
                );
            }
            None if r.at_store => {
                let _ = writeln!(
                    s,
                    "{:>10}  {:>10}  {:>10}  narrowed by the host as the result streams out (each element checked): reference value used",
                    "-", "-", "-"
                );
            }
            None if r.fused => {
                let _ = writeln!(
                    s,
                    "{:>10}  {:>10}  {:>10}  fused into a later op (one device op computes the chain): reference value used",
                    "-", "-", "-"
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "{:>10}  {:>10}  {:>10}  not stored on the device (a view or an exchange's result): reference value used",
                    "-", "-", "-"
                );
            }
            Some(o) => {
                let rel = if o.max_abs_reference > 0.0 {
                    o.max_abs_error / o.max_abs_reference
                } else {
                    o.max_abs_error
                };
                let _ = write!(
                    s,
                    "{:>10.3e}  {:>10.3e}  {:>10.3e}  {}",
                    o.max_abs_error,
                    rel,
                    o.tolerance,
                    if o.pass() {
                        "ok".to_string()
                    } else {
                        format!("FAIL ({} of {} elements)", o.failures, o.elements)
                    }
                );
                if let Some(c) = o.fp8 {
                    let _ = write!(
                        s,
                        "  saturated={} underflowedToZero={}",
                        c.saturated, c.underflowed
                    );
                }
                s.push('\n');
            }
        }
    }
    let observed = rows.iter().filter(|r| r.observed.is_some()).count();
    let at_load = rows.iter().filter(|r| r.at_load || r.at_store).count();
    let loaded = if at_load > 0 {
        format!(", {at_load} of them converted by the host")
    } else {
        String::new()
    };
    let fused = rows.iter().filter(|r| r.fused).count();
    let fused = if fused > 0 {
        format!(", {fused} of them fused into a later op")
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "checked {observed} of {} ops on the device's values ({} not stored{loaded}{fused})",
        rows.len(),
        rows.len() - observed
    );
    match first_failure(rows) {
        Some(r) => {
            let o = r.observed.as_ref().expect("failures are observed");
            let _ = writeln!(
                s,
                "first op outside its tolerance: {} at {} ({}): largest error {:e} > tolerance {:e}",
                r.op, r.location, r.ty, o.max_abs_error, o.tolerance
            );
        }
        None => {
            let _ = writeln!(s, "every checked op is within its tolerance");
        }
    }
    s
}

/// The first row outside its tolerance, in program order.
pub fn first_failure(rows: &[OpCheck]) -> Option<&OpCheck> {
    rows.iter()
        .find(|r| r.observed.as_ref().is_some_and(|o| !o.pass()))
}
