//! The state record of every library kernel, declared once: each
//! constructor builds the call of one kernel source with its record laid
//! out as the source's header documents (`# State ($m0): ...`), and checks
//! the record against the specialisation's parameters (a binary op has its
//! second input, a unary op has none, FP8 casts carry their scale).

use crate::{Call, Kernel, Word};

// The layouts and prologues are the ISA's declarations; lowering builds
// and checks records against them.
pub use ipu_isa::kernels::{
    prologue, prologue_cycles, prologue_splits, record_layout, Prologue, Slot,
};

/// Checks a call's record (and its zero bytes after) against
/// [`record_layout`]: the word count, an address where the kernel reads or
/// writes a buffer, 0 where it reads nothing.
pub fn check_record(spec: &KernelSpec, record: &[Word], scratch: usize) -> Result<(), String> {
    let (layout, want_scratch) = record_layout(spec)?;
    if record.len() != layout.len() {
        return Err(format!(
            "has {} record words, but {} takes {}",
            record.len(),
            spec.name(),
            layout.len()
        ));
    }
    for (i, (w, slot)) in record.iter().zip(&layout).enumerate() {
        let ok = matches!(
            (slot, w),
            (Slot::Addr | Slot::Wide, Word::Buf(..))
                | (Slot::Zero, Word::Val(0))
                | (Slot::Value, Word::Val(_))
        );
        if !ok {
            let want = match slot {
                Slot::Addr | Slot::Wide => "a buffer address",
                Slot::Zero => "0 (unused)",
                Slot::Value => "a value",
            };
            return Err(format!(
                "record word {i} (+{}) must be {want} for {}",
                4 * i,
                spec.name()
            ));
        }
    }
    if scratch != want_scratch {
        return Err(format!(
            "has {scratch} scratch bytes after its record, but {} takes {want_scratch}",
            spec.name()
        ));
    }
    Ok(())
}
use ipu_isa::kernels::{KernelSpec, LocalCopy, RecordWord, RowOp, GEMM_WORKER_RECORD_BYTES};

/// Word `w` moved on by `off` bytes when it is a buffer address (a
/// worker's part of the call's buffer).
fn offset(w: Word, off: u64) -> Word {
    match w {
        Word::Buf(b, o) => Word::Buf(b, o + off as u32),
        v => v,
    }
}

fn call(spec: &KernelSpec, source: &str, record: Vec<Word>, scratch: usize) -> Call {
    assert_eq!(
        spec.source, source,
        "a {source} record for a {} kernel",
        spec.source
    );
    if let Err(e) = check_record(spec, &record, scratch) {
        panic!("{}: {e}", spec.name());
    }
    Call {
        kernel: Kernel::Lib(std::sync::Arc::new(spec.clone())),
        record,
        scratch,
    }
}

/// `elementwise.S`: +0 in0, +4 in1 (binary ops), +8 out.
pub fn elementwise(spec: &KernelSpec, in0: Word, in1: Option<Word>, out: Word) -> Call {
    let binary = spec.param("OP") < 16;
    assert_eq!(
        binary,
        in1.is_some(),
        "elementwise OP {} operands",
        spec.param("OP")
    );
    let parts =
        ipu_isa::kernels::elementwise_parts(spec.param("TYPE"), spec.param("N").max(0) as u64);
    let record = parts
        .iter()
        .flat_map(|&(o, granules)| {
            [
                offset(in0, o),
                in1.map_or(Word::Val(0), |w| offset(w, o)),
                offset(out, o),
                Word::Val(granules),
            ]
        })
        .collect();
    call(spec, "elementwise", record, 0)
}

/// `rows.S`'s record of a call of `spec` on its five words: those words,
/// or for a kernel taking one record per worker (a cut row op's
/// statistics and last pass, `ipu_isa::kernels::rows_per_worker`) each
/// worker's, moved on to its first row, with its rows (`rows_parts`).
fn rows_record(spec: &KernelSpec, words: [Word; 5]) -> Vec<Word> {
    if !ipu_isa::kernels::rows_per_worker(spec.param("OP")) {
        return words.to_vec();
    }
    ipu_isa::kernels::rows_parts(&spec.params)
        .iter()
        .flat_map(|&(off, rows)| {
            let mut w: Vec<Word> = words.iter().zip(off).map(|(&w, o)| offset(w, o)).collect();
            w.push(Word::Val(rows));
            w
        })
        .collect()
}

