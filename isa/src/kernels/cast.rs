//! `cast.S`: n elements from one type to another, FP8 at a power-of-two
//! scale; one record per worker.

use super::*;

impl KernelSpec {
    /// n elements from one type to another.
    pub fn cast(from: ElemType, to: ElemType, n: usize) -> KernelSpec {
        KernelSpec {
            source: "cast",
            entry: "cast",
            params: params_of(&[("FROM", from as i64), ("TO", to as i64), ("N", n as i64)]),
        }
    }
}

/// `cast.S`'s element bytes of a FROM / TO code (0 f32, 1 f16, 2 bf16,
/// 3 f8E4M3FN, 4 f8E5M2, 5 i32, 6 i64).
fn cast_elem_bytes(code: i64) -> u64 {
    match code {
        0 | 5 => 4,
        1 | 2 => 2,
        3 | 4 => 1,
        _ => 8,
    }
}

/// `cast.S`'s group: the elements one loop turn converts (8 when either
/// side is FP8, 2 from integers and for f32 -> f32, else 4).
pub fn cast_group(from: i64, to: i64) -> u64 {
    let fp8 = |c: i64| (3..=4).contains(&c);
    if fp8(from) || fp8(to) {
        8
    } else if from >= 5 || (from == 0 && to == 0) {
        2
    } else {
        4
    }
}

/// The words of each worker's record of `cast.S` (FROM `from`, TO `to`,
/// N `n`): the byte offsets of its first input and output group from the
/// call's input and output (0 for a worker without groups, which reads
/// nothing), and its groups.
pub fn cast_parts(from: i64, to: i64, n: u64) -> [(u64, u64, u32); 6] {
    let g = cast_group(from, to);
    let (ib, ob) = (cast_elem_bytes(from), cast_elem_bytes(to));
    worker_shares(n.div_ceil(g))
        .map(|(first, count)| (first * g * ib, first * g * ob, count as u32))
}

/// A `cast.S` state of absolute addresses (a test's or a tool's call):
/// per worker its input, output, groups, scale and output scale.
pub fn cast_state(
    from: i64,
    to: i64,
    n: u64,
    input: u32,
    out: u32,
    scale: i32,
    out_scale: i32,
) -> Vec<u32> {
    cast_parts(from, to, n)
        .iter()
        .flat_map(|&(i, o, c)| {
            [
                input + i as u32,
                out + o as u32,
                c,
                scale as u32,
                out_scale as u32,
            ]
        })
        .collect()
}

/// `cast_<from>_<to>[_nosat]_n<N>`.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    let sat = if params.get("SAT") == Some(&0) {
        "_nosat"
    } else {
        ""
    };
    format!(
        "cast_{}_{}{sat}_n{}",
        elem_name(p("FROM")),
        elem_name(p("TO")),
        p("N")
    )
}

/// Per worker: its input, output, groups and the scales (the FP8 side's;
/// FP8 -> FP8 also the output's).
fn record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Value as V, Zero as Z};
    let fp8 = |t: i64| (3..=4).contains(&t);
    let (from, to) = (fp8(spec.param("FROM")), fp8(spec.param("TO")));
    let scale = if from || to { V } else { Z };
    Ok((
        [A, A, V, scale, if from && to { V } else { Z }].repeat(6),
        0,
    ))
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
