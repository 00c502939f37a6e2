//! `--weights-precision`: the element type the matmul weights of an
//! imported model are held in.
//!
//! With [`WeightsPrecision::F8E4M3FN`] every f32 constant of rank 2 or
//! more that is the right-hand operand of a matmul with an f32 or f16 left
//! operand (an ONNX `MatMul` initializer, or `Gemm`'s B once its transpose
//! is folded) is read through a saturating cast to `f8E4M3FN` at a
//! per-tensor power-of-two scale, the form the compiler gives an FP8 value
//! its scale in (`nn.cast {saturate, scale = s}`; the logical value is code
//! x 2^s). The matmul becomes f16 x f8E4M3FN -> f16, the mixed form
//! `nn.matmul` documents (f16 activations, FP8 weights) and the device
//! lowers: an f32 left operand is cast to f16 before it and the result
//! cast back to its type after it, so the rest of the graph is unchanged.
//! Every other constant (biases, layer-norm parameters, embedding tables
//! read by gathers, a constant left operand) stays as it was.

use super::{MappedGraph, MappedNode, ValueInfo};
use ipu_reference::{ElementType, Fp8Format, OpKind, TensorType};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// The precision matmul weights are imported in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WeightsPrecision {
    /// As the model gives them (the default).
    #[default]
    F32,
    /// OCP FP8 E4M3FN with a per-tensor power-of-two scale.
    F8E4M3FN,
}

/// The names `--weights-precision` accepts, in order.
pub const WEIGHTS_PRECISIONS: &[&str] = &["f32", "f8E4M3FN"];

impl FromStr for WeightsPrecision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" => Ok(WeightsPrecision::F32),
            "f8E4M3FN" => Ok(WeightsPrecision::F8E4M3FN),
            _ => Err(format!(
                "unknown weights precision '{s}'; accepted: {} (default f32)",
                WEIGHTS_PRECISIONS.join(", ")
            )),
        }
    }
}

impl fmt::Display for WeightsPrecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WeightsPrecision::F32 => "f32",
            WeightsPrecision::F8E4M3FN => "f8E4M3FN",
        })
    }
}

/// The per-tensor scale s for holding `values` in FP8 `format`: the
/// smallest power of two 2^s with max|w| x 2^-s at most the format's largest
/// finite value (448 for E4M3FN), so the largest magnitude lands in
/// (max/2, max] and none saturates; 0 for a tensor without a finite nonzero
/// value.
pub fn fp8_weight_scale(values: &[f32], format: Fp8Format) -> i32 {
    let amax = values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, &v| m.max(f64::from(v.abs())));
    if amax == 0.0 {
        return 0;
    }
    let top = f64::from(format.max_finite());
    // amax / top is in f64's normal range for any f32 amax; powers of two
    // scale exactly, so these comparisons are exact.
    let mut s = (amax / top).log2().ceil() as i32;
    while amax * 2f64.powi(-s) > top {
        s += 1;
    }
    while amax * 2f64.powi(-(s - 1)) <= top {
        s -= 1;
    }
    s
}

/// Rewrites `g` so its matmul weights are read in precision `p` (see the
/// module comment). Returns how many weights it converted.
pub fn convert_weights(g: &mut MappedGraph, p: WeightsPrecision) -> usize {
    let to = match p {
        WeightsPrecision::F32 => return 0,
        WeightsPrecision::F8E4M3FN => ElementType::F8E4M3FN,
    };
    let format = to.fp8_format().expect("an FP8 type");
    // The f32 constants of rank 2 or more, by value.
    let mut weight = vec![false; g.values.len()];
    for n in &g.nodes {
        if let OpKind::Constant(t) = &n.op {
            weight[n.outputs[0]] = t.dtype() == ElementType::F32 && t.rank() >= 2;
        }
    }
    // The matmuls to convert: a weight on the right, f32 or f16 on the left.
    let dtype = |g: &MappedGraph, v: usize| g.values[v].ty.dtype;
    let converts = |g: &MappedGraph, n: &MappedNode| {
        matches!(n.op, OpKind::MatMul)
            && n.inputs.len() == 2
            && weight[n.inputs[1]]
            && matches!(dtype(g, n.inputs[0]), ElementType::F32 | ElementType::F16)
    };
    let mut read = vec![false; g.values.len()];
    for n in g.nodes.iter().filter(|n| converts(g, n)) {
        read[n.inputs[1]] = true;
    }
    let new_value = |g: &mut MappedGraph, like: usize, suffix: &str, ty: ElementType| {
        let v = &g.values[like];
        let info = ValueInfo {
            name: format!("{}_{suffix}", v.name),
            ty: TensorType::new(v.ty.shape.clone(), ty),
        };
        g.values.push(info);
        g.values.len() - 1
    };
    let cast = |to, scale, input, output, name: &str| MappedNode {
        op: OpKind::Cast {
            to,
            saturate: to == ElementType::F8E4M3FN,
            scale,
        },
        inputs: vec![input],
        outputs: vec![output],
        name: name.to_string(),
    };
    let mut cast_of: HashMap<usize, usize> = HashMap::new();
    let nodes = std::mem::take(&mut g.nodes);
    let mut out = Vec::with_capacity(nodes.len());
    for mut n in nodes {
        if let (OpKind::Constant(t), true) = (&n.op, read[n.outputs[0]]) {
            // One cast per weight, right after it, shared by its matmuls.
            let scale = fp8_weight_scale(&t.to_f32_vec(), format);
            let w = n.outputs[0];
            let id = new_value(g, w, &p.to_string(), to);
            cast_of.insert(w, id);
            let name = n.name.clone();
            out.push(n);
            out.push(cast(to, scale, w, id, &name));
            continue;
        }
        if !converts(g, &n) {
            out.push(n);
            continue;
        }
        // f16 x f8E4M3FN -> f16, as nn.matmul takes mixed operands; the
        // result cast back to its type for the rest of the graph.
        let (x, y) = (n.inputs[0], n.outputs[0]);
        if dtype(g, x) != ElementType::F16 {
            let x16 = new_value(g, x, "f16", ElementType::F16);
            out.push(cast(ElementType::F16, 0, x, x16, &n.name));
            n.inputs[0] = x16;
        }
        n.inputs[1] = cast_of[&n.inputs[1]];
        let result = dtype(g, y);
        if result == ElementType::F16 {
            out.push(n);
            continue;
        }
        let y16 = new_value(g, y, "f16", ElementType::F16);
        n.outputs[0] = y16;
        let name = n.name.clone();
        out.push(n);
        out.push(cast(result, 0, y16, y, &name));
    }
    g.nodes = out;
    cast_of.len()
}
