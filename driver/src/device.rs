//! The device side of `ipu-run`: host tensors <-> stream bytes, loading a
//! package onto the chip simulator, running it, reading the outputs back,
//! comparing them with the reference, the device lock and the profile.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use ipu_package::{Direction, ElementType as StreamType, HostStream, Package};
use ipu_reference::{ElementType, Fp8Format, Tensor, TensorData};
use ipu_runtime::chip::{Chip, ChipFault, ChipOutcome, ChipReport};
use ipu_target::Target;

/// The reference element type of a stream element type.
pub fn reference_type(e: StreamType) -> ElementType {
    match e {
        StreamType::F32 => ElementType::F32,
        StreamType::F16 => ElementType::F16,
        StreamType::BF16 => ElementType::BF16,
        StreamType::F8E4M3FN => ElementType::F8E4M3FN,
        StreamType::F8E5M2 => ElementType::F8E5M2,
        StreamType::I64 => ElementType::I64,
        StreamType::I32 => ElementType::I32,
        StreamType::I16 => ElementType::I16,
        StreamType::I8 => ElementType::I8,
        StreamType::U32 => ElementType::U32,
        StreamType::U16 => ElementType::U16,
        StreamType::U8 => ElementType::U8,
        StreamType::Bool => ElementType::I1,
    }
}

/// The stream element type whose reference type is `e` (the inverse of
/// [`reference_type`]), if a stream can carry it.
pub fn stream_type(e: ElementType) -> Option<StreamType> {
    StreamType::ALL
        .into_iter()
        .find(|&s| reference_type(s) == e)
}

/// The bytes of `t` as stream elements of type `e` (little-endian; FP8 as
/// codes at the tensor's scale; `i1` one byte 0/1).
pub fn tensor_to_bytes(t: &Tensor, e: StreamType) -> Result<Vec<u8>, String> {
    if t.dtype() != reference_type(e) {
        return Err(format!("a {} tensor cannot feed a {e} stream", t.ty()));
    }
    let mut out = Vec::with_capacity(t.numel() * e.size_bytes() as usize);
    match (t.data(), e) {
        (TensorData::F32(v), StreamType::F32) => v.iter().for_each(|x| out.extend(x.to_le_bytes())),
        (TensorData::F32(v), StreamType::F16) => v
            .iter()
            .for_each(|&x| out.extend(half::f16::from_f32(x).to_bits().to_le_bytes())),
        (TensorData::F32(v), StreamType::BF16) => v
            .iter()
            .for_each(|&x| out.extend(half::bf16::from_f32(x).to_bits().to_le_bytes())),
        (TensorData::F32(_), StreamType::F8E4M3FN | StreamType::F8E5M2) => {
            out = t.fp8_codes().ok_or("an FP8 tensor without codes")?;
        }
        (TensorData::I64(v), _) => {
            let w = e.size_bytes() as usize;
            for &x in v {
                out.extend_from_slice(&x.to_le_bytes()[..w]);
            }
        }
        _ => return Err(format!("cannot convert a {} tensor to {e}", t.ty())),
    }
    Ok(out)
}

/// A tensor of `shape` from stream bytes of type `e` (FP8 codes read at
/// `fp8_scale`).
pub fn bytes_to_tensor(
    bytes: &[u8],
    shape: &[usize],
    e: StreamType,
    fp8_scale: i32,
) -> Result<Tensor, String> {
    let w = e.size_bytes() as usize;
    let n: usize = shape.iter().product();
    if bytes.len() != n * w {
        return Err(format!("{} bytes for {n} elements of {e}", bytes.len()));
    }
    let err = |x: ipu_reference::EvalError| x.to_string();
    let shape = shape.to_vec();
    let ty = reference_type(e);
    let le = |c: &[u8]| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    };
    match e {
        StreamType::F32 => {
            let v = bytes
                .chunks_exact(4)
                .map(|c| f32::from_bits(le(c) as u32))
                .collect();
            Tensor::from_f32(shape, ty, v).map_err(err)
        }
        StreamType::F16 => {
            let v = bytes
                .chunks_exact(2)
                .map(|c| half::f16::from_bits(le(c) as u16).to_f32())
                .collect();
            Tensor::from_f32(shape, ty, v).map_err(err)
        }
        StreamType::BF16 => {
            let v = bytes
                .chunks_exact(2)
                .map(|c| half::bf16::from_bits(le(c) as u16).to_f32())
                .collect();
            Tensor::from_f32(shape, ty, v).map_err(err)
        }
        StreamType::F8E4M3FN => {
            Tensor::from_fp8_codes(shape, Fp8Format::E4M3FN, bytes, fp8_scale).map_err(err)
        }
        StreamType::F8E5M2 => {
            Tensor::from_fp8_codes(shape, Fp8Format::E5M2, bytes, fp8_scale).map_err(err)
        }
        StreamType::Bool => {
            Tensor::from_bool(shape, bytes.iter().map(|&b| b != 0).collect()).map_err(err)
        }
        _ => {
            let signed = matches!(
                e,
                StreamType::I64 | StreamType::I32 | StreamType::I16 | StreamType::I8
            );
            let v = bytes
                .chunks_exact(w)
                .map(|c| {
                    let u = le(c);
                    let shift = 64 - 8 * w as u32;
                    if signed {
                        ((u << shift) as i64) >> shift
                    } else {
                        u as i64
                    }
                })
                .collect();
            Tensor::from_i64(shape, ty, v).map_err(err)
        }
    }
}

/// Mantissa bits (without the implicit one) of a float stream type.
fn mantissa_bits(e: StreamType) -> Option<i32> {
    match e {
        StreamType::F32 => Some(23),
        StreamType::F16 => Some(10),
        StreamType::BF16 => Some(7),
        StreamType::F8E4M3FN => Some(3),
        StreamType::F8E5M2 => Some(2),
        _ => None,
    }
}

/// Units in the last place allowed per float type (see [`tolerance`]).
pub fn tolerance_ulps(e: StreamType) -> u32 {
    match e {
        StreamType::F32 => 128,
        StreamType::F16 | StreamType::BF16 => 8,
        StreamType::F8E4M3FN | StreamType::F8E5M2 => 1,
        _ => 0,
    }
}

