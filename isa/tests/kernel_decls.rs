//! The per-kernel declarations (`ipu_isa::kernels::KernelDecl`): every
//! source has one, and the record layouts and prologues they declare are
//! those the kernels' headers document.

use ipu_isa::kernels::{
    prologue, record_layout, CompareOp, ElemType, EwOp, GemmType, KernelSpec, RowOp, Slot,
    GEMM_WORKER_RECORD_BYTES, SOURCES,
};
use Slot::{Addr as A, Value as V, Wide as W, Zero as Z};

#[test]
fn every_source_called_by_the_exchange_stage_has_a_record_layout() {
    for src in SOURCES {
        let spec = KernelSpec {
            source: src.name,
            entry: src.name,
            params: Default::default(),
        };
        let layout = record_layout(&spec);
        assert_eq!(
            layout.is_ok(),
            src.name != "fill",
            "{}: {layout:?}",
            src.name
        );
    }
    let unknown = KernelSpec {
        source: "nope",
        entry: "nope",
        params: Default::default(),
    };
    assert!(record_layout(&unknown).is_err());
}

#[test]
fn record_layouts_follow_the_specialisation() {
    let ew = |op| record_layout(&KernelSpec::elementwise(op, ElemType::F32, 64)).unwrap();
    assert_eq!(ew(EwOp::Add), ([W, W, A, V].repeat(6), 0));
    assert_eq!(ew(EwOp::Exp), ([A, Z, A, V].repeat(6), 0));
    let cmp = |op| record_layout(&KernelSpec::compare(op, ElemType::F16, 64)).unwrap();
    assert_eq!(cmp(CompareOp::Lt).0, vec![W, W, A]);
    assert_eq!(cmp(CompareOp::Not).0, vec![A, Z, A]);
    let gemm = KernelSpec::gemm_chunked(GemmType::F16F32, 12, 256, 64, 32);
    assert_eq!(
        record_layout(&gemm).unwrap(),
        (vec![W, W, W, V, W], GEMM_WORKER_RECORD_BYTES)
    );
    let ln = KernelSpec::ln_apply(ElemType::F32, 4, 64, true, false);
    assert_eq!(record_layout(&ln).unwrap().0, [A, A, A, Z, A, V].repeat(6));
    let mut bad = KernelSpec::rows(RowOp::Sum, ElemType::F32, 4, 8, 0.0);
    bad.params.insert("OP".into(), 99);
    assert!(record_layout(&bad).is_err());
}

#[test]
fn only_a_split_gemm_has_a_prologue() {
    let mut gemm = KernelSpec::gemm(GemmType::F16F16, 12, 64, 32);
    assert_eq!(prologue(&gemm), None);
    gemm.params.insert("PRE".into(), 1);
    assert_eq!(prologue(&gemm).map(|p| p.reads), Some(&[1usize][..]));
    gemm.params.insert("PRE".into(), 2);
    assert_eq!(prologue(&gemm).map(|p| p.entry), Some("gemm_amp_pre"));
    let mut ew = KernelSpec::elementwise(EwOp::Add, ElemType::F32, 8);
    ew.params.insert("PRE".into(), 1);
    assert_eq!(prologue(&ew), None);
}
