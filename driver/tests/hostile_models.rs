//! Issue 32: no tool writes a file outside the paths on its command line.
//! Every tool runs on hostile models (results named `../../x`, an absolute
//! path, `""`, twice the same name; weights `../w.bin`; ONNX output names
//! that climb; ONNX external data at `../../etc/passwd`) inside a temporary
//! tree. The tree is snapshot (paths, sizes, hashes, modification times)
//! before and after each run: only the outputs named on that command line
//! may change, and nothing may appear outside the tree. (Permission bits
//! would not show this: the tests may run as root.)

use ipu_onnx::proto;
use prost::Message;
use sha2::Digest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file's size, SHA-256 and modification time.
type Entry = (u64, Vec<u8>, std::time::SystemTime);

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let p = e.path();
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                stack.push(p.clone());
                out.insert(p, (0, Vec::new(), meta.modified().unwrap()));
            } else {
                let bytes = std::fs::read(&p).unwrap();
                let hash = sha2::Sha256::digest(&bytes).to_vec();
                out.insert(p, (meta.len(), hash, meta.modified().unwrap()));
            }
        }
    }
    out
}

struct Tree {
    root: PathBuf,
    /// Where the models live, two levels down (so `../../x` stays in the tree).
    models: PathBuf,
    out: PathBuf,
    abs: PathBuf,
}

