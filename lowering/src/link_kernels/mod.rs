//! `machine-link-kernels`: chooses the library kernel specialisation every
//! compute set runs on each of its tiles, assembles it (through the
//! content-addressed kernel cache), links each tile's kernels into a code
//! image, and checks the code fits the memory kept for it. Tiles linking
//! the same kernels share one `machine.code` with its size and executable
//! range.
//!
//! A matmul block runs the AMP GEMM (`gemm_amp`, K chunked when one K x 16
//! weight block exceeds a 4 KiB AMP bank), then, when K is split, an
//! elementwise add of the received partials, then a cast of the partials
//! to the result type. Elementwise ops run `elementwise` (same shapes),
//! `rows` (a vector broadcast along the last dimension) or `cast`.

use crate::nn_to_tile::plan::RESERVED_TILE_BYTES;
use crate::nn_to_tile::{module_target, TARGET_OPTION};
use crate::tile_to_exchange::{blocks, mapping_of};
use ipu_ir::pass::{Pass, PassInfo, PassOptions, Statistic};
use ipu_ir::{Context, Diagnostic, Op, OperationState, Type, TypeKind};
use ipu_isa::kernels::{ElemType, EwOp, GemmType, KernelCache, KernelSpec, RowOp};
use ipu_isa::link::{link, LinkLayout};
use ipu_target::Target;
use std::collections::{BTreeMap, BTreeSet};

pub const INFO: PassInfo = PassInfo {
    argument: "machine-link-kernels",
    name: "MachineLinkKernels",
    description: "Choose the kernel specialisation of every compute set, assemble it through the kernel cache \
                  (IPU_KERNEL_CACHE), link each tile's kernels into a code image and check it fits the code \
                  memory; one machine.code per group of tiles with the same kernels.",
    anchor: Some("builtin.module"),
    options: &[TARGET_OPTION],
    create,
};

fn create(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(LinkKernels {
        target_option: o
            .get("target")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        kernels: 0,
        max_code: 0,
    }))
}

struct LinkKernels {
    target_option: Option<String>,
    kernels: u64,
    max_code: u64,
}

impl Pass for LinkKernels {
    fn run(&mut self, cx: &mut Context, module: Op) -> Result<(), Diagnostic> {
        let target = module_target(cx, module, self.target_option.as_deref())?;
        for f in cx.nested_ops(module) {
            if cx.is(f, "func.func") && cx.entry_block(cx.region(f, 0)).is_some() {
                let (kernels, max_code) = link_function(cx, f, &target)?;
                self.kernels += kernels;
                self.max_code = self.max_code.max(max_code);
            }
        }
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "kernels",
                description: "Distinct kernel specialisations",
                value: self.kernels,
            },
            Statistic {
                name: "max-code-bytes",
                description: "Largest tile code image",
                value: self.max_code,
            },
        ]
    }
}

fn elem(cx: &Context, t: Type) -> Option<ElemType> {
    Some(match cx.type_kind(t) {
        TypeKind::F32 => ElemType::F32,
        TypeKind::F16 => ElemType::F16,
        TypeKind::BF16 => ElemType::Bf16,
        TypeKind::F8E4M3FN => ElemType::F8E4M3FN,
        TypeKind::F8E5M2 => ElemType::F8E5M2,
        _ => return None,
    })
}

fn elem_of(cx: &Context, v: ipu_ir::Value) -> Option<ElemType> {
    cx.tensor_parts(cx.value_type(v))
        .and_then(|(_, e)| elem(cx, e))
}

/// Bytes of one AMP weight bank (an ISA figure: docs/isa.md, section 6).
const AMP_BANK_BYTES: usize = 4096;