/// `rows.S` with a row vector (add/mul_row_vector): +0 matrix, +4 unused,
/// +8 the vector, +12 unused, +16 out.
pub fn rows_vector(spec: &KernelSpec, matrix: Word, vector: Word, out: Word) -> Call {
    let op = spec.param("OP");
    assert!(
        op == RowOp::AddRowVector as i64 || op == RowOp::MulRowVector as i64,
        "rows OP {op} takes no row vector"
    );
    call(
        spec,
        "rows",
        vec![matrix, Word::Val(0), vector, Word::Val(0), out],
        0,
    )
}

/// `rows.S` reductions (sum/max/min), softmax/log-softmax and a cut
/// layer norm's statistics: +0 x, +4, +8 and +12 unused, +16 out (the
/// statistics: one record per worker, [`rows_record`]).
pub fn rows_along(spec: &KernelSpec, x: Word, out: Word) -> Call {
    let op = spec.param("OP");
    assert!(
        op <= RowOp::LogSoftmax as i64 || op == RowOp::LayerNormStats as i64,
        "rows OP {op} takes more than its input"
    );
    let zero = Word::Val(0);
    call(
        spec,
        "rows",
        rows_record(spec, [x, zero, zero, zero, out]),
        0,
    )
}

/// `rows.S` ln_stats of f32 rows summed in its first pass (ADD): +0 x,
/// +4 y, +8 s = x + y (stored), +12 unused, +16 the pairs; one record per
/// worker ([`rows_record`]).
pub fn ln_stats_add(spec: &KernelSpec, x: Word, y: Word, s: Word, pairs: Word) -> Call {
    assert_eq!(spec.param("OP"), RowOp::LayerNormStats as i64);
    assert_eq!(spec.param("ADD"), 1, "ln_stats without ADD");
    call(
        spec,
        "rows",
        rows_record(spec, [x, y, s, Word::Val(0), pairs]),
        0,
    )
}

/// The call of `stats` (an f32 ln_stats over `r` x `c` blocks) that also
/// does `add`, the elementwise f32 add of the same block into `x` (its
/// last call before them on the tile): s = x + y added in the first pass
/// and stored where the add stored it, the same sums in the same order;
/// when the cycle formulas say one call costs less than the two.
pub fn ln_stats_taking_add(stats: &KernelSpec, add: &Call, x: Word, pairs: Word) -> Option<Call> {
    use ipu_isa::kernels::EwOp;
    let Kernel::Lib(ew) = &add.kernel else {
        return None;
    };
    let n = stats.param("R") * stats.param("C");
    let fits = ew.source == "elementwise"
        && ew.param("OP") == EwOp::Add as i64
        && ew.param("TYPE") == 0
        && ew.param("N") == n
        && stats.param("TYPE") == 0
        && stats.param("ADD") == 0
        && add.record.get(2) == Some(&x);
    if !fits {
        return None;
    }
    let spec = KernelSpec::ln_stats_add(stats.param("R") as usize, stats.param("C") as usize);
    // Only where it pays: the add's elements then fall to the statistics'
    // busiest worker, where the add alone splits them over all six.
    let cycles = crate::kernel_cycles;
    let (Ok(both), Ok(own), Ok(before)) = (cycles(&spec), cycles(stats), cycles(ew)) else {
        return None;
    };
    if both >= own + before {
        return None;
    }
    Some(ln_stats_add(&spec, add.record[0], add.record[1], x, pairs))
}

/// `rows.S` combining a cut softmax's or layer norm's statistics: +0 the
/// gathered pairs, +4 the rows' partial pairs (in parts, `P` > 1), +8 and
/// +12 unused, +16 out.
pub fn row_combine(spec: &KernelSpec, pairs: Word, partials: Option<Word>, out: Word) -> Call {
    let op = spec.param("OP");
    assert!(
        op == RowOp::SoftmaxCombine as i64 || op == RowOp::LayerNormCombine as i64,
        "rows OP {op} combines no statistics"
    );
    assert_eq!(
        spec.param("P") > 1,
        partials.is_some(),
        "a combine's partial pairs"
    );
    let zero = Word::Val(0);
    call(
        spec,
        "rows",
        vec![pairs, partials.unwrap_or(zero), zero, zero, out],
        0,
    )
}

