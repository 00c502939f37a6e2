//! Exchange-table rows: the data structure the `exch` instruction executes
//! (docs/isa.md section 7).
//!
//! A row is a sequence of 32-bit little-endian words: word 0 is the entry
//! count N, then N entries in non-decreasing cycle order. The first word of
//! every entry is `kind << 30 | cycle` (cycle relative to the engine's time
//! base T0, 30 bits):
//!
//! | kind | entry | words | further words |
//! |---|---|---|---|
//! | 0 | select | 2 | sender tile id (`0xFFFFFFFF`: none) |
//! | 1 | capture | 3 | destination byte address; bit 31 partner flag, bits 0..30 length in bytes |
//! | 2 | send | 3 | source byte address; length in bytes |
//! | 3 | invalid | | |
//!
//! [`encode_row`] builds a row, [`decode_row`] reads and checks one (every
//! check that does not depend on the tile's memory map; the simulator adds
//! the address checks).

/// Bits of the cycle field of an entry's first word.
pub const CYCLE_BITS: u32 = 30;
/// Largest relative cycle an entry (and the end of its words) may reach.
pub const MAX_CYCLE: u64 = (1 << CYCLE_BITS) - 1;
/// The partner flag of a capture's length word.
pub const PARTNER_FLAG: u32 = 1 << 31;
/// "No sender" in a select entry.
pub const NO_SENDER: u32 = u32::MAX;

/// One entry of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowEntry {
    /// From `T0 + cycle` on, the tile's port listens to `sender` (`None`:
    /// to nobody).
    Select { cycle: u32, sender: Option<u32> },
    /// Writes `len` bytes to `addr` from the `ceil(len / 4)` words arriving
    /// on the port (this tile's, or with `partner` the supertile partner's)
    /// in the cycles `T0 + cycle ..`.
    Capture {
        cycle: u32,
        addr: u32,
        len: u32,
        partner: bool,
    },
    /// Sends the `len` bytes at `addr` as `ceil(len / 4)` words in the
    /// cycles `T0 + cycle ..` (the last word zero-padded).
    Send { cycle: u32, addr: u32, len: u32 },
}

impl RowEntry {
    /// The entry's cycle (relative to T0).
    pub fn cycle(&self) -> u32 {
        match *self {
            RowEntry::Select { cycle, .. }
            | RowEntry::Capture { cycle, .. }
            | RowEntry::Send { cycle, .. } => cycle,
        }
    }

    /// Words the entry occupies in the row.
    pub fn row_words(&self) -> u32 {
        match self {
            RowEntry::Select { .. } => 2,
            RowEntry::Capture { .. } | RowEntry::Send { .. } => 3,
        }
    }

    /// Exchange words the entry sends or captures (0 for a select).
    pub fn data_words(&self) -> u32 {
        match *self {
            RowEntry::Select { .. } => 0,
            RowEntry::Capture { len, .. } | RowEntry::Send { len, .. } => len.div_ceil(4),
        }
    }
}

/// The words of a row holding `entries` (in the given order, unchecked).
pub fn encode_row(entries: &[RowEntry]) -> Vec<u32> {
    let mut w = Vec::with_capacity(1 + 3 * entries.len());
    w.push(entries.len() as u32);
    for e in entries {
        match *e {
            RowEntry::Select { cycle, sender } => {
                w.push(cycle);
                w.push(sender.unwrap_or(NO_SENDER));
            }
            RowEntry::Capture {
                cycle,
                addr,
                len,
                partner,
            } => {
                w.push(1 << 30 | cycle);
                w.push(addr);
                w.push(if partner { PARTNER_FLAG } else { 0 } | len);
            }
            RowEntry::Send { cycle, addr, len } => {
                w.push(2 << 30 | cycle);
                w.push(addr);
                w.push(len);
            }
        }
    }
    w
}

/// [`encode_row`] as little-endian bytes.
pub fn encode_row_bytes(entries: &[RowEntry]) -> Vec<u8> {
    encode_row(entries)
        .into_iter()
        .flat_map(u32::to_le_bytes)
        .collect()
}

/// Why a row is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    #[error("the row address {addr:#x} is not 4-byte aligned")]
    Misaligned { addr: u32 },
    #[error("the row at {addr:#x} runs outside tile memory")]
    Outside { addr: u32 },
    #[error("entry {entry}: kind 3 is not an entry kind")]
    BadKind { entry: u32 },
    #[error("entry {entry}: zero length")]
    ZeroLength { entry: u32 },
    #[error("entry {entry}: cycle {cycle} comes before the previous entry's cycle {previous}")]
    OutOfOrder {
        entry: u32,
        cycle: u32,
        previous: u32,
    },
    #[error("entry {entry}: cycle {cycle} + {words} words passes the largest cycle {MAX_CYCLE}")]
    CycleOverflow { entry: u32, cycle: u32, words: u32 },
    #[error("entry {entry}: its sends overlap an earlier send at relative cycle {cycle} (one word per cycle)")]
    SendOverlap { entry: u32, cycle: u32 },
    #[error("entry {entry}: its captures overlap an earlier capture from the same port at relative cycle {cycle}")]
    CaptureOverlap { entry: u32, cycle: u32 },
    #[error("entry {entry}: bytes {addr:#x}+{len} are outside tile memory")]
    RangeOutside { entry: u32, addr: u32, len: u32 },
    #[error("entry {entry}: capture into the code at {addr:#x}+{len}")]
    CaptureIntoCode { entry: u32, addr: u32, len: u32 },
    #[error("entry {entry}: a partner capture, but the target has no supertile pairs")]
    NoPartner { entry: u32 },
}