/// The largest absolute error an output of type `e` may have, given the
/// largest reference magnitude `max_abs`: `tolerance_ulps(e)` units in the
/// last place of `e` at `M = max(1, max_abs)`, i.e.
/// `ulps * 2^(floor(log2 M) - mantissa_bits)`. f32: 128 ulps (1.5e-5 x M),
/// f16 and bf16: 8 ulps, FP8: 1 ulp; integers and booleans: exact (0).
/// Device sums are accumulated in another order than the reference's f64
/// sums and rounded at other points, so results differ by a few roundings
/// at the scale of the largest values; a wrong program is off by about `M`.
pub fn tolerance(e: StreamType, max_abs: f64) -> f64 {
    let Some(m) = mantissa_bits(e) else {
        return 0.0;
    };
    let mag = if max_abs.is_finite() {
        max_abs.max(1.0)
    } else {
        1.0
    };
    let exp = mag.log2().floor() as i32;
    f64::from(tolerance_ulps(e)) * 2f64.powi(exp - m)
}

/// Per result of function `f`, the narrowest non-FP8 float type its value
/// is computed through (every value it depends on): a result computed in
/// f16 and cast to f32 carries f16 roundings, which the f32 tolerance would
/// not allow. FP8 values are not counted: both sides round to FP8 alike,
/// and the arithmetic around them is in a wider type.
pub fn computed_precision(cx: &ipu_ir::Context, f: ipu_ir::Op) -> Vec<Option<StreamType>> {
    use ipu_ir::TypeKind;
    let Some(entry) = cx.entry_block(cx.region(f, 0)) else {
        return Vec::new();
    };
    let Some(ret) = cx
        .last_op(entry)
        .filter(|&r| cx.has_trait(r, ipu_ir::Trait::ReturnLike))
    else {
        return Vec::new();
    };
    let narrowest = |acc: Option<StreamType>, t: ipu_ir::Type| -> Option<StreamType> {
        let e = cx.tensor_parts(t).map(|(_, e)| e).unwrap_or(t);
        let this = match cx.type_kind(e) {
            TypeKind::F32 => StreamType::F32,
            TypeKind::F16 => StreamType::F16,
            TypeKind::BF16 => StreamType::BF16,
            _ => return acc,
        };
        match acc {
            Some(a) if mantissa_bits(a) <= mantissa_bits(this) => Some(a),
            _ => Some(this),
        }
    };
    cx.operands(ret)
        .iter()
        .map(|&v| {
            let mut seen = std::collections::HashSet::new();
            let mut stack = vec![v];
            let mut acc = None;
            while let Some(v) = stack.pop() {
                if !seen.insert(v) {
                    continue;
                }
                acc = narrowest(acc, cx.value_type(v));
                if let Some(op) = cx.defining_op(v) {
                    stack.extend(cx.operands(op).iter().copied());
                    // A call's result is computed through its callee's values.
                    stack.extend(callee_results(cx, op));
                }
            }
            acc
        })
        .collect()
}

/// The values a `func.call` op's callee returns (none for another op).
fn callee_results(cx: &ipu_ir::Context, op: ipu_ir::Op) -> Vec<ipu_ir::Value> {
    let Some(call) = ipu_dialects::func::Call::cast(cx, op) else {
        return Vec::new();
    };
    let callee = call.callee(cx);
    let g = cx
        .parent_op(op)
        .and_then(|f| cx.parent_op(f))
        .and_then(|m| cx.lookup_symbol(m, cx.str(callee)));
    g.filter(|&g| cx.num_regions(g) > 0)
        .and_then(|g| cx.entry_block(cx.region(g, 0)))
        .and_then(|b| cx.last_op(b))
        .filter(|&r| cx.has_trait(r, ipu_ir::Trait::ReturnLike))
        .map(|r| cx.operands(r).to_vec())
        .unwrap_or_default()
}

/// The type whose tolerance applies to an output of stream type `e`
/// computed through `precision` (the narrower of the two floats).
pub fn compared_type(e: StreamType, precision: Option<StreamType>) -> StreamType {
    match (
        mantissa_bits(e),
        precision.and_then(|p| mantissa_bits(p).map(|m| (p, m))),
    ) {
        (Some(me), Some((p, mp))) if mp < me => p,
        _ => e,
    }
}

/// How one output compares with the reference.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub max_abs_error: f64,
    pub max_abs_reference: f64,
    pub tolerance: f64,
    /// (flat index, device, reference) of elements beyond the tolerance
    /// (at most 8 kept) and their count.
    pub failures: Vec<(usize, f64, f64)>,
    pub failure_count: usize,
}

impl Comparison {
    pub fn pass(&self) -> bool {
        self.failure_count == 0
    }
}

/// Compares a device output with its reference (same shape). NaN must meet
/// NaN and infinities the same infinity; they do not count in the maximum
/// error.
pub fn compare(device: &Tensor, reference: &Tensor, e: StreamType) -> Comparison {
    let d = device.to_f32_vec();
    let r = reference.to_f32_vec();
    let max_abs_reference = r
        .iter()
        .filter(|x| x.is_finite())
        .fold(0f64, |a, &x| a.max(f64::from(x).abs()));
    let tol = tolerance(e, max_abs_reference);
    let mut c = Comparison {
        max_abs_error: 0.0,
        max_abs_reference,
        tolerance: tol,
        failures: Vec::new(),
        failure_count: 0,
    };
    if device.shape() != reference.shape() {
        c.failure_count = d.len().max(r.len()).max(1);
        c.max_abs_error = f64::INFINITY;
        return c;
    }
    for (i, (&x, &y)) in d.iter().zip(&r).enumerate() {
        let (x, y) = (f64::from(x), f64::from(y));
        let bad = if y.is_nan() || x.is_nan() {
            !(x.is_nan() && y.is_nan())
        } else if y.is_infinite() || x.is_infinite() {
            x != y
        } else {
            let err = (x - y).abs();
            c.max_abs_error = c.max_abs_error.max(err);
            err > tol
        };
        if bad {
            if !(x.is_finite() && y.is_finite()) {
                c.max_abs_error = f64::INFINITY;
            }
            c.failure_count += 1;
            if c.failures.len() < 8 {
                c.failures.push((i, x, y));
            }
        }
    }
    c
}