/// `rows.S` softmax_stats: +0 x, +4 a prologue's row vector (MASK), +8
/// the exponentials e = exp(x - m) (with EXPS; may be x), +12 a
/// prologue's rows t (WIDEN, MUL or MASK; the statistics are then t's),
/// +16 the [m, s] pairs; one record per worker ([`rows_record`]).
pub fn softmax_stats(
    spec: &KernelSpec,
    x: Word,
    exps: Option<Word>,
    out: Word,
    mask: Option<Word>,
    t: Option<Word>,
) -> Call {
    assert_eq!(spec.param("OP"), RowOp::SoftmaxStats as i64);
    assert_eq!(
        spec.param("EXPS") == 1,
        exps.is_some(),
        "softmax_stats exponentials"
    );
    assert_eq!(
        spec.param("MASK") == 1,
        mask.is_some(),
        "a prologue's row vector"
    );
    let pre = spec.has_stats_prologue();
    assert_eq!(pre, t.is_some(), "a prologue's rows");
    let zero = Word::Val(0);
    let words = [
        x,
        mask.unwrap_or(zero),
        exps.unwrap_or(zero),
        t.unwrap_or(zero),
        out,
    ];
    call(spec, "rows", rows_record(spec, words), 0)
}

/// `rows.S` softmax_apply: +0 x (with EXPS: the statistics' exponentials
/// e), +4 the rows' combined pairs, +8 with EXPS the piece's own [m, s]
/// pairs, +12 unused, +16 out (may be e); one record per worker
/// ([`rows_record`]).
pub fn softmax_apply(
    spec: &KernelSpec,
    x: Word,
    pairs: Word,
    own: Option<Word>,
    out: Word,
) -> Call {
    assert_eq!(spec.param("OP"), RowOp::SoftmaxApply as i64);
    assert_eq!(
        spec.param("EXPS") == 1,
        own.is_some(),
        "softmax_apply own pairs"
    );
    let zero = Word::Val(0);
    call(
        spec,
        "rows",
        rows_record(spec, [x, pairs, own.unwrap_or(zero), zero, out]),
        0,
    )
}

/// `rows.S` ln_apply: +0 x, +4 the rows' [mean, rstd] pairs, +8 the
/// piece's scale, +12 its bias (as GAMMA and BETA say), +16 out; one
/// record per worker ([`rows_record`]).
pub fn ln_apply(
    spec: &KernelSpec,
    x: Word,
    pairs: Word,
    gamma: Option<Word>,
    beta: Option<Word>,
    out: Word,
) -> Call {
    assert_eq!(spec.param("OP"), RowOp::LayerNormApply as i64);
    let (gamma, beta) = ln_affine(spec, gamma, beta);
    call(
        spec,
        "rows",
        rows_record(spec, [x, pairs, gamma, beta, out]),
        0,
    )
}

/// A layer norm's scale and bias words, checked against the
/// specialisation's GAMMA and BETA (0 where it has none).
fn ln_affine(spec: &KernelSpec, gamma: Option<Word>, beta: Option<Word>) -> (Word, Word) {
    assert_eq!(
        spec.param("GAMMA") == 1,
        gamma.is_some(),
        "layer norm scale"
    );
    assert_eq!(spec.param("BETA") == 1, beta.is_some(), "layer norm bias");
    let zero = Word::Val(0);
    (gamma.unwrap_or(zero), beta.unwrap_or(zero))
}

/// `rows.S` layer norm: +0 x, +4 unused, +8 gamma, +12 beta (as the
/// specialisation's GAMMA and BETA say), +16 out.
pub fn layer_norm(
    spec: &KernelSpec,
    x: Word,
    gamma: Option<Word>,
    beta: Option<Word>,
    out: Word,
) -> Call {
    assert_eq!(spec.param("OP"), RowOp::LayerNorm as i64);
    let (gamma, beta) = ln_affine(spec, gamma, beta);
    let zero = Word::Val(0);
    call(spec, "rows", vec![x, zero, gamma, beta, out], 0)
}

