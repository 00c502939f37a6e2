//! A gather with run-time indices, compiled for test16 and run through the
//! driver's device loader: in-range indices (negative ones counting from
//! the end) give the table's rows; an index out of range is a device fault
//! of the gather kernel's bounds check on every tile that holds a slice of
//! the table, never a read outside it (the reference interpreter refuses
//! such an index before a device run, so `ipu-run` cannot show this).

use std::collections::BTreeMap;

use ipu_driver::device::run_on_chip;
use ipu_package::Package;
use ipu_runtime::chip::ChipFault;
use ipu_runtime::FaultKind;
use ipu_target::Target;

mod common;

const TARGET: &str = "test16";
const MODEL: &str = r#"
func.func @main(%w: tensor<6x8xf32> {ipu.name = "w"}, %i: tensor<3xi64> {ipu.name = "i"}) -> (tensor<3x8xf32> {ipu.name = "y"}) {
  %y = nn.gather %w[%i] {axis = 0} : (tensor<6x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}
"#;

fn package() -> Package {
    common::compile("gather.mlir", MODEL, TARGET)
}

/// Runs the package with table rows `w[r][c] = 10 r + c` and indices `idx`.
fn run(pkg: &Package, idx: &[i64]) -> ipu_driver::device::DeviceRun {
    let w: Vec<u8> = (0..6)
        .flat_map(|r| (0..8).map(move |c| (10 * r + c) as f32))
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let i: Vec<u8> = idx.iter().flat_map(|v| v.to_le_bytes()).collect();
    let inputs = BTreeMap::from([("w".to_string(), w), ("i".to_string(), i)]);
    let target = Target::load(TARGET).unwrap();
    run_on_chip(pkg, &target, &inputs, "main", 2_000_000).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn indices_in_range_pick_rows_and_out_of_range_faults() {
    let pkg = package();
    let ok = run(&pkg, &[5, -6, -1]);
    assert!(ok.hardware_pass(), "{:?}", ok.faults);
    let y: Vec<f32> = ok.outputs["y"]
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let want: Vec<f32> = [5, 0, 5]
        .iter()
        .flat_map(|&r| (0..8).map(move |c| (10 * r + c) as f32))
        .collect();
    assert_eq!(y, want);

    for (idx, bad) in [(vec![1i64, 6, 0], 6), (vec![0, 2, -7], -1)] {
        let run = run(&pkg, &idx);
        assert!(!run.hardware_pass(), "indices {idx:?} must fault");
        assert!(!run.faults.is_empty(), "indices {idx:?}: no fault");
        for f in &run.faults {
            match f {
                ChipFault::Tile(t) => {
                    assert_eq!(
                        t.kind,
                        FaultKind::IndexOutOfRange {
                            index: bad,
                            bound: 6
                        },
                        "indices {idx:?}: {f}"
                    );
                    assert!(t.instruction.starts_with("bndchk"), "{f}");
                }
                other => panic!("indices {idx:?}: not a bounds check fault: {other}"),
            }
        }
    }
}
