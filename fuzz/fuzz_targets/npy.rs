//! Fuzz target: any bytes read as a `.npy` file (`ipu-run --input`) give a
//! tensor or an error, never a panic; a tensor that reads is written and
//! read again to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ipu_fuzz::init();
    let Ok(t) = ipu_reference::npy::parse_npy(data) else {
        return;
    };
    let bytes = ipu_reference::npy::to_npy_bytes(&t);
    let again = ipu_reference::npy::parse_npy(&bytes).expect("a written tensor reads");
    assert_eq!(
        ipu_reference::npy::to_npy_bytes(&again),
        bytes,
        "a tensor written and read again differs"
    );
});