/// The kernels `op` runs, each with the tiles that run it.
fn kernels_of(
    cx: &Context,
    op: Op,
    target: &Target,
) -> Result<Vec<(KernelSpec, Vec<u32>)>, String> {
    let result = cx.result(op, 0);
    let out = elem_of(cx, result).ok_or("result element type has no kernels")?;
    if cx.is(op, "tile.matmul") {
        let plan = cx
            .get_i64_array_attr(op, "plan")
            .ok_or("missing plan")?
            .to_vec();
        let t = cx
            .get_i64_array_attr(op, "tiles")
            .ok_or("missing tiles")?
            .to_vec();
        let (pm, pn, pk) = (plan[0] as usize, plan[1] as usize, plan[2] as usize);
        let (a, b) = (
            cx.value_shape(cx.operand(op, 0)),
            cx.value_shape(cx.operand(op, 1)),
        );
        let (lhs, rhs) = (
            elem_of(cx, cx.operand(op, 0)),
            elem_of(cx, cx.operand(op, 1)),
        );
        let partials = match cx.get_attr(op, "partials").map(|p| cx.attr_kind(p)) {
            Some(ipu_ir::AttrKind::Type(ty)) => elem(cx, *ty).unwrap_or(ElemType::F32),
            _ => ElemType::F32,
        };
        let (gemm, in_bytes, input) = match (lhs, rhs, partials) {
            (Some(ElemType::F8E4M3FN), Some(ElemType::F8E4M3FN), _) => {
                (GemmType::F8E4M3FN, 1, ipu_target::ElemType::F8)
            }
            (Some(ElemType::F8E5M2), Some(ElemType::F8E5M2), _) => {
                (GemmType::F8E5M2, 1, ipu_target::ElemType::F8)
            }
            (_, _, ElemType::F32) => (GemmType::F16F32, 2, ipu_target::ElemType::F16),
            _ => (GemmType::F16F16, 2, ipu_target::ElemType::F16),
        };
        let k_block = target
            .amp
            .iter()
            .find(|m| m.input == input)
            .map(|m| m.k_block as usize)
            .unwrap_or(16);
        let bm = (a[0] as usize).div_ceil(pm);
        let bk = (a[1] as usize).div_ceil(pk).div_ceil(k_block) * k_block;
        let bn = (b[1] as usize).div_ceil(pn).div_ceil(16) * 16;
        let tile = |i: usize| (t[0] as usize + i * t[1] as usize) as u32;
        let all: Vec<u32> = (0..pm * pn * pk).map(tile).collect();
        // The k = 0 tiles add up the partials and convert the result.
        let k0: Vec<u32> = (0..pm * pn).map(tile).collect();
        let gemm_spec = if bk * 16 * in_bytes > AMP_BANK_BYTES {
            KernelSpec::gemm_chunked(gemm, bm, bk, AMP_BANK_BYTES / (16 * in_bytes), bn)
        } else {
            KernelSpec::gemm(gemm, bm, bk, bn)
        };
        let mut specs = vec![(gemm_spec, all)];
        if pk > 1 {
            specs.push((
                KernelSpec::elementwise(EwOp::Add, partials, bm * bn),
                k0.clone(),
            ));
        }
        if partials != out {
            specs.push((KernelSpec::cast(partials, out, bm * bn), k0));
        }
        return Ok(specs);
    }
    // Elementwise.
    let m = mapping_of(cx, op).ok_or("missing mapping")?;
    let rshape = cx.value_shape(result);
    let block = m.block_shape(&rshape);
    let n: i64 = block.iter().product();
    let n = n as usize;
    let f = cx.get_str_attr(op, "fn").unwrap_or("");
    let spec = match f {
        "cast" => {
            let from =
                elem_of(cx, cx.operand(op, 0)).ok_or("cast input element type has no kernels")?;
            KernelSpec::cast(from, out, n)
        }
        "relu" | "gelu" => {
            if !matches!(out, ElemType::F32 | ElemType::F16) {
                return Err(format!(
                    "no {f} kernel for this element type (f32 and f16 have one)"
                ));
            }
            KernelSpec::elementwise(if f == "relu" { EwOp::Relu } else { EwOp::Gelu }, out, n)
        }
        "add" | "mul" => {
            if !matches!(out, ElemType::F32 | ElemType::F16) {
                return Err(format!(
                    "no {f} kernel for this element type (f32 and f16 have one)"
                ));
            }
            let same = cx.operands(op).iter().all(|&v| cx.value_shape(v) == rshape);
            if same {
                KernelSpec::elementwise(if f == "add" { EwOp::Add } else { EwOp::Mul }, out, n)
            } else {
                let cols = *block.last().unwrap_or(&1) as usize;
                let row_op = if f == "add" {
                    RowOp::AddRowVector
                } else {
                    RowOp::MulRowVector
                };
                KernelSpec::rows(row_op, out, n / cols.max(1), cols, 0.0)
            }
        }
        other => return Err(format!("no kernel for '{other}'")),
    };
    let tiles = blocks(&m, &rshape).into_iter().map(|b| b.tile).collect();
    Ok(vec![(spec, tiles)])
}