/// `cast.S`: +0 in, +4 out, +8 scale (the FP8 side's), +12 output scale
/// (FP8 -> FP8 only).
pub fn cast(spec: &KernelSpec, input: Word, out: Word, scale: i32, out_scale: i32) -> Call {
    let fp8 = |t: i64| (3..=4).contains(&t);
    assert!(
        out_scale == 0 || (fp8(spec.param("FROM")) && fp8(spec.param("TO"))),
        "an output scale is for FP8 -> FP8 casts"
    );
    let parts = ipu_isa::kernels::cast_parts(
        spec.param("FROM"),
        spec.param("TO"),
        spec.param("N").max(0) as u64,
    );
    let record = parts
        .iter()
        .flat_map(|&(i, o, groups)| {
            [
                offset(input, i),
                offset(out, o),
                Word::Val(groups),
                Word::Val(scale as u32),
                Word::Val(out_scale as u32),
            ]
        })
        .collect();
    call(spec, "cast", record, 0)
}

/// The scale words of a cast from a value of FP8 scale `s_in` to one of
/// `s_out`: the FP8 side's scale at +8 (the input's for FP8 -> FP8, whose
/// output scale goes at +12).
pub fn cast_scales(spec: &KernelSpec, s_in: i32, s_out: i32) -> (i32, i32) {
    let fp8 = |t: i64| (3..=4).contains(&t);
    match (fp8(spec.param("FROM")), fp8(spec.param("TO"))) {
        (true, true) => (s_in, s_out),
        (true, false) => (s_in, 0),
        (false, true) => (s_out, 0),
        (false, false) => (0, 0),
    }
}

/// `copy2d.S`: +0 src, +4 dst.
pub fn copy2d(spec: &KernelSpec, src: Word, dst: Word) -> Call {
    call(spec, "copy2d", vec![src, dst], 0)
}

/// `gemm_amp.S`: +0 A, +4 B, +8 C, +12 FP8 scale (s_A + s_B), +16 the
/// accumulator T when the specialisation has one (`acc`,
/// [`KernelSpec::gemm_accumulator_bytes`]), then the six worker records the
/// kernel fills in itself.
pub fn gemm(spec: &KernelSpec, a: Word, b: Word, c: Word, acc: Option<Word>, scale: i32) -> Call {
    let mut record = vec![a, b, c, Word::Val(scale as u32)];
    record.extend(acc);
    call(spec, "gemm_amp", record, GEMM_WORKER_RECORD_BYTES)
}

/// A one-input call from `src` into `dst`: a cast without scales, a copy,
/// or a unary elementwise op.
pub fn unary(spec: &KernelSpec, src: Word, dst: Word) -> Call {
    match spec.source {
        "cast" => cast(spec, src, dst, 0, 0),
        "copy2d" => copy2d(spec, src, dst),
        "elementwise" => elementwise(spec, src, None, dst),
        other => panic!("{other} is not a one-input kernel"),
    }
}

/// `partials.S`: +0 c, +4 the first of the partials it adds (the others
/// follow it, one block apart), +8 out (`c + p1 + ... + pP`).
pub fn partials(spec: &KernelSpec, c: Word, partials: Word, out: Word) -> Call {
    call(spec, "partials", vec![c, partials, out], 0)
}

