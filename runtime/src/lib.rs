//! The simulated device. For now: the single-tile simulator ([`tile`]),
//! which executes a linked tile image cycle by cycle as `docs/isa.md`
//! specifies, and the exchange interface ([`exchange`]) through which a
//! whole-chip simulator connects 1472 tiles.

pub mod chip;
pub mod exchange;
pub mod tile;

pub use exchange::{EngineCapture, EngineRow, EngineSend, ExchangePort, Loopback, NoExchange};
pub use tile::{
    ContextId, DecodedCode, Fault, FaultKind, HostAccessError, Outcome, Tile, TileConfig,
    TileStats, WORKERS,
};