/// `[i, j, k]` of a flat row-major index.
pub fn multi_index(shape: &[usize], mut flat: usize) -> String {
    let mut idx = vec![0; shape.len()];
    for (k, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            idx[k] = flat % d;
            flat /= d;
        }
    }
    format!(
        "[{}]",
        idx.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Exclusive ownership of the (simulated) device: an OS file lock held
/// until dropped.
pub struct DeviceLock {
    _file: File,
    pub path: PathBuf,
}

/// The default lock file: one per machine, `$TMPDIR/ipu-run-device.lock`,
/// so that any two runs on the machine exclude each other.
pub fn default_lock_path() -> PathBuf {
    std::env::temp_dir().join("ipu-run-device.lock")
}

impl DeviceLock {
    /// Blocks until the lock on `path` (created if missing) is ours.
    pub fn acquire(path: &Path) -> Result<DeviceLock, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create '{}': {e}", dir.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| format!("cannot open the device lock '{}': {e}", path.display()))?;
        tracing::info!(path = %path.display(), "waiting for hardware ownership");
        file.lock()
            .map_err(|e| format!("cannot lock '{}': {e}", path.display()))?;
        tracing::info!(path = %path.display(), "acquired hardware ownership");
        Ok(DeviceLock {
            _file: file,
            path: path.to_path_buf(),
        })
    }
}

/// What a device run gave.
pub struct DeviceRun {
    pub report: ChipReport,
    /// Faults, ordered by cycle then tile (empty on a clean run).
    pub faults: Vec<ChipFault>,
    /// Output stream name -> host bytes (only when the run halted cleanly).
    pub outputs: BTreeMap<String, Vec<u8>>,
    /// Tiles that were started (every tile of every group).
    pub started: Vec<u32>,
    /// Per probe of the package (in order), its bytes as its step left
    /// them; `None` for a step the run did not reach (or when probes were
    /// not asked for: empty).
    pub probes: Vec<Option<Vec<u8>>>,
}

impl DeviceRun {
    /// Every started tile halted, with no fault and within the budget.
    pub fn hardware_pass(&self) -> bool {
        self.faults.is_empty()
            && self.report.outcome == ChipOutcome::Halted
            && self
                .started
                .iter()
                .all(|&t| self.report.tiles.get(t as usize).is_some_and(|r| r.halted))
    }
}

/// The image a group's tiles share, as the simulator loads it: code
/// (executable), shared data and zero ranges (zero-filled), entries as
/// symbols.
fn shared_image(g: &ipu_package::ImageGroup) -> ipu_isa::link::TileImage {
    let img = &g.image;
    let mut segments = vec![ipu_isa::link::Segment {
        address: img.code_address,
        bytes: img.code.clone(),
        exec: true,
    }];
    for d in &img.data {
        segments.push(ipu_isa::link::Segment {
            address: d.address,
            bytes: d.bytes.clone(),
            exec: false,
        });
    }
    for z in &img.zero {
        segments.push(ipu_isa::link::Segment {
            address: z.address,
            bytes: vec![0; z.len as usize],
            exec: false,
        });
    }
    let end = img.code_address.saturating_add(img.code.len() as u32);
    ipu_isa::link::TileImage {
        segments,
        symbols: img.entries.clone(),
        exec_ranges: std::iter::once(img.code_address..end).collect(),
        code_size: img.code.len() as u32,
    }
}

/// Loads `pkg` onto a fresh chip of `target`, writes `inputs` (stream name
/// -> host bytes) through the input layouts, starts every tile of every
/// group at its `entry`, runs at most `max_cycles`, and reads the outputs.
/// The program's roofline: the sum of its steps' bounds (each with its
/// sync); `None` when the package carries no bound (older packages).
pub fn roofline_cycles(pkg: &Package) -> Option<u64> {
    let mut any = false;
    let sum = pkg.meta.steps.iter().fold(0u64, |a, s| {
        any |= s.bound.is_some();
        a.saturating_add(s.bound.unwrap_or(0))
    });
    any.then_some(sum)
}

/// Cycles the host link takes for one run's streams: every input stream
/// in before the run, every output stream out after it, each direction at
/// the target's host-link rate (load streams come once with the program).
pub fn host_io_cycles(pkg: &Package, target: &Target) -> u64 {
    let (mut input, mut output) = (0u64, 0u64);
    for s in &pkg.meta.streams {
        // What crosses the link: the placed buffer (an input the host
        // widens goes over widened).
        let b = s.byte_len().unwrap_or(u64::MAX);
        match s.direction {
            Direction::Input => input = input.saturating_add(b),
            Direction::Output => output = output.saturating_add(b),
            // Parameters are loaded once with the program (converted there
            // when the package says so), not per run.
            Direction::Load => {}
        }
    }
    target.host_link_cycles(input) + target.host_link_cycles(output)
}

/// What `ipu-run` prints after `cycles=C`: ` rooflineCycles=R` (when the
/// package has bounds), ` hostIoCycles=H cyclesWithHostIo=C+H`.
pub fn cycle_figures(pkg: &Package, target: &Target, cycles: u64) -> String {
    let host = host_io_cycles(pkg, target);
    let roofline = roofline_cycles(pkg)
        .map(|r| format!(" rooflineCycles={r}"))
        .unwrap_or_default();
    format!(
        "{roofline} hostIoCycles={host} cyclesWithHostIo={}",
        cycles.saturating_add(host)
    )
}

pub fn run_on_chip(
    pkg: &Package,
    target: &Target,
    inputs: &BTreeMap<String, Vec<u8>>,
    entry: &str,
    max_cycles: u64,
) -> Result<DeviceRun, String> {
    run_on_chip_probed(pkg, target, inputs, entry, max_cycles, false)
}