/// An elementwise op offered to the call that produces its operand, to be
/// done by that call after its own work (an epilogue): see
/// `ipu_device::ProgramBuilder::fold_epilogue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// out = value + a row vector of `cols` elements (a bias) at `vector`,
    /// rounded once more.
    AddRowVector {
        cols: usize,
        vector: Word,
        out: Word,
    },
    /// The f16 value widened exactly to f32 at `out`; `only`: the f16
    /// value itself is read by nothing else, so it need not be stored.
    Widen { out: Word, only: bool },
    /// The f16 value through an activation (`op`: GELU, either form) at
    /// `out`.
    Activate {
        op: ipu_isa::kernels::EwOp,
        out: Word,
    },
    /// The value cast to `to` (FP8 at power-of-two `scale`, saturating)
    /// at `out`, in place of storing it (nothing else reads it).
    Cast {
        to: ipu_isa::kernels::ElemType,
        scale: i32,
        out: Word,
    },
    /// The f16 value also stored as FP8 (`to`) at `scale`, saturating, at
    /// `out` (the f16 value stays where it was, so the cast is checked on
    /// it).
    CastCopy {
        to: ipu_isa::kernels::ElemType,
        scale: i32,
        out: Word,
    },
}

/// `rows.S`'s last pass of a cut row op taking an epilogue: `call` with
/// its result cast on the way out (`KernelSpec::with_cast`), for the
/// casts the kernel makes as the cast kernel would (the same rounding
/// of the same f32 values): a softmax's f32 exponentials scaled into
/// f16, a layer norm's f32 rows into FP8 (rows of whole 4-byte words).
pub fn rows_epilogue(last: &Call, ep: &Epilogue) -> Option<Call> {
    use ipu_isa::kernels::ElemType;
    let Kernel::Lib(spec) = &last.kernel else {
        return None;
    };
    let Epilogue::Cast { to, scale, out } = *ep else {
        return None;
    };
    if spec.source != "rows" || spec.param("TYPE") != 0 || spec.param("CAST") != 0 {
        return None;
    }
    let op = spec.param("OP");
    let fits = if op == RowOp::SoftmaxApply as i64 {
        spec.param("EXPS") == 1 && to == ElemType::F16 && scale == 0
    } else if op == RowOp::LayerNormApply as i64 {
        matches!(to, ElemType::F8E4M3FN | ElemType::F8E5M2) && spec.param("C") % 4 == 0
    } else {
        false
    };
    if !fits {
        return None;
    }
    // Only where it pays: the busiest worker then casts its own rows, where
    // the cast kernel splits the block evenly over all six.
    let cast = &spec.with_cast(to, scale);
    let n = (spec.param("R") * spec.param("C")).max(0) as usize;
    let group = ipu_isa::kernels::cast_group(ElemType::F32 as i64, to as i64).max(1) as usize;
    let separate = KernelSpec::cast(ElemType::F32, to, n.div_ceil(group) * group);
    let cycles = crate::kernel_cycles;
    let (Ok(folded), Ok(own), Ok(after)) = (cycles(cast), cycles(spec), cycles(&separate)) else {
        return None;
    };
    if folded >= own + after {
        return None;
    }
    // Worker 0's words are the call's (its first row is the first).
    let words = [
        last.record[0],
        last.record[1],
        last.record[2],
        last.record[3],
        out,
    ];
    Some(call(cast, "rows", rows_record(cast, words), last.scratch))
}

