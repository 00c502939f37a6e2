//! Target descriptions for the IPU-class machine.
//!
//! One TOML file per target (`targets/<name>.toml` in the repository) holds
//! every machine figure that the planner, the exchange scheduler, storage
//! placement and the simulator use, so that they always agree and a user can
//! add a target without touching code. The repository's files are embedded
//! with `include_str!`, so built-in names resolve in any installed binary.
//!
//! [`Target::load`] takes a built-in name (`ipu21`, `ipu2`, `test4`,
//! `test16`) or a file path, parses it with serde (unknown keys rejected) and
//! validates every field; every failure is a [`TargetError`] naming the origin
//! and the field. Derived figures (route latency, supertile partner, GEMM
//! cycle estimates, exchange endpoint rates) are methods on [`Target`].

mod error;
mod estimate;

use serde::Deserialize;
use std::fmt;
use std::path::Path;

pub use error::TargetError;
pub use estimate::{GemmEstimate, LoopOrder};

/// Built-in targets: name and embedded file text.
const BUILTINS: &[(&str, &str)] = &[
    ("ipu21", include_str!("../../targets/ipu21.toml")),
    ("ipu2", include_str!("../../targets/ipu2.toml")),
    ("test4", include_str!("../../targets/test4.toml")),
    ("test16", include_str!("../../targets/test16.toml")),
];

/// Element types the AMP and the vector unit know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    F32,
    F16,
    F8,
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ElemType::F32 => "f32",
            ElemType::F16 => "f16",
            ElemType::F8 => "f8",
        })
    }
}

/// Chip-level figures.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chip {
    /// Number of tiles.
    pub tiles: u32,
    /// Tiles per column of the modelled layout (route latency only).
    pub tiles_per_column: u32,
    /// Clock in Hz, for reporting cycles as time.
    pub clock_hz: f64,
    /// Peak f16 TFLOP/s, reporting only.
    #[serde(default)]
    pub peak_f16_tflops: Option<f64>,
    /// Peak f8 TFLOP/s, reporting only.
    #[serde(default)]
    pub peak_f8_tflops: Option<f64>,
}

/// Per-tile SRAM.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// SRAM bytes per tile.
    pub bytes: u64,
    /// Tile-local address of the first SRAM byte.
    pub base_address: u64,
    /// Start address of the interleaved (128-bit load) region, which runs to
    /// the end of memory; `None` if the target has none.
    #[serde(default)]
    pub interleaved_start: Option<u64>,
    /// Bits loaded per cycle from ordinary memory.
    pub load_bits: u32,
    /// Bits loaded per cycle from the interleaved region.
    pub interleaved_load_bits: u32,
    /// Bytes the planner keeps back on every tile for code, kernel records
    /// and exchange rows when it sizes data (an assumption of the planner;
    /// storage placement then gives code and tables exactly what they need).
    pub code_reserve_bytes: u64,
}

/// Hardware thread contexts per tile.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Threads {
    pub worker_contexts: u32,
    pub supervisor_contexts: u32,
}

/// Vector datapath.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vector {
    pub datapath_bits: u32,
    pub f32_lanes: u32,
    pub f16_lanes: u32,
    pub f8_lanes: u32,
}

/// One AMP mode: input type, partials type, MACs per cycle per tile, K-block.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmpMode {
    pub input: ElemType,
    pub partials: ElemType,
    pub macs_per_cycle: u32,
    pub k_block: u32,
}

/// GEMM estimate tables per input type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GemmEstimates {
    #[serde(default)]
    pub f32: Option<GemmEstimate>,
    #[serde(default)]
    pub f16: Option<GemmEstimate>,
    #[serde(default)]
    pub f8: Option<GemmEstimate>,
}

/// Exchange fabric figures.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    pub send_bytes_per_cycle: u32,
    pub receive_bytes_per_cycle: u32,
    /// Tiles per supertile (sharing a receive bus); 1 means no pairing.
    pub supertile_tiles: u32,
    /// Receive rate of a supertile for data all its tiles receive.
    pub supertile_shared_receive_bytes_per_cycle: u32,
    pub multicast: bool,
    pub sync_cycles: u32,
    pub phase_fixed_cycles: u32,
    pub route_latency_base_cycles: u32,
    pub route_latency_columns_per_cycle: u32,
}