/// [`run_on_chip`]; with `probes`, also reads every probe of the package
/// at the end of its step ([`DeviceRun::probes`]).
pub fn run_on_chip_probed(
    pkg: &Package,
    target: &Target,
    inputs: &BTreeMap<String, Vec<u8>>,
    entry: &str,
    max_cycles: u64,
    probes: bool,
) -> Result<DeviceRun, String> {
    let mut chip = Chip::new(target).map_err(|e| e.to_string())?;
    // A package's tiles all run every superstep: one that misses a sync is a fault.
    chip.require_all_tiles_at_syncs();
    if chip.tiles() < pkg.meta.target.tile_count {
        return Err(format!(
            "the package needs {} tiles, the target {} has {}",
            pkg.meta.target.tile_count,
            target.name,
            chip.tiles()
        ));
    }
    tracing::info!(
        tile_count = pkg.meta.target.tile_count,
        "loading application"
    );
    let mut started = Vec::new();
    for g in &pkg.images {
        let image = shared_image(g);
        let pc =
            *g.image.entries.get(entry).ok_or_else(|| {
                format!("an image group (tiles {}) has no entry `{entry}`", g.tiles)
            })?;
        for tile in g.tiles.iter() {
            chip.load(tile, &image).map_err(|e| e.to_string())?;
            if let Some(own) = g.tile_data.get(&tile) {
                for d in own {
                    chip.write(tile, d.address, &d.bytes)
                        .map_err(|e| e.to_string())?;
                }
            }
            started.push((tile, pc));
        }
    }
    for s in pkg.meta.streams.iter().filter(|s| s.direction.to_device()) {
        let bytes = inputs
            .get(&s.name)
            .ok_or_else(|| format!("no host data for input stream `{}`", s.name))?;
        write_stream(&mut chip, s, bytes)?;
    }
    for &(tile, pc) in &started {
        chip.start(tile, pc, 0).map_err(|e| e.to_string())?;
    }
    let started: Vec<u32> = started.into_iter().map(|(t, _)| t).collect();
    tracing::info!(tile_count = started.len(), "application loaded; running");
    let wanted: &[ipu_package::Probe] = if probes { &pkg.meta.probes } else { &[] };
    let mut probed: Vec<Option<Vec<u8>>> = vec![None; wanted.len()];
    let mut probe_error = None;
    let mut at_end = |step: usize, chip: &Chip| {
        for (i, p) in wanted.iter().enumerate() {
            if p.step as usize != step {
                continue;
            }
            match read_stream(chip, &p.stream) {
                Ok(b) => probed[i] = Some(b),
                Err(e) => {
                    probe_error.get_or_insert(format!("probe of {} at {}: {e}", p.op, p.source));
                }
            }
        }
    };
    let (report, faults) = match chip.run_observed(max_cycles, &mut at_end) {
        Ok(r) => (r, Vec::new()),
        Err(e) => (e.report, e.faults),
    };
    if let Some(e) = probe_error {
        return Err(e);
    }
    tracing::info!(
        cycles = report.cycles,
        wall_ms = %format!("{:.1}", report.wall_seconds * 1e3),
        tiles = started.len(),
        supersteps = report.supersteps.len(),
        "simulated"
    );
    let mut run = DeviceRun {
        report,
        faults,
        outputs: BTreeMap::new(),
        started,
        probes: probed,
    };
    if run.hardware_pass() {
        for s in pkg
            .meta
            .streams
            .iter()
            .filter(|s| s.direction == Direction::Output)
        {
            let buf = read_stream(&chip, s).map_err(|e| format!("stream `{}`: {e}", s.name))?;
            let buf = narrowed_bytes(s, &buf)?.into_owned();
            run.outputs.insert(s.name.clone(), buf);
        }
    }
    Ok(run)
}

/// The host bytes of an output-stream layout, read from tile memory.
fn read_stream(chip: &Chip, s: &HostStream) -> Result<Vec<u8>, String> {
    let len = s.byte_len().ok_or("an output buffer overflows")? as usize;
    let mut buf = vec![0u8; len];
    s.each_transfer(&mut |t| {
        let b = chip
            .read(t.tile, t.tile_address, t.len as usize)
            .map_err(|e| e.to_string())?;
        let at = t.host_offset as usize;
        buf.get_mut(at..at + b.len())
            .ok_or("a transfer beyond the buffer")?
            .copy_from_slice(b);
        Ok::<(), String>(())
    })?;
    Ok(buf)
}

/// The host's bytes of `s` as the layout places them: a load stream with
/// a conversion has its host elements widened exactly to the tiles' type
/// (FP8 codes read at scale 0, as the tiles' own casts read them).
pub fn loaded_bytes<'b>(
    s: &HostStream,
    bytes: &'b [u8],
) -> Result<std::borrow::Cow<'b, [u8]>, String> {
    if Some(bytes.len() as u64) != s.host_byte_len() {
        return Err(format!(
            "input stream `{}` takes {} bytes, got {}",
            s.name,
            s.host_byte_len().unwrap_or(0),
            bytes.len()
        ));
    }
    let Some(host) = s.host_element else {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    };
    if !s.direction.to_device() || !host.converts_to(s.element, s.direction) {
        return Err(format!(
            "stream `{}`: cannot convert host {host} elements to {} (only a load or input stream widens, exactly)",
            s.name, s.element
        ));
    }
    let shape: Vec<usize> = s.shape.iter().map(|&d| d as usize).collect();
    let x = bytes_to_tensor(bytes, &shape, host, 0)?;
    let widened = Tensor::from_f32(shape, reference_type(s.element), x.to_f32_vec())
        .map_err(|e| format!("stream `{}`: {e}", s.name))?;
    tensor_to_bytes(&widened, s.element).map(std::borrow::Cow::Owned)
}

