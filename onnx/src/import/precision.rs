//! `--weights-precision`: the element type the matmul weights of an
//! imported model are held in.
//!
//! With [`WeightsPrecision::F8E4M3FN`] every f32 constant that is the
//! right-hand operand of a matmul (an ONNX `MatMul` initializer, or `Gemm`'s
//! B once its transpose is folded) is read through a saturating cast to
//! `f8E4M3FN` at a per-tensor power-of-two scale, the form the compiler
//! gives an FP8 value its scale in (`nn.cast {saturate, scale = s}`; the
//! logical value is code x 2^s). The matmul keeps its f32 left operand and
//! result (`nn.matmul` of f32 and f8E4M3FN gives f32). Every other constant
//! (biases, layer-norm parameters, embedding tables read by gathers, a
//! constant left operand) stays as it was.

use super::{MappedGraph, MappedNode, ValueInfo};
use ipu_reference::{ElementType, Fp8Format, OpKind, TensorType};
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
    // The constant each value comes from, by node index.
    let mut constant_node = vec![None; g.values.len()];
    for (i, n) in g.nodes.iter().enumerate() {
        if let OpKind::Constant(t) = &n.op {
            constant_node[n.outputs[0]] = Some((i, t.dtype() == ElementType::F32 && t.rank() >= 2));
        }
    }
    // One cast per weight, shared by the matmuls reading it; inserted
    // right after the constant.
    let mut cast_of: Vec<Option<usize>> = vec![None; g.values.len()];
    let mut inserts: Vec<(usize, MappedNode)> = Vec::new();
    let mut converted = 0;
    for k in 0..g.nodes.len() {
        if !matches!(g.nodes[k].op, OpKind::MatMul) || g.nodes[k].inputs.len() != 2 {
            continue;
        }
        let w = g.nodes[k].inputs[1];
        let Some((ci, true)) = constant_node[w] else {
            continue;
        };
        let cast = match cast_of[w] {
            Some(c) => c,
            None => {
                let OpKind::Constant(t) = &g.nodes[ci].op else {
                    continue;
                };
                let scale = fp8_weight_scale(&t.to_f32_vec(), format);
                let name = format!("{}_{}", g.values[w].name, p);
                let id = g.values.len();
                g.values.push(ValueInfo {
                    name,
                    ty: TensorType::new(t.shape().to_vec(), to),
                });
                cast_of.push(None);
                constant_node.push(None);
                cast_of[w] = Some(id);
                inserts.push((
                    ci,
                    MappedNode {
                        op: OpKind::Cast {
                            to,
                            saturate: true,
                            scale,
                        },
                        inputs: vec![w],
                        outputs: vec![id],
                        name: g.nodes[ci].name.clone(),
                    },
                ));
                converted += 1;
                id
            }
        };
        g.nodes[k].inputs[1] = cast;
    }
    // Insert from the back so earlier indices stay valid.
    inserts.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    for (at, node) in inserts {
        g.nodes.insert(at + 1, node);
    }
    converted
}