/// `partials.S` taking an epilogue: `call` (a `partials` call) with the
/// row vector added after its last partial, then its f16 result widened to
/// f32, through an activation or also stored as FP8, when a form of the
/// kernel takes it (`KernelSpec::partials_row_vector`: the row-split form,
/// rows of up to [`ipu_isa::kernels::PARTIALS_BIAS_ROW_GRANULES`] granules
/// and up to [`ipu_isa::kernels::PARTIALS_ROWS_MAX`] partials, or the
/// granule form, any rows; the cheaper). The numbers are those of the
/// separate calls: the bias is added to the sum rounded in K order and
/// rounded again, the widening is exact.
pub fn partials_epilogue(call: &Call, ep: &Epilogue) -> Option<Call> {
    use ipu_isa::kernels::{ElemType, EwOp, PartialsPost, PartialsWide};
    let Kernel::Lib(spec) = &call.kernel else {
        return None;
    };
    if spec.source != "partials" {
        return None;
    }
    let (n, p, ty) = (spec.param("N"), spec.param("P"), spec.param("TYPE"));
    let (cols, wide) = (spec.param("C"), spec.param("WIDE"));
    let elem = if ty == 1 {
        ElemType::F16
    } else {
        ElemType::F32
    };
    let act = match spec.param("ACT") {
        17 => Some(EwOp::Gelu),
        29 => Some(EwOp::GeluTanh),
        _ => None,
    };
    let fused = |cols: i64, post: PartialsPost| {
        KernelSpec::partials_row_vector(elem, n as usize, p as usize, cols as usize, post)
    };
    let (c, parts, out) = (call.record[0], call.record[1], call.record[2]);
    match *ep {
        Epilogue::AddRowVector {
            cols: k,
            vector,
            out: new_out,
        } => {
            if cols != 0 || wide != 0 || k == 0 {
                return None;
            }
            let spec = fused(k as i64, PartialsPost::NONE)?;
            Some(partials_with(&spec, c, parts, new_out, vector, None))
        }
        Epilogue::Cast { .. } => None,
        Epilogue::Widen {
            out: wide_out,
            only,
        } => {
            if cols == 0 || wide != 0 || act.is_some() || spec.param("TO8") != 0 {
                return None;
            }
            let vector = call.record[3];
            let (w, out, second) = if only {
                (PartialsWide::Only, wide_out, None)
            } else {
                (PartialsWide::Both, out, Some(wide_out))
            };
            let post = PartialsPost {
                wide: w,
                ..PartialsPost::NONE
            };
            let spec = fused(cols, post)?;
            Some(partials_with(&spec, c, parts, out, vector, second))
        }
        Epilogue::Activate { op, out: new_out } => {
            let fits = cols > 0
                && wide == 0
                && act.is_none()
                && spec.param("TO8") == 0
                && matches!(op, EwOp::Gelu | EwOp::GeluTanh);
            if !fits {
                return None;
            }
            let post = PartialsPost {
                act: Some(op),
                ..PartialsPost::NONE
            };
            let spec = fused(cols, post)?;
            Some(partials_with(
                &spec,
                c,
                parts,
                new_out,
                call.record[3],
                None,
            ))
        }
        Epilogue::CastCopy {
            to,
            scale,
            out: new_out,
        } => {
            let fits = cols > 0 && wide == 0 && spec.param("TO8") == 0 && crate::elem::is_f8(to);
            if !fits {
                return None;
            }
            let post = PartialsPost {
                act,
                to8: Some((to, scale)),
                ..PartialsPost::NONE
            };
            let spec = fused(cols, post)?;
            Some(partials_with(
                &spec,
                c,
                parts,
                out,
                call.record[3],
                Some(new_out),
            ))
        }
    }
}

/// `partials.S`'s row-vector form: +0 c, +4 the partials, +8 out, +12 the
/// row vector, +16 the second out: f32 (WIDE 1) or FP8 (TO8).
pub fn partials_with(
    spec: &KernelSpec,
    c: Word,
    partials: Word,
    out: Word,
    vector: Word,
    wide_out: Option<Word>,
) -> Call {
    assert_eq!(
        spec.param("WIDE") == 1 || spec.param("TO8") > 0,
        wide_out.is_some(),
        "the second output is WIDE 1's (f32) or TO8's (FP8)"
    );
    call(
        spec,
        "partials",
        vec![c, partials, out, vector, wide_out.unwrap_or(Word::Val(0))],
        0,
    )
}

/// `compare.S`: +0 in0, +4 in1 (binary ops), +8 out.
pub fn compare(spec: &KernelSpec, in0: Word, in1: Option<Word>, out: Word) -> Call {
    let binary = spec.param("OP") != ipu_isa::kernels::CompareOp::Not as i64;
    assert_eq!(
        binary,
        in1.is_some(),
        "compare OP {} operands",
        spec.param("OP")
    );
    call(
        spec,
        "compare",
        vec![in0, in1.unwrap_or(Word::Val(0)), out],
        0,
    )
}

/// `select.S`: +0 cond, +4 a (where cond holds), +8 b, +12 out.
pub fn select(spec: &KernelSpec, cond: Word, a: Word, b: Word, out: Word) -> Call {
    call(spec, "select", vec![cond, a, b, out], 0)
}