/// Reads the row at the start of `bytes` (little-endian words; `addr` is
/// its address, for messages) and checks everything that does not depend
/// on the memory map: kinds, lengths, cycle order, the 30-bit cycle range,
/// no two sends in one cycle, no two captures from one port in one cycle.
pub fn decode_row(bytes: &[u8], addr: u32) -> Result<Vec<RowEntry>, RowError> {
    let word = |k: u64| -> Result<u32, RowError> {
        let i = usize::try_from(k * 4).map_err(|_| RowError::Outside { addr })?;
        match bytes.get(i..i + 4) {
            Some(b) => Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            None => Err(RowError::Outside { addr }),
        }
    };
    if addr & 3 != 0 {
        return Err(RowError::Misaligned { addr });
    }
    let n = word(0)?;
    let mut out = Vec::with_capacity((n as usize).min(bytes.len() / 8));
    let mut at = 1u64;
    let mut previous = 0u32;
    // End (relative cycle) of the latest send, and of the latest capture per port.
    let (mut send_end, mut cap_end) = (0u64, [0u64; 2]);
    for entry in 0..n {
        let w0 = word(at)?;
        let (kind, cycle) = (w0 >> 30, w0 & MAX_CYCLE as u32);
        let e = match kind {
            0 => {
                let s = word(at + 1)?;
                RowEntry::Select {
                    cycle,
                    sender: (s != NO_SENDER).then_some(s),
                }
            }
            1 => {
                let (a, l) = (word(at + 1)?, word(at + 2)?);
                RowEntry::Capture {
                    cycle,
                    addr: a,
                    len: l & !PARTNER_FLAG,
                    partner: l & PARTNER_FLAG != 0,
                }
            }
            2 => RowEntry::Send {
                cycle,
                addr: word(at + 1)?,
                len: word(at + 2)?,
            },
            _ => return Err(RowError::BadKind { entry }),
        };
        at += e.row_words() as u64;
        if cycle < previous {
            return Err(RowError::OutOfOrder {
                entry,
                cycle,
                previous,
            });
        }
        previous = cycle;
        if let RowEntry::Capture { len, .. } | RowEntry::Send { len, .. } = e {
            if len == 0 {
                return Err(RowError::ZeroLength { entry });
            }
            let words = e.data_words();
            let end = cycle as u64 + words as u64;
            if end > MAX_CYCLE + 1 {
                return Err(RowError::CycleOverflow {
                    entry,
                    cycle,
                    words,
                });
            }
            let last = match e {
                RowEntry::Capture { partner, .. } => &mut cap_end[partner as usize],
                _ => &mut send_end,
            };
            if (cycle as u64) < *last {
                return Err(match e {
                    RowEntry::Send { .. } => RowError::SendOverlap { entry, cycle },
                    _ => RowError::CaptureOverlap { entry, cycle },
                });
            }
            *last = end;
        }
        out.push(e);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_are_checked() {
        let row = [
            RowEntry::Select {
                cycle: 0,
                sender: Some(5),
            },
            RowEntry::Send {
                cycle: 0,
                addr: 0x9000,
                len: 10,
            },
            RowEntry::Capture {
                cycle: 3,
                addr: 0xA001,
                len: 7,
                partner: true,
            },
            RowEntry::Select {
                cycle: 4,
                sender: None,
            },
            RowEntry::Send {
                cycle: 5,
                addr: 0x9100,
                len: 4,
            },
        ];
        let b = encode_row_bytes(&row);
        assert_eq!(b.len(), 4 * (1 + 2 + 3 + 3 + 2 + 3));
        assert_eq!(decode_row(&b, 0x100).unwrap(), row);
        assert_eq!(
            decode_row(&b[..b.len() - 1], 0x100),
            Err(RowError::Outside { addr: 0x100 })
        );
        assert_eq!(
            decode_row(&b, 0x102),
            Err(RowError::Misaligned { addr: 0x102 })
        );
        // The second send starts in the first one's last cycle (0..3).
        let r = [
            RowEntry::Send {
                cycle: 0,
                addr: 0,
                len: 12,
            },
            RowEntry::Send {
                cycle: 2,
                addr: 0,
                len: 4,
            },
        ];
        assert_eq!(
            decode_row(&encode_row_bytes(&r), 0),
            Err(RowError::SendOverlap { entry: 1, cycle: 2 })
        );
    }
}