/// The host's bytes of output stream `s` from the tiles' bytes (`tile`,
/// as the layout placed them): a stream with a conversion has each tile
/// element, an exact integer held as a float, narrowed to the host's
/// 8- or 16-bit integer type. An element that is not an integer of that
/// type (a fraction, NaN, out of range) is an error naming the stream and
/// the element: never wrapped, rounded or saturated.
pub fn narrowed_bytes<'b>(
    s: &HostStream,
    tile: &'b [u8],
) -> Result<std::borrow::Cow<'b, [u8]>, String> {
    let Some(host) = s.host_element else {
        return Ok(std::borrow::Cow::Borrowed(tile));
    };
    if s.direction != Direction::Output || !host.converts_to(s.element, s.direction) {
        return Err(format!(
            "stream `{}`: cannot narrow {} elements to host {host} (only an output stream narrows, to 8- or 16-bit integers)",
            s.name, s.element
        ));
    }
    let shape: Vec<usize> = s.shape.iter().map(|&d| d as usize).collect();
    let x = bytes_to_tensor(tile, &shape, s.element, 0)
        .map_err(|e| format!("output stream `{}`: {e}", s.name))?;
    let ty = reference_type(host);
    let (lo, hi) = match host {
        StreamType::U8 => (0.0, 255.0),
        StreamType::I8 => (-128.0, 127.0),
        StreamType::U16 => (0.0, 65535.0),
        _ => (-32768.0, 32767.0),
    };
    let values = x.to_f32_vec();
    let mut ints = Vec::with_capacity(values.len());
    for (i, &v) in values.iter().enumerate() {
        if v.fract() != 0.0 || !(lo..=hi).contains(&v) {
            return Err(format!(
                "output stream `{}`: element {} is {v}, not a {host} value: the host narrows only exact \
                 integers of its type",
                s.name,
                multi_index(&shape, i)
            ));
        }
        ints.push(v as i64);
    }
    let t = Tensor::from_i64(shape, ty, ints)
        .map_err(|e| format!("output stream `{}`: {e}", s.name))?;
    tensor_to_bytes(&t, host).map(std::borrow::Cow::Owned)
}

fn write_stream(chip: &mut Chip, s: &HostStream, bytes: &[u8]) -> Result<(), String> {
    let bytes = loaded_bytes(s, bytes)?;
    if Some(bytes.len() as u64) != s.byte_len() {
        return Err(format!(
            "input stream `{}` places {} bytes, got {}",
            s.name,
            s.byte_len().unwrap_or(0),
            bytes.len()
        ));
    }
    s.each_transfer(&mut |t| {
        let at = t.host_offset as usize;
        let src = bytes
            .get(at..at + t.len as usize)
            .ok_or_else(|| format!("stream `{}`: a transfer beyond the buffer", s.name))?;
        chip.write(t.tile, t.tile_address, src)
            .map_err(|e| format!("stream `{}`: {e}", s.name))?;
        Ok::<(), String>(())
    })?;
    Ok(())
}

/// One line per fault (at most 16, then how many more): each names its
/// tile and cycle, and a tile fault its context, pc and instruction.
pub fn describe_faults(faults: &[ChipFault]) -> Vec<String> {
    let mut lines: Vec<String> = faults.iter().take(16).map(|f| f.to_string()).collect();
    if faults.len() > 16 {
        lines.push(format!("... and {} more faults", faults.len() - 16));
    }
    lines
}

/// The Chrome trace (Perfetto, chrome://tracing) of a run: one time unit is
/// one cycle. No wall-clock figures, so the file is deterministic; one
/// event per line.
///
/// * The chip (process 1): track "supersteps", one slice per superstep
///   named after its step summary (`meta.steps[i]`: kind, label, estimated
///   cycles) with the simulated cycles; the counters "memory in use (bytes)"
///   (`max tile`, `all tiles`) at every superstep's start when `memory`
///   (the compile's report) is given, else "memory loaded (bytes)" (code and
///   loaded data) at cycle 0.
/// * One process per tile group (the package's image groups: tiles running
///   the same code), each with one track: per superstep a slice from its
///   start to the group's last arrival at the sync, with the group's
///   spread of cycles; and the group's own memory counter.
/// * Process "tiles": a track per started tile, one slice for the whole run
///   with its cycles, instructions, words and loaded memory, and inside it
///   one slice per superstep from its start to the tile's arrival.
pub fn chrome_trace(
    pkg: &Package,
    report: &ChipReport,
    name: &str,
    memory: Option<&MemoryReport>,
) -> String {
    chrome_trace_with(pkg, report, name, memory, Vec::new())
}

/// The process and first thread id free after [`chrome_trace`]'s own
/// (for events a caller adds with [`chrome_trace_with`]).
pub fn free_trace_ids(pkg: &Package) -> (u32, u32) {
    (
        tiles_pid(pkg) + 1,
        tile_tid(pkg, pkg.meta.target.tile_count),
    )
}

/// [`chrome_trace`] with `extra` events after its own.
pub fn chrome_trace_with(
    pkg: &Package,
    report: &ChipReport,
    name: &str,
    memory: Option<&MemoryReport>,
    extra: Vec<serde_json::Value>,
) -> String {
    use serde_json::json;
    let groups = pkg.images.len() as u32;
    let mut events = vec![
        json!({"name": "process_name", "ph": "M", "pid": CHIP, "tid": CHIP, "args": {"name": format!("ipu-run {name}")}}),
        json!({"name": "process_sort_index", "ph": "M", "pid": CHIP, "tid": CHIP, "args": {"sort_index": 0}}),
        json!({"name": "thread_name", "ph": "M", "pid": CHIP, "tid": CHIP, "args": {"name": "supersteps"}}),
    ];
    let starts = superstep_events(pkg, report, &mut events);
    chip_memory_events(pkg, memory, &starts, &mut events);
    for (gi, g) in pkg.images.iter().enumerate() {
        group_events(pkg, report, memory, &starts, gi, g, &mut events);
    }
    tile_events(pkg, report, &starts, &mut events);
    events.extend(extra);
    let other = json!({
        "time_unit": "1 trace microsecond = 1 device cycle",
        "package": name,
        "target": pkg.meta.target.name,
        "tiles": pkg.meta.target.tile_count,
        "tile_groups": groups,
        "cycles": report.cycles,
        "supersteps": report.supersteps.len(),
        "step_summaries": pkg.meta.steps.len(),
        "memory_report": memory.is_some(),
    });
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\n\"otherData\":");
    out.push_str(&other.to_string());
    out.push_str(",\n\"traceEvents\":[\n");
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str(&e.to_string());
    }
    out.push_str("\n]}\n");
    out
}

use ipu_lowering::exchange_to_machine::memory::MemoryReport;

// Process and thread ids from 1 (0 is the idle task of system traces),
// thread ids unique over the trace: the chip, the groups, the tiles.
const CHIP: u32 = 1;
const IN_USE: &str = "memory in use (bytes)";