/// Host and chip-to-chip links.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub link_bytes_per_second: f64,
    pub ipu_links: u32,
    pub chip_to_chip_bytes_per_second: f64,
}

/// A validated target description.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub chip: Chip,
    pub memory: Memory,
    pub threads: Threads,
    pub vector: Vector,
    pub amp: Vec<AmpMode>,
    pub gemm: GemmEstimates,
    pub exchange: Exchange,
    pub host: Host,
    /// The text the description was read from (packages record its hash).
    #[serde(skip)]
    pub source_text: String,
}

/// How a check names the field it refuses and why.
type Bad<'a> = &'a dyn Fn(&str, String) -> TargetError;

impl Target {
    /// Names of the built-in targets, in a stable order.
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTINS.iter().map(|(n, _)| *n)
    }

    /// Loads a built-in target by name, or else a target file by path.
    pub fn load(name_or_path: &str) -> Result<Target, TargetError> {
        if let Some(t) = Self::builtin(name_or_path) {
            return t;
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            return Err(TargetError::Unknown {
                name: name_or_path.to_string(),
                builtins: Self::builtin_names().collect::<Vec<_>>().join(", "),
            });
        }
        Self::from_file(path)
    }

    /// A built-in target, or `None` if `name` is not one.
    pub fn builtin(name: &str) -> Option<Result<Target, TargetError>> {
        BUILTINS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Self::from_toml_str(text, &format!("built-in target '{n}'")))
    }

    /// Reads and validates a target file.
    pub fn from_file(path: &Path) -> Result<Target, TargetError> {
        let bytes = std::fs::read(path).map_err(|e| TargetError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            // The column counts characters of the valid prefix of the line, as editors do.
            let col = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
            TargetError::Io {
                path: format!("{}:{line}:{col}", path.display()),
                message: "invalid UTF-8 (a target file is TOML text)".to_string(),
            }
        })?;
        Self::from_toml_str(&text, &path.display().to_string())
    }

    /// Parses and validates target text; `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Target, TargetError> {
        let mut target: Target = toml::from_str(text).map_err(|e| TargetError::Parse {
            origin: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        target.validate(origin)?;
        target.source_text = text.to_string();
        Ok(target)
    }

    /// Checks every field; the first violation is returned.
    pub fn validate(&self, origin: &str) -> Result<(), TargetError> {
        let bad = |field: &str, message: String| TargetError::Invalid {
            origin: origin.to_string(),
            field: field.to_string(),
            message,
        };
        self.validate_chip(&bad)?;
        self.validate_memory(&bad)?;
        self.validate_threads_vector(&bad)?;
        self.validate_amp(&bad)?;
        self.validate_exchange(&bad)?;
        self.validate_host(&bad)?;
        Ok(())
    }

    /// Checks the name and `chip`.
    fn validate_chip(&self, bad: Bad) -> Result<(), TargetError> {
        if self.name.trim().is_empty() {
            return Err(bad("name", "must not be empty".into()));
        }
        let c = &self.chip;
        if c.tiles == 0 {
            return Err(bad("chip.tiles", "must be at least 1".into()));
        }
        if c.tiles > 1 << 20 {
            return Err(bad(
                "chip.tiles",
                format!("{} is implausibly large (max 1048576)", c.tiles),
            ));
        }
        if c.tiles_per_column == 0 || c.tiles_per_column > c.tiles {
            return Err(bad(
                "chip.tiles_per_column",
                format!(
                    "must be in 1..={} (the tile count), got {}",
                    c.tiles, c.tiles_per_column
                ),
            ));
        }
        if !(c.clock_hz.is_finite() && c.clock_hz > 0.0) {
            return Err(bad(
                "chip.clock_hz",
                format!("must be a positive number, got {}", c.clock_hz),
            ));
        }
        for (field, v) in [
            ("chip.peak_f16_tflops", c.peak_f16_tflops),
            ("chip.peak_f8_tflops", c.peak_f8_tflops),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad(field, format!("must be a positive number, got {v}")));
                }
            }
        }
        Ok(())
    }

    /// Checks `memory`.
    fn validate_memory(&self, bad: Bad) -> Result<(), TargetError> {
        let m = &self.memory;
        if m.bytes == 0 || !m.bytes.is_multiple_of(8) {
            return Err(bad(
                "memory.bytes",
                format!("must be a positive multiple of 8, got {}", m.bytes),
            ));
        }
        if m.bytes > u32::MAX as u64 {
            return Err(bad(
                "memory.bytes",
                format!("{} does not fit 32-bit tile addresses", m.bytes),
            ));
        }
        if !m.base_address.is_multiple_of(8) {
            return Err(bad(
                "memory.base_address",
                format!("must be 8-byte aligned, got {:#x}", m.base_address),
            ));
        }
        let end = m
            .base_address
            .checked_add(m.bytes)
            .filter(|e| *e <= 1 << 32);
        let Some(end) = end else {
            return Err(bad(
                "memory.base_address",
                "base_address + bytes exceeds the 32-bit address space".into(),
            ));
        };
        if let Some(start) = m.interleaved_start {
            if start < m.base_address || start >= end || !start.is_multiple_of(16) {
                return Err(bad(
                    "memory.interleaved_start",
                    format!(
                        "must be 16-byte aligned and inside memory [{:#x}, {:#x}), got {start:#x}",
                        m.base_address, end
                    ),
                ));
            }
        }
        for (field, v) in [
            ("memory.load_bits", m.load_bits),
            ("memory.interleaved_load_bits", m.interleaved_load_bits),
        ] {
            if !matches!(v, 32 | 64 | 128 | 256) {
                return Err(bad(field, format!("must be 32, 64, 128 or 256, got {v}")));
            }
        }
        if m.interleaved_load_bits < m.load_bits {
            return Err(bad(
                "memory.interleaved_load_bits",
                "must be at least memory.load_bits".into(),
            ));
        }
        if m.code_reserve_bytes >= m.bytes || !m.code_reserve_bytes.is_multiple_of(8) {
            return Err(bad(
                "memory.code_reserve_bytes",
                format!(
                    "must be a multiple of 8 below memory.bytes ({}), got {}",
                    m.bytes, m.code_reserve_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Checks `threads` and `vector`.
    fn validate_threads_vector(&self, bad: Bad) -> Result<(), TargetError> {
        let t = &self.threads;
        if !(1..=16).contains(&t.worker_contexts) {
            return Err(bad(
                "threads.worker_contexts",
                format!("must be in 1..=16, got {}", t.worker_contexts),
            ));
        }
        if !(1..=4).contains(&t.supervisor_contexts) {
            return Err(bad(
                "threads.supervisor_contexts",
                format!("must be in 1..=4, got {}", t.supervisor_contexts),
            ));
        }
        let v = &self.vector;
        if !matches!(v.datapath_bits, 32 | 64 | 128 | 256) {
            return Err(bad(
                "vector.datapath_bits",
                format!("must be 32, 64, 128 or 256, got {}", v.datapath_bits),
            ));
        }
        for (field, lanes, bits) in [
            ("vector.f32_lanes", v.f32_lanes, 32),
            ("vector.f16_lanes", v.f16_lanes, 16),
            ("vector.f8_lanes", v.f8_lanes, 8),
        ] {
            if lanes == 0 || lanes * bits != v.datapath_bits {
                return Err(bad(
                    field,
                    format!(
                        "{lanes} lanes x {bits} bits must equal vector.datapath_bits ({})",
                        v.datapath_bits
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks `amp` and the `gemm` estimates.
    fn validate_amp(&self, bad: Bad) -> Result<(), TargetError> {
        if self.amp.is_empty() {
            return Err(bad("amp", "at least one AMP mode is required".into()));
        }
        for (i, a) in self.amp.iter().enumerate() {
            let field = |f: &str| format!("amp[{i}].{f}");
            if a.macs_per_cycle == 0 || !a.macs_per_cycle.is_power_of_two() {
                return Err(bad(
                    &field("macs_per_cycle"),
                    format!("must be a positive power of two, got {}", a.macs_per_cycle),
                ));
            }
            if a.k_block == 0 || !a.k_block.is_power_of_two() {
                return Err(bad(
                    &field("k_block"),
                    format!("must be a positive power of two, got {}", a.k_block),
                ));
            }
            if self.amp[..i]
                .iter()
                .any(|b| b.input == a.input && b.partials == a.partials)
            {
                return Err(bad(
                    &field("input"),
                    format!("duplicate AMP mode {} -> {}", a.input, a.partials),
                ));
            }
        }
        for (name, est) in [
            ("f32", &self.gemm.f32),
            ("f16", &self.gemm.f16),
            ("f8", &self.gemm.f8),
        ] {
            if let Some(e) = est {
                e.validate()
                    .map_err(|(f, msg)| bad(&format!("gemm.{name}.{f}"), msg))?;
                let has_mode = self.amp.iter().any(|a| a.input.to_string() == name);
                if !has_mode {
                    return Err(bad(
                        &format!("gemm.{name}"),
                        format!("an estimate is given but no AMP mode takes {name} inputs"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks `exchange`.
    fn validate_exchange(&self, bad: Bad) -> Result<(), TargetError> {
        let c = &self.chip;
        let x = &self.exchange;
        for (field, v) in [
            ("exchange.send_bytes_per_cycle", x.send_bytes_per_cycle),
            (
                "exchange.receive_bytes_per_cycle",
                x.receive_bytes_per_cycle,
            ),
        ] {
            if !matches!(v, 1 | 2 | 4 | 8 | 16) {
                return Err(bad(field, format!("must be 1, 2, 4, 8 or 16, got {v}")));
            }
        }
        if x.send_bytes_per_cycle != x.receive_bytes_per_cycle {
            return Err(bad(
                "exchange.receive_bytes_per_cycle",
                format!(
                    "must equal exchange.send_bytes_per_cycle ({}): the scheduler moves one word per cycle per sender and receiver",
                    x.send_bytes_per_cycle
                ),
            ));
        }
        if !matches!(x.supertile_tiles, 1 | 2) {
            return Err(bad(
                "exchange.supertile_tiles",
                format!("must be 1 (no pairing) or 2, got {}", x.supertile_tiles),
            ));
        }
        if x.supertile_tiles == 2 && !c.tiles.is_multiple_of(2) {
            return Err(bad(
                "exchange.supertile_tiles",
                format!("pairs need an even tile count, chip.tiles is {}", c.tiles),
            ));
        }
        if x.supertile_tiles == 2 && !c.tiles_per_column.is_multiple_of(2) {
            return Err(bad(
                "chip.tiles_per_column",
                "must be even so that supertile pairs share a column".into(),
            ));
        }
        let expect = x.receive_bytes_per_cycle * x.supertile_tiles;
        if x.supertile_shared_receive_bytes_per_cycle != expect {
            return Err(bad(
                "exchange.supertile_shared_receive_bytes_per_cycle",
                format!(
                    "must be receive_bytes_per_cycle x supertile_tiles = {expect}, got {}",
                    x.supertile_shared_receive_bytes_per_cycle
                ),
            ));
        }
        if x.sync_cycles > 1_000_000 {
            return Err(bad(
                "exchange.sync_cycles",
                format!("{} is implausibly large", x.sync_cycles),
            ));
        }
        if x.phase_fixed_cycles > 1_000_000 {
            return Err(bad(
                "exchange.phase_fixed_cycles",
                format!("{} is implausibly large", x.phase_fixed_cycles),
            ));
        }
        if x.route_latency_base_cycles == 0 || x.route_latency_base_cycles > 1000 {
            return Err(bad(
                "exchange.route_latency_base_cycles",
                format!("must be in 1..=1000, got {}", x.route_latency_base_cycles),
            ));
        }
        if x.route_latency_columns_per_cycle == 0 {
            return Err(bad(
                "exchange.route_latency_columns_per_cycle",
                "must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// Checks `host`.
    fn validate_host(&self, bad: Bad) -> Result<(), TargetError> {
        let h = &self.host;
        if h.ipu_links > 64 {
            return Err(bad(
                "host.ipu_links",
                format!("must be at most 64, got {}", h.ipu_links),
            ));
        }
        for (field, v) in [
            ("host.link_bytes_per_second", h.link_bytes_per_second),
            (
                "host.chip_to_chip_bytes_per_second",
                h.chip_to_chip_bytes_per_second,
            ),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(field, format!("must be a positive number, got {v}")));
            }
        }
        Ok(())
    }

    /// Number of tiles.
    pub fn tiles(&self) -> u32 {
        self.chip.tiles
    }

    /// SRAM bytes per tile.
    pub fn sram_bytes(&self) -> u64 {
        self.memory.bytes
    }

    /// Bytes per exchange word (one send or one receive per cycle).
    pub fn exchange_word_bytes(&self) -> u32 {
        self.exchange.send_bytes_per_cycle.max(1)
    }

    /// One past the last SRAM address of a tile.
    pub fn memory_end(&self) -> u64 {
        self.memory.base_address + self.memory.bytes
    }

    /// Address range of the interleaved region, if the target has one.
    pub fn interleaved_range(&self) -> Option<std::ops::Range<u64>> {
        self.memory.interleaved_start.map(|s| s..self.memory_end())
    }

    /// True if `address` lies in the interleaved (128-bit load) region.
    pub fn is_interleaved(&self, address: u64) -> bool {
        self.interleaved_range()
            .is_some_and(|r| r.contains(&address))
    }

    /// Peak dense MAC throughput of the chip in an AMP mode, in TFLOP/s
    /// (2 flops per MAC at the target clock); reporting only.
    pub fn peak_tflops(&self, input: ElemType, partials: ElemType) -> Option<f64> {
        self.amp_mode(input, partials).map(|a| {
            self.chip.tiles as f64 * a.macs_per_cycle as f64 * 2.0 * self.chip.clock_hz / 1e12
        })
    }

    /// A multi-line listing of the main figures (for `--target` diagnostics).
    pub fn describe(&self) -> String {
        let x = &self.exchange;
        let mut out = format!("target {}: {}\n", self.name, self.description);
        out += &format!(
            "  tiles {} ({} columns of {}), clock {:.3} GHz\n",
            self.chip.tiles,
            self.columns(),
            self.chip.tiles_per_column,
            self.chip.clock_hz / 1e9
        );
        out += &format!(
            "  SRAM {} B/tile at {:#x}..{:#x}",
            self.memory.bytes,
            self.memory.base_address,
            self.memory_end()
        );
        match self.interleaved_range() {
            Some(r) => out += &format!(", interleaved from {:#x}\n", r.start),
            None => out += "\n",
        }
        out += &format!(
            "  threads: {} workers + {} supervisor; vector {} bits\n",
            self.threads.worker_contexts,
            self.threads.supervisor_contexts,
            self.vector.datapath_bits
        );
        for a in &self.amp {
            out += &format!(
                "  AMP {} -> {}: {} MACs/cycle/tile, K-block {}\n",
                a.input, a.partials, a.macs_per_cycle, a.k_block
            );
        }
        out += &format!(
            "  exchange: send {} B/cycle, receive {} B/cycle, supertile shared {} B/cycle, sync {} cycles, phase {} cycles, latency {} + ceil(columns / {})\n",
            x.send_bytes_per_cycle,
            x.receive_bytes_per_cycle,
            x.supertile_shared_receive_bytes_per_cycle,
            x.sync_cycles,
            x.phase_fixed_cycles,
            x.route_latency_base_cycles,
            x.route_latency_columns_per_cycle
        );
        out += &format!(
            "  host link {:.0} GB/s\n",
            self.host.link_bytes_per_second / 1e9
        );
        out
    }

    /// Column of a tile in the modelled layout.
    pub fn column_of(&self, tile: u32) -> u32 {
        // max(1): fields are public, so never divide by an unvalidated zero.
        tile / self.chip.tiles_per_column.max(1)
    }

    /// Number of columns in the modelled layout.
    pub fn columns(&self) -> u32 {
        self.chip.tiles.div_ceil(self.chip.tiles_per_column.max(1))
    }

    /// Cycles from a send on `src` to the word being visible on `dst`
    /// (assumed model, see the target file): base + ceil(column distance / rate).
    pub fn route_latency(&self, src: u32, dst: u32) -> u32 {
        let d = self.column_of(src).abs_diff(self.column_of(dst));
        self.exchange.route_latency_base_cycles
            + d.div_ceil(self.exchange.route_latency_columns_per_cycle.max(1))
    }

    /// Largest route latency between any two tiles.
    pub fn max_route_latency(&self) -> u32 {
        self.route_latency(0, self.chip.tiles.saturating_sub(1))
    }

    /// The other tile of `tile`'s supertile, if the target pairs tiles.
    pub fn supertile_partner(&self, tile: u32) -> Option<u32> {
        (self.exchange.supertile_tiles == 2 && tile < self.chip.tiles).then_some(tile ^ 1)
    }

    /// The AMP mode for an input/partials pair, if the target has it.
    pub fn amp_mode(&self, input: ElemType, partials: ElemType) -> Option<&AmpMode> {
        self.amp
            .iter()
            .find(|a| a.input == input && a.partials == partials)
    }

    /// Compute lower bound of `macs` MACs on one tile in an AMP mode.
    pub fn amp_cycles_lower_bound(
        &self,
        macs: u64,
        input: ElemType,
        partials: ElemType,
    ) -> Option<u64> {
        self.amp_mode(input, partials)
            .map(|a| macs.div_ceil(a.macs_per_cycle.max(1) as u64))
    }

    /// One-tile f16 GEMM (M x K times K x N) cycle estimate, if the target has one.
    pub fn gemm_cycles_f32(&self, m: u64, k: u64, n: u64) -> Option<u64> {
        self.gemm.f32.as_ref().map(|e| e.cycles(m, k, n))
    }

    pub fn gemm_cycles_f16(&self, m: u64, k: u64, n: u64) -> Option<u64> {
        self.gemm.f16.as_ref().map(|e| e.cycles(m, k, n))
    }

    /// One-tile f8 GEMM (M x K times K x N) cycle estimate, if the target has one.
    pub fn gemm_cycles_f8(&self, m: u64, k: u64, n: u64) -> Option<u64> {
        self.gemm.f8.as_ref().map(|e| e.cycles(m, k, n))
    }

    /// Cycles of an exchange phase whose data moves in `horizon` cycles:
    /// the fixed per-phase cost plus the horizon (sync is counted separately).
    pub fn exchange_phase_cycles(&self, horizon: u64) -> u64 {
        self.exchange.phase_fixed_cycles as u64 + horizon
    }

    /// Cycles the host link takes to move `bytes` one way (PCIe at
    /// `host.link_bytes_per_second`, counted at the tile clock).
    pub fn host_link_cycles(&self, bytes: u64) -> u64 {
        let per_cycle = self.host.link_bytes_per_second / self.chip.clock_hz;
        if bytes == 0 || per_cycle.is_nan() || per_cycle <= 0.0 {
            return 0;
        }
        (bytes as f64 / per_cycle).ceil() as u64
    }

    /// Converts cycles to seconds at the target clock (reporting only).
    pub fn cycles_to_seconds(&self, cycles: u64) -> f64 {
        cycles as f64 / self.chip.clock_hz
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} tiles, {} B SRAM/tile, {:.2} GHz)",
            self.name,
            self.chip.tiles,
            self.memory.bytes,
            self.chip.clock_hz / 1e9
        )
    }
}

#[cfg(test)]
mod tests;
