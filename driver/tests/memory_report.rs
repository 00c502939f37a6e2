//! The machine stage's memory report accounts for every byte of every
//! tile: its cut of each tile's memory covers the memory exactly once, the
//! categories are the cut's sums, and the cut agrees with the package the
//! same build wrote (code, tables, constants and host streams land where
//! the report says) and with the placements (free bytes are those no
//! buffer uses). Checked on test16 programs and on the main job's compile.

use ipu_lowering::exchange_to_machine::memory::{Category, MemoryReport, TileMemory};
use ipu_package::{Direction, Package};
use ipu_target::Target;

mod common;

/// Compiles `src` for `target` to the exchange stage, then builds the
/// package and its memory report.
fn compile(src: &str, target: &str) -> (Package, MemoryReport) {
    let (pkg, summary) = common::compile_with_summary("model.mlir", src, target);
    (pkg, summary.memory)
}

/// The categories of the regions `[at, at + len)` overlaps.
fn categories_over(m: &TileMemory, at: u64, len: u64) -> Vec<Category> {
    m.regions
        .iter()
        .filter(|r| r.start < at + len && at < r.start + r.len)
        .map(|r| r.category)
        .collect()
}

/// Bytes of `[at, at + len)` inside regions of `cats`.
fn bytes_in(m: &TileMemory, at: u64, len: u64, cats: &[Category]) -> u64 {
    m.regions
        .iter()
        .filter(|r| cats.contains(&r.category))
        .map(|r| {
            let lo = r.start.max(at);
            let hi = (r.start + r.len).min(at + len);
            hi.saturating_sub(lo)
        })
        .sum()
}

/// `[at, at + len)` lies inside one placement of a buffer of category `c`.
fn in_placement(r: &MemoryReport, m: &TileMemory, at: u64, len: u64, c: Category) -> bool {
    m.placements.iter().any(|p| {
        r.buffers[p.buffer].category == c && p.address <= at && at + len <= p.address + p.bytes
    })
}

/// Where a tile's data starts: its first region that is not code, a
/// table, records, rows or the gaps among them.
fn data_base_of(m: &TileMemory, end: u64) -> u64 {
    m.regions
        .iter()
        .find(|reg| {
            !matches!(
                reg.category,
                Category::Code
                    | Category::KernelRecords
                    | Category::ExchangeRows
                    | Category::FreeCodeReserve
            )
        })
        .map_or(end, |reg| reg.start)
}

fn check_accounting(pkg: &Package, r: &MemoryReport, target: &str) {
    let t = Target::load(target).unwrap();
    let base = t.memory.base_address;
    let end = t.memory_end();
    assert_eq!(r.tiles.len(), t.tiles() as usize);
    assert_eq!(r.tile_bytes, t.sram_bytes());
    for m in &r.tiles {
        // The cut covers [base, end) exactly once.
        let mut at = base;
        let data_base = data_base_of(m, end);
        for reg in &m.regions {
            assert_eq!(
                reg.start, at,
                "tile {}: a gap or overlap at {at:#x}",
                m.tile
            );
            assert!(reg.len > 0);
            at += reg.len;
            // Code and tables below the data, data above them.
            let in_reserve = reg.start + reg.len <= data_base;
            match reg.category {
                Category::Code
                | Category::KernelRecords
                | Category::ExchangeRows
                | Category::FreeCodeReserve => assert!(in_reserve, "tile {}: {reg:?}", m.tile),
                _ => assert!(reg.start >= data_base, "tile {}: {reg:?}", m.tile),
            }
            if let Some(b) = reg.buffer {
                assert_eq!(reg.category, r.buffers[b].category);
                // A buffer's region lies inside its placement on the tile.
                assert!(m.placements.iter().any(|p| p.buffer == b
                    && p.address <= reg.start
                    && reg.start + reg.len <= p.address + p.bytes));
            }
        }
        assert_eq!(at, end, "tile {}", m.tile);
        // The categories are the cut's sums and add up to the tile's memory.
        let mut sums = [0u64; 10];
        for reg in &m.regions {
            sums[reg.category.index()] += reg.len;
        }
        assert_eq!(sums, m.bytes, "tile {}", m.tile);
        assert_eq!(m.bytes.iter().sum::<u64>(), r.tile_bytes, "tile {}", m.tile);
        assert_eq!(m.bytes[Category::Stack.index()], 0);
        // Free data bytes are exactly those no placement covers.
        let mut spans: Vec<(u64, u64)> = m
            .placements
            .iter()
            .map(|p| (p.address, p.address + p.bytes))
            .collect();
        spans.sort_unstable();
        let (mut covered, mut reach) = (0u64, data_base);
        for (lo, hi) in spans {
            let lo = lo.max(reach);
            if hi > lo {
                covered += hi - lo;
                reach = hi;
            }
        }
        assert_eq!(
            m.bytes[Category::Free.index()],
            end - data_base - covered,
            "tile {}",
            m.tile
        );
        // Live data never exceeds the data memory, and is what is placed.
        assert_eq!(m.live.len(), r.steps.len() + 1);
        for (s, &v) in m.live.iter().enumerate() {
            let want: u64 = m
                .placements
                .iter()
                .filter(|p| p.first as usize <= s && s <= p.last as usize)
                .map(|p| p.bytes)
                .sum();
            assert_eq!(v, want);
            assert!(v <= end - data_base);
        }
    }
    // The package: each started tile's code, tables and constants.
    let mut started = 0;
    for g in &pkg.images {
        for tile in g.tiles.iter() {
            started += 1;
            let m = &r.tiles[tile as usize];
            assert!(m.started);
            let img = &g.image;
            let code_at = u64::from(img.code_address);
            assert_eq!(
                bytes_in(m, code_at, img.code.len() as u64, &[Category::Code]),
                img.code.len() as u64,
                "tile {tile}: the code lies in code regions"
            );
            let mut table = 0;
            for seg in img
                .data
                .iter()
                .chain(g.tile_data.get(&tile).into_iter().flatten())
            {
                let (at, len) = (u64::from(seg.address), seg.bytes.len() as u64);
                for c in categories_over(m, at, len) {
                    assert!(
                        matches!(
                            c,
                            Category::Code
                                | Category::KernelRecords
                                | Category::ExchangeRows
                                | Category::WeightsConstants
                        ),
                        "tile {tile}: a loaded segment at {at:#x} over {c:?}"
                    );
                }
                if at >= data_base_of(m, t.memory_end()) {
                    assert!(in_placement(r, m, at, len, Category::WeightsConstants));
                }
                table += bytes_in(
                    m,
                    at,
                    len,
                    &[Category::KernelRecords, Category::ExchangeRows],
                );
            }
            assert_eq!(
                table,
                m.bytes[Category::KernelRecords.index()] + m.bytes[Category::ExchangeRows.index()],
                "tile {tile}: records and rows are the loaded table"
            );
        }
    }
    assert_eq!(started, r.tiles.iter().filter(|m| m.started).count());
    // Load streams write parameters into weights and constants; input
    // streams write activations, and results are read from activations.
    for s in &pkg.meta.streams {
        let want = match s.direction {
            Direction::Load => Category::WeightsConstants,
            Direction::Input | Direction::Output => Category::Activations,
        };
        for tr in s.transfers() {
            let m = &r.tiles[tr.tile as usize];
            assert!(
                in_placement(r, m, u64::from(tr.tile_address), u64::from(tr.len), want),
                "stream {} on tile {}",
                s.name,
                tr.tile
            );
        }
    }
}