/// The tiles' process id in the trace (after the chip and the groups).
fn tiles_pid(pkg: &Package) -> u32 {
    pkg.images.len() as u32 + 2
}

/// A tile's thread id in the trace.
fn tile_tid(pkg: &Package, tile: u32) -> u32 {
    pkg.images.len() as u32 + 3 + tile
}

/// A superstep's name: its summary's kind and label, else its index.
fn step_label(pkg: &Package, i: usize) -> String {
    pkg.meta.steps.get(i).map_or_else(
        || format!("superstep {i}"),
        |st| format!("{} {}", st.kind, st.label),
    )
}

/// Bytes a tile holds from the package alone: code, loaded data, zeroed.
fn tile_package_bytes(g: &ipu_package::ImageGroup, tile: u32) -> (u64, u64, u64) {
    let code = g.image.code.len() as u64;
    let shared: u64 = g.image.data.iter().map(|d| d.bytes.len() as u64).sum();
    let zero: u64 = g.image.zero.iter().map(|z| u64::from(z.len)).sum();
    let own: u64 = g
        .tile_data
        .get(&tile)
        .map_or(0, |v| v.iter().map(|d| d.bytes.len() as u64).sum());
    (code, shared + own, zero)
}

fn counter(pid: u32, ts: u64, name: &str, args: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"name": name, "cat": "memory", "ph": "C", "pid": pid, "tid": pid, "ts": ts, "args": args})
}

/// The chip track: one slice per superstep. Returns each superstep's start.
fn superstep_events(
    pkg: &Package,
    report: &ChipReport,
    events: &mut Vec<serde_json::Value>,
) -> Vec<u64> {
    let mut start = 0u64;
    let mut starts = Vec::with_capacity(report.supersteps.len());
    for s in &report.supersteps {
        let step = pkg.meta.steps.get(s.index);
        let end = s.end_cycle.max(start);
        starts.push(start);
        events.push(serde_json::json!({
            "name": step_label(pkg, s.index),
            "cat": "superstep",
            "ph": "X",
            "pid": CHIP,
            "tid": CHIP,
            "ts": start,
            "dur": end - start,
            "args": {
                "index": s.index,
                "simulated_cycles": end - start,
                "estimated_cycles": step.and_then(|st| st.cycles),
                "bound_cycles": step.and_then(|st| st.bound),
                "kind": step.map(|st| st.kind.to_string()),
                "label": step.map(|st| st.label.clone()),
                "sync_release_cycle": s.release_cycle,
                "tiles_synced": s.tiles_synced,
            }
        }));
        start = s.release_cycle.unwrap_or(end);
    }
    starts
}

/// The chip's memory counter: bytes in use per superstep from the memory
/// report, else the bytes the package loads.
fn chip_memory_events(
    pkg: &Package,
    memory: Option<&MemoryReport>,
    starts: &[u64],
    events: &mut Vec<serde_json::Value>,
) {
    use serde_json::json;
    match memory {
        Some(m) => {
            for (s, (_, max, all)) in m.in_use_by_step().into_iter().enumerate() {
                if let Some(&ts) = starts.get(s) {
                    events.push(counter(
                        CHIP,
                        ts,
                        IN_USE,
                        json!({"max tile": max, "all tiles": all}),
                    ));
                }
            }
        }
        None => {
            let (mut max, mut all) = (0, 0);
            for g in &pkg.images {
                for tile in g.tiles.iter() {
                    let (c, d, z) = tile_package_bytes(g, tile);
                    max = u64::max(max, c + d + z);
                    all += c + d + z;
                }
            }
            events.push(counter(
                CHIP,
                0,
                "memory loaded (bytes)",
                json!({"max tile": max, "all tiles": all}),
            ));
        }
    }
}

/// One tile group's track: its supersteps' cycle spread and its memory.
fn group_events(
    pkg: &Package,
    report: &ChipReport,
    memory: Option<&MemoryReport>,
    starts: &[u64],
    gi: usize,
    g: &ipu_package::ImageGroup,
    events: &mut Vec<serde_json::Value>,
) {
    use serde_json::json;
    let (pid, tid) = (gi as u32 + 2, gi as u32 + 2);
    let set = g.tiles.to_string();
    let gname = format!("group {gi}: tiles {set}");
    events.push(
        json!({"name": "process_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": gname}}),
    );
    events.push(json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": pid}}));
    events.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": format!("group {gi}")}}));
    for (s, &begin) in report.supersteps.iter().zip(starts) {
        let mine: Vec<_> = s
            .tiles
            .iter()
            .filter(|ts| g.tiles.contains(ts.tile))
            .collect();
        let cycles: Vec<u64> = mine
            .iter()
            .map(|ts| ts.arrival.saturating_sub(begin))
            .collect();
        let max = cycles.iter().copied().max().unwrap_or(0);
        let min = cycles.iter().copied().min().unwrap_or(0);
        let mean = cycles.iter().sum::<u64>() as f64 / cycles.len().max(1) as f64;
        events.push(json!({
            "name": step_label(pkg, s.index),
            "cat": "group_superstep",
            "ph": "X",
            "pid": pid,
            "tid": tid,
            "ts": begin,
            "dur": max,
            "args": {
                "superstep": s.index,
                "tiles": set,
                "tile_count": mine.len(),
                "min_cycles": min,
                "mean_cycles": (mean * 10.0).round() / 10.0,
                "max_cycles": max,
                "instructions": mine.iter().map(|ts| ts.instructions).sum::<u64>(),
                "words_sent": mine.iter().map(|ts| ts.words_sent).sum::<u64>(),
                "words_received": mine.iter().map(|ts| ts.words_received).sum::<u64>(),
            }
        }));
        if let Some(m) = memory {
            let v = g
                .tiles
                .iter()
                .filter_map(|t| m.tiles.get(t as usize))
                .map(|tm| tm.in_use(s.index))
                .max()
                .unwrap_or(0);
            events.push(counter(pid, begin, IN_USE, json!({"max tile": v})));
        }
    }
    if memory.is_none() {
        let v = g
            .tiles
            .iter()
            .map(|t| {
                let (c, d, z) = tile_package_bytes(g, t);
                c + d + z
            })
            .max()
            .unwrap_or(0);
        events.push(counter(
            pid,
            0,
            "memory loaded (bytes)",
            json!({"max tile": v}),
        ));
    }
}

