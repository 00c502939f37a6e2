//! `ipu-run` on the simulated device, `ipu-translate --to-ipuexe` and
//! `--from-ipuexe`, with packages built by hand on the 4-tile test target:
//! a relu over two tiles whose reference model travels in the package.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ipu_isa::asm::assemble;
use ipu_isa::link::{link, LinkLayout};
use ipu_package::*;
use ipu_target::Target;

const RUN: &str = env!("CARGO_BIN_EXE_ipu-run");
const TRANSLATE: &str = env!("CARGO_BIN_EXE_ipu-translate");

const SOURCE: &str = "func.func @main(%x: tensor<2x4xf32> {ipu.name = \"x\"}) -> (tensor<2x4xf32> {ipu.name = \"y\"}) {
  %y = nn.relu %x : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
";

/// A worker applies `op` to 4 f32 at 0x90000 and stores them at `out`.
fn program(op: &str, input: u32, tail: &str) -> String {
    format!(
        "        .globl main
main:   setzi $m2, worker
        setzi $m3, 0
        run $m2, $m3
        sync 0
{tail}
        halt
worker: setzi $m2, {input:#x}
        setzi $m3, 0xa0000
        setzi $m4, 2
        rpt $m4, end
        ld64 $a0:1, [$m2+=8]
        {op} $a0:1, $a0:1
        st64 $a0:1, [$m3+=8]
end:    exit
"
    )
}

/// The package: tiles 0 and 1 each take 4 elements of `x`, tiles 2 and 3
/// are idle.
fn package(op: &str, input: u32) -> Package {
    package_with(op, input, "")
}

/// [`package`] with `tail` before the supervisor's `halt`.
fn package_with(op: &str, input: u32, tail: &str) -> Package {
    let t = Target::load("test4").unwrap();
    let a = assemble("relu.S", &program(op, input, tail), &BTreeMap::new()).unwrap();
    let img = link(
        &[("relu", &a.object)],
        &LinkLayout::new(t.memory.base_address as u32, t.memory_end() as u32),
    )
    .unwrap();
    let code = &img.segments[0];
    assert!(code.exec);
    let image = TileImage {
        code_address: code.address,
        code: code.bytes.clone(),
        data: Vec::new(),
        zero: vec![ZeroRange {
            address: 0xa0000,
            len: 16,
        }],
        entries: [("main".to_string(), img.symbol("main").unwrap())]
            .into_iter()
            .collect(),
    };
    let regular = |address| StreamPiece::Regular {
        tiles: TileSet::run(0, 2, 1),
        tile_address: address,
        host_offset: 0,
        host_stride: 16,
        len: 16,
    };
    let meta = Metadata {
        target: TargetInfo {
            name: "test4".into(),
            description_sha256: Digest::of(t.source_text.as_bytes()),
            tile_count: 4,
            memory_base: t.memory.base_address as u32,
            memory_bytes: t.sram_bytes() as u32,
        },
        compiler_version: "0.1.0".into(),
        source_sha256: Digest::of(SOURCE.as_bytes()),
        entry_points: vec![EntryPoint {
            name: "main".into(),
            command: 0,
            phases: 1,
        }],
        streams: vec![
            HostStream {
                name: "x".into(),
                direction: Direction::Input,
                element: ElementType::F32,
                shape: vec![2, 4],
                host_element: None,
                layout: vec![regular(0x90000)],
            },
            HostStream {
                name: "y".into(),
                direction: Direction::Output,
                element: ElementType::F32,
                shape: vec![2, 4],
                host_element: None,
                layout: vec![regular(0xa0000)],
            },
        ],
        steps: vec![StepSummary {
            kind: StepKind::Compute,
            label: "@relu".into(),
            cycles: Some(60),
            bound: None,
        }],
        source: Some(SOURCE.into()),
        probes: Vec::new(),
    };
    let p = Package::from_tile_images(meta, (0..2).map(|t| (t, image.clone())));
    p.validate().unwrap();
    p
}

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("device_run");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(tool: &str, args: &[&str]) -> Out {
    let o = Command::new(tool)
        .args(args)
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn write(name: &str, p: &Package) -> String {
    let path = tmp(name);
    p.write_file(&path).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn relu_passes_on_the_device() {
    let file = write("relu.ipuexe", &package("f32v2relu", 0x90000));
    let lock = tmp("relu.lock");
    let prof = tmp("relu.json");
    let outdir = tmp("relu.out");
    let o = run(
        RUN,
        &[
            &file,
            "--device-lock",
            lock.to_str().unwrap(),
            "--profile",
            prof.to_str().unwrap(),
            "--output-dir",
            outdir.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", o.stdout);
    assert!(
        lines[0].starts_with(&format!("profile={} tiles=4 cycles=", prof.display())),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        "referenceMaximumAbsoluteError=0.000000 numericalTest=PASS"
    );
    assert_eq!(
        lines[2],
        format!("package={file} tiles=4 hardwareTest=PASS")
    );
    assert!(
        o.stderr.contains("waiting for hardware ownership"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("acquired hardware ownership"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("input 'x'"), "{}", o.stderr);
    assert!(o.stderr.contains("wall_ms"), "{}", o.stderr);
    // The profile is JSON with supersteps named after the step summary.
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    assert!(events
        .iter()
        .any(|e| e["name"] == "compute @relu" && e["args"]["estimated_cycles"] == 60));
    assert!(events
        .iter()
        .any(|e| e["name"] == "tile 1" && e["args"]["code_bytes"].as_u64().unwrap() > 0));
    // Deterministic: the same run writes the same profile.
    let first = std::fs::read(&prof).unwrap();
    let o2 = run(
        RUN,
        &[
            &file,
            "--device-lock",
            lock.to_str().unwrap(),
            "--profile",
            prof.to_str().unwrap(),
        ],
    );
    assert_eq!(o2.code, 0);
    assert_eq!(std::fs::read(&prof).unwrap(), first);
    // Device outputs as .npy.
    let y = ipu_reference::npy::read_npy(outdir.join("y.npy")).unwrap();
    assert!(y.to_f32_vec().iter().all(|&v| v >= 0.0));
    assert_eq!(y.shape(), &[2, 4]);
}

#[test]
fn given_inputs_reach_the_device() {
    let file = write("relu_in.ipuexe", &package("f32v2relu", 0x90000));
    let x = ipu_reference::Tensor::from_f32(
        vec![2, 4],
        ipu_reference::ElementType::F32,
        vec![-1.0, 2.0, -3.0, 4.0, 5.5, -6.0, 0.0, 8.0],
    )
    .unwrap();
    let xin = tmp("x.npy");
    ipu_reference::npy::write_npy(&xin, &x).unwrap();
    let o = run(
        RUN,
        &[
            &file,
            "--input",
            &format!("x={}", xin.display()),
            "--device-lock",
            tmp("in.lock").to_str().unwrap(),
            "--print-outputs",
        ],
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("y: tensor<2x4xf32> = [0, 2, 0, 4, 5.5, 0, 0, 8]"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.starts_with("tiles=4 cycles="), "{}", o.stdout);
}

#[test]
fn a_wrong_program_fails_the_numerical_test() {
    let file = write("abs.ipuexe", &package("f32v2abs", 0x90000));
    let o = run(
        RUN,
        &[&file, "--device-lock", tmp("abs.lock").to_str().unwrap()],
    );
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("numericalTest=FAIL"), "{}", o.stdout);
    assert!(o.stdout.contains("hardwareTest=PASS"), "{}", o.stdout);
    assert!(o.stderr.contains("output 'y':"), "{}", o.stderr);
    assert!(o.stderr.contains("device "), "{}", o.stderr);
}

#[test]
fn a_faulting_program_fails_the_hardware_test() {
    // Reads beyond tile memory (which ends at 0xe8000 on test4).
    let file = write("fault.ipuexe", &package("f32v2relu", 0xf0000));
    let o = run(
        RUN,
        &[&file, "--device-lock", tmp("fault.lock").to_str().unwrap()],
    );
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("hardwareTest=FAIL"), "{}", o.stdout);
    assert!(o.stdout.contains("numericalTest=FAIL"), "{}", o.stdout);
    assert!(
        o.stderr
            .contains("device fault: tile 0, worker 0, pc 0x4c024, cycle 30"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("ld64"), "{}", o.stderr);
}

#[test]
fn damaged_packages_are_refused() {
    let good = package("f32v2relu", 0x90000).to_elf_bytes();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated.ipuexe", good[..good.len() / 2].to_vec()),
        ("flipped.ipuexe", {
            let mut b = good.clone();
            let n = b.len();
            b[n / 3] ^= 0x10;
            b
        }),
        ("empty.ipuexe", Vec::new()),
    ];
    for (name, bytes) in cases {
        let path = tmp(name);
        std::fs::write(&path, bytes).unwrap();
        let o = run(
            RUN,
            &[
                path.to_str().unwrap(),
                "--device-lock",
                tmp("dmg.lock").to_str().unwrap(),
            ],
        );
        assert_eq!(o.code, 1, "{name}: {}", o.stderr);
        assert!(o.stderr.contains("ipu-run: "), "{name}: {}", o.stderr);
        assert!(!o.stderr.contains("panicked"), "{name}: {}", o.stderr);
        let o = run(TRANSLATE, &["--from-ipuexe", path.to_str().unwrap()]);
        assert_eq!(o.code, 1, "{name}: {}", o.stderr);
        assert!(
            o.stderr.starts_with("ipu-translate: "),
            "{name}: {}",
            o.stderr
        );
        assert!(!o.stderr.contains("panicked"), "{name}: {}", o.stderr);
    }
}

#[test]
fn a_package_without_source_is_refused() {
    let mut p = package("f32v2relu", 0x90000);
    p.meta.source = None;
    let file = write("nosource.ipuexe", &p);
    let o = run(
        RUN,
        &[&file, "--device-lock", tmp("ns.lock").to_str().unwrap()],
    );
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("carries no source model"), "{}", o.stderr);
}

#[test]
fn translate_round_trips_packages() {
    let p = package("f32v2relu", 0x90000);
    let file = write("rt.ipuexe", &p);
    let mlir = tmp("rt.mlir");
    let o = run(
        TRANSLATE,
        &["--from-ipuexe", &file, "-o", mlir.to_str().unwrap()],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = std::fs::read_to_string(&mlir).unwrap();
    assert!(text.contains("machine.package \"test4\""), "{text}");
    assert!(text.contains("machine.image tiles \"0 to 1\""), "{text}");
    let back = tmp("rt2.ipuexe");
    let o = run(
        TRANSLATE,
        &[
            "--to-ipuexe",
            mlir.to_str().unwrap(),
            "-o",
            back.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&file).unwrap());
    // The IR form of the package is a lit input too (kept in sync here).
    let lit_input =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../lit/Runtime/Inputs/relu.machine.mlir");
    if std::env::var_os("IPU_UPDATE_LIT_INPUTS").is_some() {
        std::fs::create_dir_all(lit_input.parent().unwrap()).unwrap();
        std::fs::write(&lit_input, &text).unwrap();
    }
    if let Ok(existing) = std::fs::read_to_string(&lit_input) {
        assert_eq!(
            existing, text,
            "lit/Runtime/Inputs/relu.machine.mlir is stale: rerun with IPU_UPDATE_LIT_INPUTS=1"
        );
    }
}

#[test]
fn to_ipuexe_can_attach_the_source_model() {
    let mut p = package("f32v2relu", 0x90000);
    p.meta.source = None;
    p.meta.source_sha256 = Digest::of(b"something else");
    let file = write("nosrc.ipuexe", &p);
    let mlir = tmp("nosrc.mlir");
    let o = run(
        TRANSLATE,
        &["--from-ipuexe", &file, "-o", mlir.to_str().unwrap()],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let src = tmp("relu.mlir");
    std::fs::write(&src, SOURCE).unwrap();
    let out = tmp("withsrc.ipuexe");
    let o = run(
        TRANSLATE,
        &[
            "--to-ipuexe",
            mlir.to_str().unwrap(),
            "--source",
            src.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let back = Package::read_file(&out).unwrap();
    assert_eq!(back.meta.source.as_deref(), Some(SOURCE));
    assert_eq!(back, package("f32v2relu", 0x90000));
    let o = run(
        RUN,
        &[
            out.to_str().unwrap(),
            "--device-lock",
            tmp("src.lock").to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("numericalTest=PASS"));
}

#[test]
fn the_device_lock_excludes_a_second_run() {
    // Hold the lock here; a run waits until it is released.
    let lock = tmp("held.lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .unwrap();
    f.lock().unwrap();
    let file = write("locked.ipuexe", &package("f32v2relu", 0x90000));
    let mut child = Command::new(RUN)
        .args([file.as_str(), "--device-lock", lock.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run did not wait for the lock"
    );
    f.unlock().unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("waiting for hardware ownership"), "{err}");
    assert!(err.contains("acquired hardware ownership"), "{err}");
}

#[test]
fn supersteps_are_profiled_with_their_step_summaries() {
    // Two syncs after the relu: three supersteps.
    let mut p = package_with(
        "f32v2relu",
        0x90000,
        "        sync 1\n        delay 20\n        sync 1",
    );
    p.meta.steps = vec![
        StepSummary {
            kind: StepKind::Compute,
            label: "@relu".into(),
            cycles: Some(60),
            bound: None,
        },
        StepSummary {
            kind: StepKind::Compute,
            label: "@wait".into(),
            cycles: Some(20),
            bound: Some(15),
        },
        StepSummary {
            kind: StepKind::Sync,
            label: "end".into(),
            cycles: None,
            bound: None,
        },
    ];
    let file = write("steps.ipuexe", &p);
    let prof = tmp("steps.json");
    let o = run(
        RUN,
        &[
            &file,
            "--device-lock",
            tmp("steps.lock").to_str().unwrap(),
            "--profile",
            prof.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let steps: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["cat"] == "superstep").collect();
    assert_eq!(steps.len(), 3, "{trace}");
    assert_eq!(steps[0]["name"], "compute @relu");
    assert_eq!(steps[1]["name"], "compute @wait");
    assert_eq!(steps[1]["args"]["estimated_cycles"], 20);
    // Each superstep's bound, where the package has one.
    assert_eq!(steps[1]["args"]["bound_cycles"], 15);
    assert!(steps[0]["args"]["bound_cycles"].is_null(), "{trace}");
    assert_eq!(steps[2]["name"], "sync end");
    // The second superstep starts at the first release.
    assert_eq!(steps[1]["ts"], steps[0]["args"]["sync_release_cycle"]);
    let per_tile: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["cat"] == "tile_superstep" && e["args"]["tile"] == 0)
        .collect();
    assert!(per_tile.len() >= 2, "{trace}");
    assert!(
        per_tile[1]["args"]["active_cycles"].as_u64().unwrap() >= 20,
        "{trace}"
    );
    // One track per tile group: its own process, a slice per superstep
    // spanning to the group's last arrival, and its memory counter.
    let groups = p.images.len();
    assert_eq!(trace["otherData"]["tile_groups"], groups as u64);
    let group_steps: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["cat"] == "group_superstep")
        .collect();
    assert_eq!(group_steps.len(), groups * 3, "{trace}");
    assert!(group_steps[1]["dur"].as_u64().unwrap() >= per_tile[1]["dur"].as_u64().unwrap());
    let counters: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "C").collect();
    assert_eq!(counters.len(), groups + 1, "{trace}");
    assert!(counters.iter().all(
        |c| c["name"] == "memory loaded (bytes)" && c["args"]["max tile"].as_u64().unwrap() > 0
    ));
}