const MLP16: &str = r#"func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1"}, %b1: tensor<128xf16> {ipu.name = "b1", ipu.weight}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}"#;

#[test]
fn every_byte_of_the_test16_mlp_is_accounted_for() {
    let (pkg, r) = compile(MLP16, "test16");
    check_accounting(&pkg, &r, "test16");
    // Each category is there: the split-K matmul has partials, the f8
    // operand it widens a re-layout buffer (w1 streams in each run: a
    // parameter would have been widened by the host at load).
    let totals = r.totals();
    for c in [
        Category::Code,
        Category::KernelRecords,
        Category::ExchangeRows,
        Category::WeightsConstants,
        Category::Activations,
        Category::Partials,
        Category::Scratch,
    ] {
        assert!(totals[c.index()] > 0, "{c:?}");
    }
    // The buffers name their source ops.
    let rhs = r.buffers.iter().find(|b| b.name == "s1.rhs_f16").unwrap();
    assert_eq!(
        (rhs.category, rhs.op.as_str(), rhs.loc.as_str()),
        (Category::Scratch, "tile.matmul", "model.mlir:2:3")
    );
    let x = r.buffers.iter().find(|b| b.name == "input0").unwrap();
    assert_eq!(x.op, "host input x");
    // The summary lists the fullest tiles with their tensors.
    let text = r.summary_text(2);
    assert!(text.contains("s1.partials"), "{text}");
    assert!(text.contains("tile.matmul at model.mlir:2:3"), "{text}");
}

#[test]
fn constants_and_unused_tiles_are_accounted_for() {
    // A constant loaded with the images, on a program using few tiles.
    let src = r#"func.func @main(%x: tensor<4x16xf32> {ipu.name = "x"}) -> (tensor<4x16xf32> {ipu.name = "y"}) {
  %c = nn.constant dense<1.5> : tensor<4x16xf32>
  %y = nn.mul %x, %c : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}"#;
    let (pkg, r) = compile(src, "test16");
    check_accounting(&pkg, &r, "test16");
    // The splat constant is one of the mul's shape, placed in its operand buffer.
    assert!(
        r.buffers.iter().any(|b| b.op == "constant (placed)"),
        "{:?}",
        r.buffers.iter().map(|b| &b.op).collect::<Vec<_>>()
    );
    let idle = r.tiles.iter().filter(|m| !m.started).count();
    for m in r.tiles.iter().filter(|m| !m.started) {
        assert_eq!(m.used(), 0);
    }
    let running: u64 = pkg.images.iter().map(|g| g.tiles.len()).sum();
    assert_eq!(idle as u64 + running, 16);
}

#[test]
fn every_byte_of_the_main_job_is_accounted_for() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/mlp.mlir"))
        .unwrap();
    let (pkg, r) = compile(&src, "ipu21");
    check_accounting(&pkg, &r, "ipu21");
    assert_eq!(r.tiles.len(), 1472);
}