/// `intew.S`: +0 in0, +4 in1 (binary ops, select), +8 in2 (select),
/// +12 out; `ins` the op's inputs in order (unused words 0).
pub fn intew(spec: &KernelSpec, ins: &[Word], out: Word) -> Call {
    let word = |i: usize| ins.get(i).copied().unwrap_or(Word::Val(0));
    call(spec, "intew", vec![word(0), word(1), word(2), out], 0)
}

/// `gather.S`: +0 data, +4 indices, +8 out.
pub fn gather(spec: &KernelSpec, data: Word, indices: Word, out: Word) -> Call {
    call(spec, "gather", vec![data, indices, out], 0)
}

/// `lcopy.S`: +0 COUNT, +4 SRC, +8 DST, +12 RSRC, +16 RDST (steps), then
/// per worker k at +20 + 16 k its first row's source and destination, its
/// first transfer | transfers << 16, its words (`LocalCopy::record`); `src`
/// and `dst` are the group's first transfer's.
pub fn lcopy(copy: &LocalCopy, src: (usize, u32), dst: (usize, u32)) -> Call {
    let at = |(buf, off): (usize, u32), rel: i64| Word::Buf(buf, (i64::from(off) + rel) as u32);
    let record = copy
        .record()
        .into_iter()
        .map(|w| match w {
            RecordWord::Src(rel) => at(src, rel),
            RecordWord::Dst(rel) => at(dst, rel),
            RecordWord::Val(v) => Word::Val(v),
        })
        .collect();
    call(&copy.spec(), "lcopy", record, 0)
}

/// Estimated cycles of the supervisor's byte copy (`memcpy`, emitted by
/// `exchange_to_machine::emit`) of `len` bytes: two issues per byte, and 8
/// per copy (record pointer, `call`, three record loads, `rpt`, `jmp`).
pub fn memcpy_cycles(len: u64) -> u64 {
    8 + 2 * len
}

/// How a tile makes one group of its local transfers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocalCopyCall {
    /// On the workers: the group's first transfer's source and destination
    /// offsets, and its shape.
    Workers {
        src_offset: u32,
        dst_offset: u32,
        copy: LocalCopy,
    },
    /// On the supervisor, one `memcpy` per transfer (source offset,
    /// destination offset, length).
    Supervisor(Vec<(u32, u32, u32)>),
}

/// One tile's local transfers of one buffer pair (source offset,
/// destination offset, length; in order) as calls with their estimated
/// cycles: each stepped group (`program::compress`) on the workers where
/// `lcopy`'s cycle formula beats the supervisor's byte copy of its
/// transfers. The exchange stage's estimate and the machine stage's calls
/// both come from here.
pub fn local_copy_calls(
    transfers: &[(u32, u32, u32)],
) -> Result<Vec<(LocalCopyCall, u64)>, String> {
    use ipu_exchange_schedule::Transfer;
    let ts: Vec<Transfer> = transfers
        .iter()
        .map(|&(s, d, len)| Transfer::unicast(0, s, len, 0, d))
        .collect();
    let mut out = Vec::new();
    for run in crate::compress(&ts) {
        let (so, d0) = (run.src_offset, run.dsts[0].offset);
        let group = LocalCopy::new(
            run.count,
            run.len,
            run.src_offset_step,
            run.dst_offset_step,
            run.repeat,
            run.repeat_src_offset_step,
            run.repeat_dst_offset_step,
            (so, d0),
        );
        let singles = (run.count * run.repeat) as u64 * memcpy_cycles(run.len as u64);
        if let Some(copy) = group {
            let cycles = crate::kernel_cycles(&copy.cost_spec())?;
            if cycles < singles {
                out.push((
                    LocalCopyCall::Workers {
                        src_offset: so as u32,
                        dst_offset: d0 as u32,
                        copy,
                    },
                    cycles,
                ));
                continue;
            }
        }
        let mut each = Vec::new();
        for r in 0..run.repeat {
            for c in 0..run.count {
                let s = so + r * run.repeat_src_offset_step + c * run.src_offset_step;
                let d = d0 + r * run.repeat_dst_offset_step + c * run.dst_offset_step;
                each.push((s as u32, d as u32, run.len as u32));
            }
        }
        out.push((LocalCopyCall::Supervisor(each), singles));
    }
    Ok(out)
}
