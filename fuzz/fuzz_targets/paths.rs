//! Fuzz target: result names and weights references never leave the
//! folders the user gave (`ipu_fuzz::paths`), on any input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ipu_fuzz::init();
    ipu_fuzz::paths::check(data);
});
