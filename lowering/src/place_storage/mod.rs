//! `machine-place-storage`: gives every buffer of every tile an address.
//!
//! Buffers: each block of a distributed value on its tile (alive from the
//! step that produces it to the last step that reads it; results streamed
//! to the host stay to the end), each rectangle a compute set reads on a
//! tile (unless it is exactly the block already there), and a matmul's
//! partial sums and the partials it receives. Steps are the compute sets in
//! program order. Per tile, buffers are placed largest first at the lowest
//! 8-byte-aligned address free for their whole lifetime, so buffers that
//! are never alive together share memory. A tile whose buffers do not fit
//! in its data memory (SRAM less what code and exchange tables keep) is a
//! diagnostic naming the tile, the bytes needed and the largest buffers.
//! Tiles with identical layouts share one `machine.memory_map`.

use crate::nn_to_tile::plan::RESERVED_TILE_BYTES;
use crate::nn_to_tile::{module_target, TARGET_OPTION};
use crate::tile_to_exchange::{blocks, elem_bytes, mapping_of, needs, Block};
use ipu_ir::pass::{Pass, PassInfo, PassOptions, Statistic};
use ipu_ir::{Context, Diagnostic, Op, OperationState, Value};
use ipu_target::Target;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

pub const INFO: PassInfo = PassInfo {
    argument: "machine-place-storage",
    name: "MachinePlaceStorage",
    description: "Place every tile's buffers (value blocks, operand rectangles, matmul partials) in its data \
                  memory, sharing memory between buffers whose lifetimes do not overlap; a tile that does not \
                  fit is an error naming the tile, the bytes needed and what holds them. Emits one \
                  machine.memory_map per group of tiles with the same layout.",
    anchor: Some("builtin.module"),
    options: &[TARGET_OPTION],
    create,
};

fn create(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(PlaceStorage {
        target_option: o
            .get("target")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        max_used: 0,
        maps: 0,
    }))
}

struct PlaceStorage {
    target_option: Option<String>,
    max_used: u64,
    maps: u64,
}

impl Pass for PlaceStorage {
    fn run(&mut self, cx: &mut Context, module: Op) -> Result<(), Diagnostic> {
        let target = module_target(cx, module, self.target_option.as_deref())?;
        for f in cx.nested_ops(module) {
            if cx.is(f, "func.func") && cx.entry_block(cx.region(f, 0)).is_some() {
                let (used, maps) = place_function(cx, f, &target)?;
                self.max_used = self.max_used.max(used);
                self.maps += maps;
            }
        }
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "max-tile-bytes",
                description: "Most data bytes used on one tile",
                value: self.max_used,
            },
            Statistic {
                name: "memory-maps",
                description: "Distinct tile memory layouts",
                value: self.maps,
            },
        ]
    }
}

/// A tile's placed buffers: (what, address, bytes), by address.
type Layout = Vec<(String, u64, u64)>;

/// One buffer of one tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub name: String,
    pub size: u64,
    /// First and last step it is alive.
    pub first: u32,
    pub last: u32,
}

/// Where each buffer goes: offsets (from the start of data memory), in the
/// buffers' order, and the bytes used.
pub fn place(buffers: &[Buffer]) -> (Vec<u64>, u64) {
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by(|&a, &b| {
        buffers[b]
            .size
            .cmp(&buffers[a].size)
            .then(buffers[a].name.cmp(&buffers[b].name))
    });
    let mut offsets = vec![0u64; buffers.len()];
    let mut placed: Vec<usize> = Vec::new();
    let mut used = 0;
    for i in order {
        let b = &buffers[i];
        // Address ranges of placed buffers alive at the same time, by start.
        let mut busy: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&j| buffers[j].first <= b.last && b.first <= buffers[j].last)
            .map(|&j| (offsets[j], offsets[j] + buffers[j].size))
            .collect();
        busy.sort_unstable();
        let mut at = 0u64;
        for (lo, hi) in busy {
            if at + b.size <= lo {
                break;
            }
            at = at.max(hi.div_ceil(8) * 8);
        }
        offsets[i] = at;
        used = used.max(at + b.size);
        placed.push(i);
    }
    (offsets, used)
}