/// Per tile: the whole run, and each superstep up to the tile's arrival.
fn tile_events(
    pkg: &Package,
    report: &ChipReport,
    starts: &[u64],
    events: &mut Vec<serde_json::Value>,
) {
    use serde_json::json;
    let tiles_pid = tiles_pid(pkg);
    let tile_tid = |tile: u32| tile_tid(pkg, tile);
    events.push(json!({"name": "process_name", "ph": "M", "pid": tiles_pid, "tid": tile_tid(0), "args": {"name": "tiles"}}));
    events.push(json!({"name": "process_sort_index", "ph": "M", "pid": tiles_pid, "tid": tile_tid(0), "args": {"sort_index": tiles_pid}}));
    for g in &pkg.images {
        for tile in g.tiles.iter() {
            let (code, data, zero) = tile_package_bytes(g, tile);
            let Some(t) = report.tiles.get(tile as usize) else {
                continue;
            };
            events.push(json!({"name": "thread_name", "ph": "M", "pid": tiles_pid, "tid": tile_tid(tile), "args": {"name": format!("tile {tile}")}}));
            events.push(json!({
                "name": format!("tile {tile}"),
                "cat": "tile",
                "ph": "X",
                "pid": tiles_pid,
                "tid": tile_tid(tile),
                "ts": 0,
                "dur": t.cycles,
                "args": {
                    "tile": tile,
                    "cycles": t.cycles,
                    "active_cycles": t.active_cycles,
                    "issue_cycles": t.issue_cycles,
                    "instructions": t.instructions,
                    "words_sent": t.words_sent,
                    "words_received": t.words_received,
                    "halted": t.halted,
                    "code_bytes": code,
                    "initialised_data_bytes": data,
                    "zeroed_bytes": zero,
                }
            }));
        }
    }
    for (s, &begin) in report.supersteps.iter().zip(starts) {
        for ts in &s.tiles {
            if ts.arrival < begin || (ts.halted && ts.instructions == 0 && ts.arrival == begin) {
                continue;
            }
            events.push(json!({
                "name": step_label(pkg, s.index),
                "cat": "tile_superstep",
                "ph": "X",
                "pid": tiles_pid,
                "tid": tile_tid(ts.tile),
                "ts": begin,
                "dur": ts.arrival - begin,
                "args": {
                    "tile": ts.tile,
                    "superstep": s.index,
                    "active_cycles": ts.arrival - begin,
                    "issue_cycles": ts.issue_cycles,
                    "instructions": ts.instructions,
                    "words_sent": ts.words_sent,
                    "words_received": ts.words_received,
                    "halted": ts.halted,
                }
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(e: StreamType) -> Tensor {
        let ty = reference_type(e);
        let shape = vec![2, 3];
        if ty == ElementType::I1 {
            Tensor::from_bool(shape, vec![true, false, true, true, false, false]).unwrap()
        } else if ty.is_float() {
            Tensor::from_f32(shape, ty, vec![0.5, -1.25, 3.0, 0.0, -0.0625, 7.5]).unwrap()
        } else {
            let v = if matches!(e, StreamType::U8 | StreamType::U16 | StreamType::U32) {
                vec![0, 1, 2, 200, 17, 99]
            } else {
                vec![0, -1, 2, -100, 17, 99]
            };
            Tensor::from_i64(shape, ty, v).unwrap()
        }
    }

    fn load_stream(element: StreamType, host: StreamType, n: u64) -> HostStream {
        HostStream {
            name: "w".into(),
            direction: Direction::Load,
            element,
            shape: vec![n],
            host_element: Some(host),
            layout: Vec::new(),
        }
    }

    #[test]
    fn a_load_stream_widens_the_hosts_elements_exactly() {
        // f8E4M3FN codes: 1.0, -0.5, the largest finite (448), the smallest
        // subnormal (2^-9), NaN.
        let s = load_stream(StreamType::F16, StreamType::F8E4M3FN, 5);
        let got = loaded_bytes(&s, &[0x38, 0xb0, 0x7e, 0x01, 0x7f]).unwrap();
        let halves: Vec<u16> = got
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(&halves[..4], &[0x3c00, 0xb800, 0x5f00, 0x1800]);
        assert!(half::f16::from_bits(halves[4]).is_nan());
        // f8E5M2 is f16 with its low mantissa byte dropped: widening puts it back as zeros.
        let s = load_stream(StreamType::F16, StreamType::F8E5M2, 3);
        let got = loaded_bytes(&s, &[0x3c, 0x7b, 0x83]).unwrap();
        assert_eq!(&got[..], &[0x00, 0x3c, 0x00, 0x7b, 0x00, 0x83]);
        // bf16 to f32: the upper half of the f32.
        let s = load_stream(StreamType::F32, StreamType::BF16, 1);
        let got = loaded_bytes(&s, &[0xc0, 0x3f]).unwrap();
        assert_eq!(f32::from_le_bytes([got[0], got[1], got[2], got[3]]), 1.5);
        // The host's buffer is sized at its own type.
        let err = loaded_bytes(&s, &[0; 4]).unwrap_err();
        assert_eq!(err, "input stream `w` takes 2 bytes, got 4");
        // A load or an input stream converts, an output stream never, and only exactly.
        let mut s = load_stream(StreamType::F16, StreamType::F8E4M3FN, 1);
        s.direction = Direction::Input;
        assert_eq!(&loaded_bytes(&s, &[0x38]).unwrap()[..], &[0x00, 0x3c]);
        s.direction = Direction::Output;
        assert!(loaded_bytes(&s, &[0x38])
            .unwrap_err()
            .contains("cannot convert"));
        let s = load_stream(StreamType::F16, StreamType::F32, 1);
        assert!(loaded_bytes(&s, &[0; 4])
            .unwrap_err()
            .contains("cannot convert"));
        // Without a conversion the bytes are the host's own.
        let mut s = load_stream(StreamType::F16, StreamType::F16, 1);
        s.host_element = None;
        assert!(matches!(
            loaded_bytes(&s, &[1, 2]).unwrap(),
            std::borrow::Cow::Borrowed(&[1, 2])
        ));
    }

    #[test]
    fn an_output_stream_narrows_exact_integers_and_refuses_the_rest() {
        let mut s = load_stream(StreamType::F32, StreamType::I8, 4);
        s.direction = Direction::Output;
        let tile = |v: [f32; 4]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let got = narrowed_bytes(&s, &tile([-128.0, -0.0, 5.0, 127.0]))
            .unwrap()
            .into_owned();
        assert_eq!(&got[..], &[0x80, 0x00, 0x05, 0x7f]);
        // Neither rounded, wrapped nor saturated: refused, naming the element.
        for (v, what) in [
            ([1.0, 2.5, 0.0, 0.0], "element [1] is 2.5, not a i8 value"),
            ([1.0, 0.0, 0.0, 128.0], "element [3] is 128, not a i8 value"),
            (
                [f32::NAN, 0.0, 0.0, 0.0],
                "element [0] is NaN, not a i8 value",
            ),
        ] {
            let err = narrowed_bytes(&s, &tile(v)).unwrap_err();
            assert!(
                err.starts_with("output stream `w`: ") && err.contains(what),
                "{err}"
            );
        }
        s.host_element = Some(StreamType::U16);
        let got = narrowed_bytes(&s, &tile([0.0, 65535.0, 256.0, 1.0]))
            .unwrap()
            .into_owned();
        assert_eq!(&got[..], &[0, 0, 0xff, 0xff, 0, 1, 1, 0]);
        assert!(narrowed_bytes(&s, &tile([-1.0, 0.0, 0.0, 0.0])).is_err());
        // An input stream is widened, not narrowed; without a conversion the
        // tiles' bytes are the host's.
        s.direction = Direction::Input;
        assert!(narrowed_bytes(&s, &tile([0.0; 4]))
            .unwrap_err()
            .contains("cannot narrow"));
        s.host_element = None;
        assert!(matches!(
            narrowed_bytes(&s, &[1, 2]).unwrap(),
            std::borrow::Cow::Borrowed(&[1, 2])
        ));
    }

    #[test]
    fn every_stream_type_converts_both_ways() {
        for e in StreamType::ALL {
            assert_eq!(stream_type(reference_type(e)), Some(e), "{e}");
            let t = sample(e);
            let b = tensor_to_bytes(&t, e).unwrap();
            assert_eq!(b.len() as u64, 6 * e.size_bytes(), "{e}");
            let back = bytes_to_tensor(&b, t.shape(), e, t.fp8_scale()).unwrap();
            assert_eq!(back.to_f32_vec(), t.to_f32_vec(), "{e}");
            assert_eq!(back.ty(), t.ty(), "{e}");
        }
        // Little-endian, exact encodings.
        let t = Tensor::from_f32(vec![1], ElementType::F16, vec![1.0]).unwrap();
        assert_eq!(
            tensor_to_bytes(&t, StreamType::F16).unwrap(),
            vec![0x00, 0x3c]
        );
        let t = Tensor::from_f32(vec![1], ElementType::BF16, vec![1.0]).unwrap();
        assert_eq!(
            tensor_to_bytes(&t, StreamType::BF16).unwrap(),
            vec![0x80, 0x3f]
        );
        let t = Tensor::from_f32(vec![1], ElementType::F8E4M3FN, vec![1.0]).unwrap();
        assert_eq!(
            tensor_to_bytes(&t, StreamType::F8E4M3FN).unwrap(),
            vec![0x38]
        );
        let t = Tensor::from_i64(vec![1], ElementType::I16, vec![-2]).unwrap();
        assert_eq!(
            tensor_to_bytes(&t, StreamType::I16).unwrap(),
            vec![0xfe, 0xff]
        );
        assert!(tensor_to_bytes(&t, StreamType::I32).is_err());
        assert!(bytes_to_tensor(&[0; 3], &[2], StreamType::F16, 0).is_err());
    }

    #[test]
    fn tolerances_scale_with_the_largest_magnitude() {
        assert_eq!(tolerance(StreamType::F16, 0.25), 8.0 * 2f64.powi(-10));
        assert_eq!(tolerance(StreamType::F16, 40.0), 8.0 * 2f64.powi(5 - 10));
        assert_eq!(tolerance(StreamType::F32, 1.0), 128.0 * 2f64.powi(-23));
        assert_eq!(tolerance(StreamType::BF16, 3.0), 8.0 * 2f64.powi(1 - 7));
        assert_eq!(tolerance(StreamType::F8E4M3FN, 300.0), 2f64.powi(8 - 3));
        assert_eq!(tolerance(StreamType::F8E5M2, 1.0), 0.25);
        assert_eq!(tolerance(StreamType::I32, 1e9), 0.0);
        assert_eq!(tolerance(StreamType::Bool, 1.0), 0.0);
    }

    #[test]
    fn comparison_finds_the_elements_beyond_the_tolerance() {
        let r =
            Tensor::from_f32(vec![2, 2], ElementType::F32, vec![1.0, 2.0, f32::NAN, 4.0]).unwrap();
        let ok = Tensor::from_f32(
            vec![2, 2],
            ElementType::F32,
            vec![1.0, 2.00001, f32::NAN, 4.0],
        )
        .unwrap();
        let c = compare(&ok, &r, StreamType::F32);
        assert!(c.pass(), "{c:?}");
        assert!(c.max_abs_error > 0.0 && c.max_abs_error < 1e-4);
        let bad = Tensor::from_f32(vec![2, 2], ElementType::F32, vec![1.0, 2.5, 0.0, 4.0]).unwrap();
        let c = compare(&bad, &r, StreamType::F32);
        assert_eq!(c.failure_count, 2);
        assert_eq!(c.failures[0].0, 1);
        assert_eq!(multi_index(&[2, 2], 2), "[1, 0]");
        let ri = Tensor::from_i64(vec![2], ElementType::I32, vec![1, 2]).unwrap();
        let di = Tensor::from_i64(vec![2], ElementType::I32, vec![1, 3]).unwrap();
        assert!(!compare(&di, &ri, StreamType::I32).pass());
    }
}
