//! The one conversion between the element-type enums of the stages: IR
//! types, the kernel library's [`ElemType`], the package's host
//! [`ElementType`] and the target's AMP input classes.

use ipu_ir::{Context, Type, TypeKind, Value};
use ipu_isa::kernels::ElemType;
use ipu_package::ElementType;

/// The kernel library's element type of an IR scalar type.
pub fn kernel_elem(kind: &TypeKind) -> Option<ElemType> {
    Some(match kind {
        TypeKind::F32 => ElemType::F32,
        TypeKind::F16 => ElemType::F16,
        TypeKind::BF16 => ElemType::Bf16,
        TypeKind::F8E4M3FN => ElemType::F8E4M3FN,
        TypeKind::F8E5M2 => ElemType::F8E5M2,
        _ => return None,
    })
}

/// The element type of a tensor type.
pub fn type_elem(cx: &Context, t: Type) -> Option<ElemType> {
    cx.tensor_parts(t)
        .and_then(|(_, e)| kernel_elem(cx.type_kind(e)))
}

/// The element type of a tensor value.
pub fn value_elem(cx: &Context, v: Value) -> Option<ElemType> {
    type_elem(cx, cx.value_type(v))
}

/// The IR type of a kernel element type.
pub fn ir_type(e: ElemType) -> Type {
    match e {
        ElemType::F32 => Type::F32,
        ElemType::F16 => Type::F16,
        ElemType::Bf16 => Type::BF16,
        ElemType::F8E4M3FN => Type::F8E4M3FN,
        ElemType::F8E5M2 => Type::F8E5M2,
    }
}

/// The host format of an IR scalar type, for stream descriptors (`i1` is
/// one byte 0/1 per element).
pub fn host_element(kind: &TypeKind) -> Option<ElementType> {
    if let TypeKind::Integer { width, signedness } = kind {
        use ipu_ir::types::Signedness::Unsigned;
        let unsigned = *signedness == Unsigned;
        return Some(match (width, unsigned) {
            (1, false) => ElementType::Bool,
            (8, false) => ElementType::I8,
            (8, true) => ElementType::U8,
            (16, false) => ElementType::I16,
            (16, true) => ElementType::U16,
            (32, false) => ElementType::I32,
            (32, true) => ElementType::U32,
            (64, false) => ElementType::I64,
            _ => return None,
        });
    }
    Some(match kernel_elem(kind)? {
        ElemType::F32 => ElementType::F32,
        ElemType::F16 => ElementType::F16,
        ElemType::Bf16 => ElementType::BF16,
        ElemType::F8E4M3FN => ElementType::F8E4M3FN,
        ElemType::F8E5M2 => ElementType::F8E5M2,
    })
}

/// The AMP input class of an element type (the target file's `input`).
pub fn amp_class(e: ElemType) -> ipu_target::ElemType {
    match e {
        ElemType::F32 => ipu_target::ElemType::F32,
        ElemType::F8E4M3FN | ElemType::F8E5M2 => ipu_target::ElemType::F8,
        ElemType::F16 | ElemType::Bf16 => ipu_target::ElemType::F16,
    }
}

/// Whether an element type is one of the FP8 formats.
pub fn is_f8(e: ElemType) -> bool {
    matches!(e, ElemType::F8E4M3FN | ElemType::F8E5M2)
}

/// The type's name as the IR spells it (`f16`, `f8E4M3FN`).
pub fn name(e: ElemType) -> &'static str {
    match e {
        ElemType::F32 => "f32",
        ElemType::F16 => "f16",
        ElemType::Bf16 => "bf16",
        ElemType::F8E4M3FN => "f8E4M3FN",
        ElemType::F8E5M2 => "f8E5M2",
    }
}