impl Tree {
    fn new(name: &str) -> Tree {
        let root = std::env::temp_dir().join(format!("ipu-hostile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let models = root.join("a/b/models");
        let out = root.join("a/b/out");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let abs = std::env::temp_dir().join(format!("ipu-hostile-abs-{}", std::process::id()));
        Tree {
            root,
            models,
            out,
            abs,
        }
    }

    fn model(&self, name: &str, text: &str) -> PathBuf {
        let p = self.models.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Runs `args` with `tool`; only the paths in `allowed` may change (be
    /// made, replaced or removed) in the tree, and the absolute name the
    /// hostile models use must not appear. Returns whether the tool succeeded.
    fn run(&self, tool: &str, args: &[&dyn AsRef<std::ffi::OsStr>], allowed: &[PathBuf]) -> bool {
        let before = snapshot(&self.root);
        let exe = match tool {
            "ipu-opt" => env!("CARGO_BIN_EXE_ipu-opt"),
            "ipu-translate" => env!("CARGO_BIN_EXE_ipu-translate"),
            _ => env!("CARGO_BIN_EXE_ipu-run"),
        };
        let mut c = Command::new(exe);
        c.current_dir(&self.models);
        for a in args {
            c.arg(a);
        }
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let status = c
            .env("IPU_KERNEL_CACHE", repo.join("target/kernel-cache"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        let after = snapshot(&self.root);
        let paths: std::collections::BTreeSet<&PathBuf> =
            before.keys().chain(after.keys()).collect();
        for p in paths {
            if before.get(p) != after.get(p) && !allowed.contains(p) {
                // A directory's time changes when an allowed file in it is replaced.
                let dir_of_allowed = after.get(p).is_some_and(|e| e.1.is_empty())
                    && allowed.iter().any(|a| a.parent() == Some(p));
                assert!(
                    dir_of_allowed,
                    "{tool} {:?}: changed {} (allowed: {allowed:?})",
                    args.iter()
                        .map(|a| a.as_ref().to_owned())
                        .collect::<Vec<_>>(),
                    p.display()
                );
            }
        }
        for abs in [self.abs.clone(), self.abs.with_extension("npy")] {
            assert!(!abs.exists(), "{tool}: wrote {}", abs.display());
        }
        status.success()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A function with one input `x` and results named `names`.
fn model_with_results(names: &[&str]) -> String {
    let res: Vec<String> = names
        .iter()
        .map(|n| format!("tensor<4xf32> {{ipu.name = \"{n}\"}}"))
        .collect();
    let vals: Vec<String> = (0..names.len()).map(|i| format!("%{i}")).collect();
    let mut body = String::new();
    for i in 0..names.len() {
        body.push_str(&format!("  %{i} = nn.relu %arg0 : tensor<4xf32>\n"));
    }
    format!(
        "func.func @main(%arg0: tensor<4xf32> {{ipu.name = \"x\"}}) -> ({}) {{\n{body}  return {} : {}\n}}\n",
        res.join(", "),
        vals.join(", "),
        vec!["tensor<4xf32>"; names.len()].join(", ")
    )
}

#[test]
fn result_names_never_leave_the_output_folder() {
    let t = Tree::new("names");
    let abs = t.abs.display().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["../../x"],
        vec![abs.as_str()],
        vec![""],
        vec!["y", "y"],
        vec!["Y", "y"],
        vec!["..", "ok"],
    ];
    for (i, names) in cases.iter().enumerate() {
        let m = t.model(&format!("m{i}.mlir"), &model_with_results(names));
        let pkg = t.out.join(format!("m{i}.ipuexe"));
        let lock = t.root.join("lock");
        let out = t.out.clone();
        // The reference run and the device run refuse before writing any result.
        // (The output folder itself is named: its time may change, not its files.)
        assert!(!t.run(
            "ipu-run",
            &[&"--reference-only", &m, &"--output-dir", &out],
            std::slice::from_ref(&out)
        ));
        let ok = t.run(
            "ipu-run",
            &[
                &"--target",
                &"test4",
                &m,
                &"--output-dir",
                &out,
                &"--device-lock",
                &lock,
                &"--write-package",
                &pkg,
            ],
            &[pkg.clone(), lock.clone(), out.clone()],
        );
        assert!(!ok, "{names:?}");
        // ipu-opt writes only -o.
        let o = t.out.join(format!("m{i}.out.mlir"));
        t.run("ipu-opt", &[&m, &"-o", &o], std::slice::from_ref(&o));
    }
}

#[test]
fn weights_outside_the_model_folder_are_not_read_or_written() {
    let t = Tree::new("weights");
    let onnx = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lit/Target/ONNX/Inputs/mlp.onnx");
    // A --weights-file outside the IR's folder is refused without the flag:
    // neither file is written.
    let ir = t.out.join("mlp.mlir");
    let w = t.root.join("a/w.bin");
    assert!(!t.run(
        "ipu-translate",
        &[&"--import-onnx", &onnx, &"-o", &ir, &"--weights-file", &w],
        &[]
    ));
    // An IR that names ../w.bin (with a real hash) is refused by every reader.
    assert!(t.run(
        "ipu-translate",
        &[&"--import-onnx", &onnx, &"-o", &ir],
        &[ir.clone(), t.out.join("mlp.mlir.weights")]
    ));
    let text = std::fs::read_to_string(&ir).unwrap();
    let hostile = t.model(
        "climb.mlir",
        &text.replace("\"mlp.mlir.weights\"", "\"../w.bin\""),
    );
    std::fs::copy(t.out.join("mlp.mlir.weights"), t.root.join("a/b/w.bin")).unwrap();
    let o = t.out.join("o.mlir");
    assert!(!t.run(
        "ipu-run",
        &[&"--reference-only", &hostile, &"--output-dir", &t.out],
        std::slice::from_ref(&t.out)
    ));
    assert!(!t.run("ipu-opt", &[&hostile, &"-o", &o], std::slice::from_ref(&o)));
    assert!(!o.exists(), "a failed ipu-opt made its output");
    let pkg = t.out.join("p.ipuexe");
    assert!(!t.run(
        "ipu-translate",
        &[&"--to-ipuexe", &hostile, &"-o", &pkg],
        &[]
    ));
}

fn value_info(name: &str) -> proto::ValueInfoProto {
    use proto::tensor_shape_proto::{dimension::Value, Dimension};
    proto::ValueInfoProto {
        name: name.into(),
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(
                proto::type_proto::Tensor {
                    elem_type: proto::tensor_proto::DataType::Float as i32,
                    shape: Some(proto::TensorShapeProto {
                        dim: vec![Dimension {
                            value: Some(Value::DimValue(4)),
                            ..Default::default()
                        }],
                    }),
                },
            )),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `y = x + w` with graph output `output`; `w` stored as external data at
/// `location` when given, else inline.
fn onnx_model(output: &str, location: Option<&str>) -> Vec<u8> {
    let mut w = proto::TensorProto {
        name: "w".into(),
        data_type: proto::tensor_proto::DataType::Float as i32,
        dims: vec![4],
        ..Default::default()
    };
    match location {
        Some(loc) => {
            w.data_location = proto::tensor_proto::DataLocation::External as i32;
            w.external_data.push(proto::StringStringEntryProto {
                key: "location".into(),
                value: loc.into(),
            });
        }
        None => w.float_data = vec![1.0, 2.0, 3.0, 4.0],
    }
    let model = proto::ModelProto {
        ir_version: 8,
        opset_import: vec![proto::OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(proto::GraphProto {
            node: vec![proto::NodeProto {
                op_type: "Add".into(),
                input: vec!["x".into(), "w".into()],
                output: vec![output.into()],
                ..Default::default()
            }],
            initializer: vec![w],
            input: vec![value_info("x")],
            output: vec![value_info(output)],
            ..Default::default()
        }),
        ..Default::default()
    };
    model.encode_to_vec()
}

#[test]
fn onnx_names_and_external_data_stay_inside() {
    let t = Tree::new("onnx");
    for (i, loc) in ["../../etc/passwd", "/etc/passwd", "w.bin"]
        .iter()
        .enumerate()
    {
        let m = t.models.join(format!("ext{i}.onnx"));
        std::fs::write(&m, onnx_model("y", Some(loc))).unwrap();
        let ir = t.out.join(format!("ext{i}.mlir"));
        assert!(!t.run("ipu-translate", &[&"--import-onnx", &m, &"-o", &ir], &[]));
    }
    // An ONNX graph output named to climb out: imported (the name is only
    // a name), then refused when it would become a file.
    let m = t.models.join("climb.onnx");
    std::fs::write(&m, onnx_model("../../x", None)).unwrap();
    let ir = t.out.join("climb.mlir");
    assert!(t.run(
        "ipu-translate",
        &[&"--import-onnx", &m, &"-o", &ir],
        std::slice::from_ref(&ir)
    ));
    assert!(!t.run(
        "ipu-run",
        &[&"--reference-only", &ir, &"--output-dir", &t.out],
        std::slice::from_ref(&t.out)
    ));
    assert!(t.run("ipu-run", &[&"--reference-only", &ir], &[]));
}