fn place_function(cx: &mut Context, f: Op, target: &Target) -> Result<(u64, u64), Diagnostic> {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let ops = cx.block_ops_vec(entry);
    let mut tiles: BTreeMap<u32, Vec<Buffer>> = BTreeMap::new();
    // Each distributed value: its blocks' buffers (tile, index into that tile's list).
    let mut homes: FxHashMap<Value, Vec<(u32, usize)>> = FxHashMap::default();
    let mut names: FxHashMap<Value, String> = FxHashMap::default();
    let add = |tiles: &mut BTreeMap<u32, Vec<Buffer>>, tile: u32, b: Buffer| {
        let list = tiles.entry(tile).or_default();
        list.push(b);
        (tile, list.len() - 1)
    };
    let mut step = 0u32;
    let mut inputs = 0;
    for &op in &ops {
        let name = cx.name_str(op).to_string();
        let compute = name == "tile.matmul" || name == "tile.map";
        if compute {
            step += 1;
            for i in 0..cx.operands(op).len() {
                let v = cx.operand(op, i);
                // The producer's blocks live until this step.
                for &(t, k) in homes.get(&v).map(|h| h.as_slice()).unwrap_or(&[]) {
                    let b = &mut tiles.get_mut(&t).expect("tile")[k];
                    b.last = b.last.max(step);
                }
                let src_blocks = match cx.defining_op(v).and_then(|d| mapping_of(cx, d)) {
                    Some(m) => blocks(&m, &cx.value_shape(v)),
                    None => Vec::new(),
                };
                let eb = elem_bytes(cx, v) as u64;
                let need = needs(cx, op, i).map_err(|m| Diagnostic::error(cx.op_loc(op), m))?;
                for n in need {
                    let in_place = src_blocks
                        .iter()
                        .any(|s: &Block| s.tile == n.tile && s.lo == n.lo && s.hi == n.hi);
                    if in_place {
                        continue;
                    }
                    let elems: i64 = n.lo.iter().zip(&n.hi).map(|(l, h)| h - l).product();
                    add(
                        &mut tiles,
                        n.tile,
                        Buffer {
                            name: format!("s{step}.operand{i}"),
                            size: elems as u64 * eb,
                            first: step,
                            last: step,
                        },
                    );
                }
            }
            if name == "tile.matmul" {
                let plan = cx
                    .get_i64_array_attr(op, "plan")
                    .unwrap_or_default()
                    .to_vec();
                let t = cx
                    .get_i64_array_attr(op, "tiles")
                    .unwrap_or_default()
                    .to_vec();
                let (pm, pn, pk) = (plan[0], plan[1], plan[2]);
                let (a, b) = (
                    cx.value_shape(cx.operand(op, 0)),
                    cx.value_shape(cx.operand(op, 1)),
                );
                let (bm, bn) = ((a[0] + pm - 1) / pm, (b[1] + pn - 1) / pn);
                let pbytes = match cx.get_attr(op, "partials").map(|p| cx.attr_kind(p)) {
                    Some(ipu_ir::AttrKind::Type(ty)) => {
                        ipu_ir::numeric::storage_bytes(cx.type_kind(*ty)).unwrap_or(4) as u64
                    }
                    _ => 4,
                };
                let psize = (bm * bn) as u64 * pbytes;
                for k in 0..pk {
                    for i in 0..pm {
                        for j in 0..pn {
                            let tile = (t[0] + ((k * pm + i) * pn + j) * t[1]) as u32;
                            add(
                                &mut tiles,
                                tile,
                                Buffer {
                                    name: format!("s{step}.partials"),
                                    size: psize,
                                    first: step,
                                    last: step,
                                },
                            );
                            if k == 0 && pk > 1 {
                                add(
                                    &mut tiles,
                                    tile,
                                    Buffer {
                                        name: format!("s{step}.partials_in"),
                                        size: psize * (pk - 1) as u64,
                                        first: step,
                                        last: step,
                                    },
                                );
                            }
                        }
                    }
                }
            }
        }
        // Values with a mapping get their blocks.
        if cx.num_results(op) == 1 {
            if let Some(m) = mapping_of(cx, op) {
                let v = cx.result(op, 0);
                let label = match name.as_str() {
                    "tile.host_input" => {
                        inputs += 1;
                        format!("input{}", inputs - 1)
                    }
                    "tile.constant" => format!("const{}", names.len()),
                    _ => format!("s{step}.result"),
                };
                let eb = elem_bytes(cx, v) as u64;
                let mut home = Vec::new();
                for blk in blocks(&m, &cx.value_shape(v)) {
                    let elems: i64 = blk.lo.iter().zip(&blk.hi).map(|(l, h)| h - l).product();
                    home.push(add(
                        &mut tiles,
                        blk.tile,
                        Buffer {
                            name: label.clone(),
                            size: elems as u64 * eb,
                            first: step,
                            last: step,
                        },
                    ));
                }
                homes.insert(v, home);
                names.insert(v, label);
            }
        }
        if name == "tile.host_output" {
            let v = cx.operand(op, 0);
            for &(t, k) in homes.get(&v).map(|h| h.as_slice()).unwrap_or(&[]) {
                tiles.get_mut(&t).expect("tile")[k].last = u32::MAX;
            }
        }
    }
    let capacity = target.sram_bytes().saturating_sub(RESERVED_TILE_BYTES);
    let base = target.memory.base_address + RESERVED_TILE_BYTES;
    // Place, check, and group tiles with identical layouts.
    let mut groups: BTreeMap<Layout, (Vec<u32>, u64)> = BTreeMap::new();
    let mut max_used = 0;
    for (&tile, bufs) in &tiles {
        let (offsets, used) = place(bufs);
        if used > capacity {
            let mut largest: Vec<&Buffer> = bufs.iter().collect();
            largest.sort_by(|a, b| b.size.cmp(&a.size).then(a.name.cmp(&b.name)));
            let held: Vec<String> = largest
                .iter()
                .take(3)
                .map(|b| format!("{} ({} B)", b.name, b.size))
                .collect();
            return Err(Diagnostic::error(
                cx.op_loc(f),
                format!(
                    "tile {tile} does not fit: its data needs {used} bytes, but it has {capacity} ({} B of SRAM less {} B for code and exchange tables); largest buffers: {}",
                    target.sram_bytes(),
                    RESERVED_TILE_BYTES,
                    held.join(", ")
                ),
            ));
        }
        max_used = max_used.max(used);
        let mut layout: Layout = bufs
            .iter()
            .zip(&offsets)
            .map(|(b, &o)| (b.name.clone(), base + o, b.size))
            .collect();
        layout.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
        let e = groups.entry(layout).or_insert((Vec::new(), used));
        e.0.push(tile);
    }
    // Largest groups first, then by first tile: a stable, readable order.
    let mut ordered: Vec<_> = groups.into_iter().collect();
    ordered.sort_by(|a, b| {
        b.1 .0
            .len()
            .cmp(&a.1 .0.len())
            .then(a.1 .0[0].cmp(&b.1 .0[0]))
    });
    let first = cx.first_op(entry);
    let nmaps = ordered.len() as u64;
    for (layout, (group, used)) in ordered {
        let set = ipu_package::TileSet::from_tiles(group.iter().copied()).to_string();
        let bufs: Vec<_> = layout
            .iter()
            .map(|(n, addr, size)| cx.string_attr(&format!("{addr:#x} {size} B {n}")))
            .collect();
        let attrs = vec![
            (cx.sym("tiles"), cx.string_attr(&set)),
            (cx.sym("used"), cx.i64_attr(used as i64)),
            (cx.sym("free"), cx.i64_attr((capacity - used) as i64)),
            (cx.sym("buffers"), cx.array_attr(bufs)),
        ];
        let name = cx.op_name("machine.memory_map");
        let mut st = OperationState::new(name, cx.op_loc(f));
        st.attrs = cx.dict_attr(attrs);
        let m = cx.create_op(st);
        match first {
            Some(o) => cx.insert_op_before(o, m),
            None => cx.append_op(entry, m),
        }
    }
    Ok((max_used, nmaps))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(name: &str, size: u64, first: u32, last: u32) -> Buffer {
        Buffer {
            name: name.into(),
            size,
            first,
            last,
        }
    }

    #[test]
    fn buffers_alive_together_never_overlap_and_others_share() {
        let bufs = vec![buf("a", 100, 0, 1), buf("b", 50, 1, 2), buf("c", 100, 2, 3)];
        let (off, used) = place(&bufs);
        // a and b overlap in time: disjoint addresses; c reuses a's space.
        assert!(off[0] + 100 <= off[1] || off[1] + 50 <= off[0]);
        assert_eq!(off[2], off[0]);
        assert_eq!((off[1], used), (104, 154)); // b after a, 8-byte aligned
    }
}