fn link_function(cx: &mut Context, f: Op, target: &Target) -> Result<(u64, u64), Diagnostic> {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let mut per_tile: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    let mut specs: BTreeMap<String, KernelSpec> = BTreeMap::new();
    for op in cx.block_ops_vec(entry) {
        if !(cx.is(op, "tile.matmul") || cx.is(op, "tile.map")) {
            continue;
        }
        let ks = kernels_of(cx, op, target).map_err(|m| {
            Diagnostic::error(cx.op_loc(op), format!("'{}' op {m}", cx.name_str(op)))
        })?;
        for (k, tiles) in ks {
            let name = k.name();
            for &t in &tiles {
                per_tile.entry(t).or_default().insert(name.clone());
            }
            specs.entry(name).or_insert(k);
        }
    }
    let cache = KernelCache::from_env();
    let mut objects = BTreeMap::new();
    for (name, spec) in &specs {
        let k = cache
            .get_spec(spec)
            .map_err(|e| Diagnostic::error(cx.op_loc(f), format!("kernel {name}: {e}")))?;
        objects.insert(name.clone(), k.object);
    }
    // Tiles with the same kernels link the same code image.
    let mut groups: BTreeMap<&BTreeSet<String>, Vec<u32>> = BTreeMap::new();
    for (t, set) in &per_tile {
        groups.entry(set).or_default().push(*t);
    }
    let base = target.memory.base_address as u32;
    let mut max_code = 0u64;
    let mut ops = Vec::new();
    for (set, tiles) in &groups {
        let objs: Vec<(&str, &ipu_isa::elf::ObjectFile)> =
            set.iter().map(|n| (n.as_str(), &objects[n])).collect();
        let image =
            link(&objs, &LinkLayout::new(base, target.sram_bytes() as u32)).map_err(|e| {
                Diagnostic::error(cx.op_loc(f), format!("linking tiles {}: {e}", tiles.len()))
            })?;
        let code = image.code_size as u64;
        if code > RESERVED_TILE_BYTES {
            return Err(Diagnostic::error(
                cx.op_loc(f),
                format!(
                    "tile {} does not fit: its code needs {code} bytes, but {RESERVED_TILE_BYTES} are kept for code ({} kernels)",
                    tiles[0],
                    set.len()
                ),
            ));
        }
        max_code = max_code.max(code);
        let exec: Vec<String> = image
            .exec_ranges
            .iter()
            .map(|r| format!("{:#x} to {:#x}", r.start, r.end))
            .collect();
        ops.push((
            tiles.clone(),
            set.iter().cloned().collect::<Vec<_>>(),
            code,
            exec.join(", "),
        ));
    }
    ops.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0[0].cmp(&b.0[0])));
    let first = cx.first_op(entry);
    for (tiles, kernels, code, exec) in ops {
        let set = ipu_package::TileSet::from_tiles(tiles).to_string();
        let names: Vec<_> = kernels.iter().map(|k| cx.string_attr(k)).collect();
        let attrs = vec![
            (cx.sym("tiles"), cx.string_attr(&set)),
            (cx.sym("kernels"), cx.array_attr(names)),
            (cx.sym("code_bytes"), cx.i64_attr(code as i64)),
            (cx.sym("exec"), cx.string_attr(&exec)),
        ];
        let name = cx.op_name("machine.code");
        let mut st = OperationState::new(name, cx.op_loc(f));
        st.attrs = cx.dict_attr(attrs);
        let o = cx.create_op(st);
        match first {
            Some(x) => cx.insert_op_before(x, o),
            None => cx.append_op(entry, o),
        }
    }
    Ok((specs.len() as u64, max_code))
}
