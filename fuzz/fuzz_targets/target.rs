//! Fuzz target: any text given to the target-description loader
//! (`--target file.toml`) gives a target or an error, never a panic; a
//! target that loads answers the questions the compiler asks of it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ipu_fuzz::init();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(t) = ipu_target::Target::from_toml_str(text, "fuzz.toml") else {
        return;
    };
    let _ = t.describe();
    let tiles = t.tiles();
    let _ = (
        t.sram_bytes(),
        t.exchange_word_bytes(),
        t.memory_end(),
        t.columns(),
    );
    let _ = t.max_route_latency();
    for tile in [0, tiles / 2, tiles.saturating_sub(1)] {
        let _ = t.column_of(tile);
        let _ = t.supertile_partner(tile);
        let _ = t.route_latency(0, tile);
        let _ = t.is_interleaved(t.memory.base_address);
    }
    let _ = t.gemm_cycles_f16(16, 64, 32);
    let _ = t.gemm_cycles_f8(16, 64, 32);
    let _ = t.exchange_phase_cycles(1000);
    let _ = t.cycles_to_seconds(1000);
});
