//! Loading, validation and derived-figure tests.

use super::*;

fn ipu21_text() -> &'static str {
    BUILTINS[0].1
}

fn invalid_field(text: &str) -> (String, String) {
    match Target::from_toml_str(text, "t.toml") {
        Err(TargetError::Invalid { field, message, .. }) => (field, message),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn all_builtins_load_and_validate() {
    for name in Target::builtin_names() {
        let t = Target::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(t.name, name);
        assert!(t.tiles() > 0);
    }
}

#[test]
fn ipu21_figures_match_machine_model() {
    let t = Target::load("ipu21").unwrap();
    assert_eq!(t.tiles(), 1472);
    assert_eq!(t.sram_bytes(), 638_976);
    assert_eq!(t.threads.worker_contexts, 6);
    assert_eq!(t.exchange.send_bytes_per_cycle, 4);
    assert_eq!(t.exchange.receive_bytes_per_cycle, 4);
    assert_eq!(t.exchange.supertile_shared_receive_bytes_per_cycle, 8);
    assert_eq!(t.exchange.sync_cycles, 90);
    assert_eq!(t.exchange.phase_fixed_cycles, 100);
    assert_eq!(
        t.amp_mode(ElemType::F8, ElemType::F16)
            .unwrap()
            .macs_per_cycle,
        128
    );
    assert_eq!(
        t.amp_mode(ElemType::F16, ElemType::F16).unwrap().k_block,
        16
    );
    assert_eq!(
        t.amp_mode(ElemType::F32, ElemType::F32)
            .unwrap()
            .macs_per_cycle,
        16
    );
    assert_eq!(t.columns(), 92);
    assert_eq!(t.vector.f8_lanes, 8);
}

#[test]
fn sizes_of_test_targets() {
    assert_eq!(Target::load("test4").unwrap().tiles(), 4);
    assert_eq!(Target::load("test16").unwrap().tiles(), 16);
    let mk2 = Target::load("ipu2").unwrap();
    assert!(mk2.amp_mode(ElemType::F8, ElemType::F16).is_none());
    assert_eq!(mk2.gemm_cycles_f8(64, 64, 64), None);
}

#[test]
fn loads_from_a_file_path() {
    let dir = std::env::temp_dir().join(format!("ipu-target-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("custom.toml");
    std::fs::write(
        &path,
        ipu21_text().replace("name = \"ipu21\"", "name = \"custom\""),
    )
    .unwrap();
    let t = Target::load(path.to_str().unwrap()).unwrap();
    assert_eq!(t.name, "custom");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unknown_name_lists_builtins() {
    let e = Target::load("no-such-target-xyz").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("unknown target 'no-such-target-xyz'"), "{msg}");
    assert!(msg.contains("ipu21") && msg.contains("test16"), "{msg}");
}

#[test]
fn syntax_error_names_origin_and_line() {
    let e = Target::from_toml_str("name = \"x\"\n[chip\n", "bad.toml").unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, TargetError::Parse { .. }));
    assert!(
        msg.starts_with("bad.toml: invalid target description"),
        "{msg}"
    );
    assert!(msg.contains("line 2"), "{msg}");
}

#[test]
fn unknown_key_is_rejected() {
    let text = ipu21_text().replace("sync_cycles = 90", "sync_cycles = 90\nsync_cylces = 3");
    let msg = Target::from_toml_str(&text, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("unknown field `sync_cylces`"), "{msg}");
}

#[test]
fn missing_field_is_rejected() {
    let text = ipu21_text().replace("phase_fixed_cycles = 100\n", "");
    let msg = Target::from_toml_str(&text, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("missing field `phase_fixed_cycles`"), "{msg}");
}

#[test]
fn wrong_type_is_rejected() {
    let text = ipu21_text().replace("tiles = 1472", "tiles = \"many\"");
    let msg = Target::from_toml_str(&text, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("invalid type"), "{msg}");
}

#[test]
fn range_violations_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        ("tiles = 1472", "tiles = 0", "chip.tiles"),
        (
            "tiles_per_column = 16",
            "tiles_per_column = 0",
            "chip.tiles_per_column",
        ),
        ("clock_hz = 1.486e9", "clock_hz = -1.0", "chip.clock_hz"),
        ("bytes = 638976", "bytes = 638977", "memory.bytes"),
        (
            "interleaved_start = 0x80000",
            "interleaved_start = 0x10",
            "memory.interleaved_start",
        ),
        (
            "worker_contexts = 6",
            "worker_contexts = 0",
            "threads.worker_contexts",
        ),
        ("f16_lanes = 4", "f16_lanes = 3", "vector.f16_lanes"),
        (
            "macs_per_cycle = 128",
            "macs_per_cycle = 100",
            "amp[3].macs_per_cycle",
        ),
        (
            "send_bytes_per_cycle = 4",
            "send_bytes_per_cycle = 3",
            "exchange.send_bytes_per_cycle",
        ),
        (
            "receive_bytes_per_cycle = 4",
            "receive_bytes_per_cycle = 8",
            "exchange.receive_bytes_per_cycle",
        ),
        (
            "supertile_shared_receive_bytes_per_cycle = 8",
            "supertile_shared_receive_bytes_per_cycle = 12",
            "exchange.supertile_shared_receive_bytes_per_cycle",
        ),
        (
            "route_latency_columns_per_cycle = 8",
            "route_latency_columns_per_cycle = 0",
            "exchange.route_latency_columns_per_cycle",
        ),
        (
            "link_bytes_per_second = 64e9",
            "link_bytes_per_second = 0.0",
            "host.link_bytes_per_second",
        ),
    ];
    for (from, to, field) in cases {
        assert!(ipu21_text().contains(from), "fixture lacks {from}");
        let (got, message) = invalid_field(&ipu21_text().replacen(from, to, 1));
        assert_eq!(&got, field, "{to}: {message}");
        assert!(!message.is_empty());
    }
}

#[test]
fn odd_tile_count_with_supertiles_is_rejected() {
    let text = ipu21_text().replace("tiles = 1472", "tiles = 1471");
    let (field, message) = invalid_field(&text);
    assert_eq!(field, "exchange.supertile_tiles");
    assert!(message.contains("even"), "{message}");
}

#[test]
fn duplicate_amp_mode_is_rejected() {
    let text = ipu21_text().replace(
        "input = \"f8\"\npartials = \"f16\"",
        "input = \"f16\"\npartials = \"f16\"",
    );
    let (field, message) = invalid_field(&text);
    assert_eq!(field, "amp[3].input");
    assert!(
        message.contains("duplicate AMP mode f16 -> f16"),
        "{message}"
    );
}

#[test]
fn f8_estimate_without_f8_amp_is_rejected() {
    let text = ipu21_text().replace(
        "input = \"f8\"\npartials = \"f16\"",
        "input = \"f32\"\npartials = \"f16\"",
    );
    let (field, _) = invalid_field(&text);
    assert_eq!(field, "gemm.f8");
}

#[test]
fn route_latency_follows_column_distance() {
    let t = Target::load("ipu21").unwrap();
    assert_eq!(t.route_latency(0, 15), 6); // same column
    assert_eq!(t.route_latency(0, 16), 7); // next column: ceil(1/8) = 1
    assert_eq!(t.route_latency(16, 0), 7); // symmetric
    assert_eq!(t.route_latency(0, 16 * 8), 7); // 8 columns: ceil(8/8) = 1
    assert_eq!(t.route_latency(0, 16 * 9), 8); // 9 columns: 2
    assert_eq!(t.max_route_latency(), 6 + 91u32.div_ceil(8));
    assert_eq!(t.supertile_partner(10), Some(11));
    assert_eq!(t.supertile_partner(11), Some(10));
    assert_eq!(t.supertile_partner(1472), None);
}

#[test]
fn gemm_estimates_follow_the_formulas() {
    let t = Target::load("ipu21").unwrap();
    // f16: 63 + Kb*(15 + Nb*(245 + 24n)); M=12 -> n=2, K=32 -> Kb=2, N=48 -> Nb=3.
    assert_eq!(
        t.gemm_cycles_f16(12, 32, 48),
        Some(63 + 2 * (15 + 3 * (245 + 24 * 2)))
    );
    // f8: 67 + Nb*(46 + Kb*(364 + 24n)); M=7 -> n=2, K=33 -> Kb=2, N=16 -> Nb=1.
    assert_eq!(
        t.gemm_cycles_f8(7, 33, 16),
        Some(67 + (46 + 2 * (364 + 24 * 2)))
    );
    assert_eq!(t.gemm_cycles_f16(0, 16, 16), Some(0));
    // Large shapes tend to M*K*N/64 (f16) and M*K*N/128 (f8).
    let (m, k, n) = (6 * 400, 16 * 40, 16 * 40);
    let f16 = t.gemm_cycles_f16(m, k, n).unwrap() as f64 / (m * k * n / 64) as f64;
    let f8 = t.gemm_cycles_f8(m, 2 * k, n).unwrap() as f64 / (m * 2 * k * n / 128) as f64;
    assert!((1.0..1.05).contains(&f16), "{f16}");
    assert!((1.0..1.05).contains(&f8), "{f8}");
    // No overflow panic on absurd shapes.
    assert_eq!(
        t.gemm_cycles_f16(u64::MAX, u64::MAX, u64::MAX),
        Some(u64::MAX)
    );
}

#[test]
fn amp_lower_bound_and_phase_cost() {
    let t = Target::load("ipu21").unwrap();
    assert_eq!(
        t.amp_cycles_lower_bound(1000, ElemType::F16, ElemType::F16),
        Some(16)
    ); // ceil(1000/64)
    assert_eq!(
        t.amp_cycles_lower_bound(1000, ElemType::F8, ElemType::F32),
        None
    );
    assert_eq!(t.exchange_phase_cycles(500), 600);
}

#[test]
fn memory_regions_and_description() {
    let t = Target::load("ipu21").unwrap();
    assert_eq!(t.memory_end(), 0xE8000);
    assert_eq!(t.interleaved_range(), Some(0x80000..0xE8000));
    assert!(t.is_interleaved(0x80000));
    assert!(!t.is_interleaved(0x7FFFF));
    assert!(!t.is_interleaved(0xE8000));
    // 1472 x 64 MACs x 2 x 1.486 GHz ~ 280 TFLOP/s, the F figure.
    let peak = t.peak_tflops(ElemType::F16, ElemType::F16).unwrap();
    assert!((peak - 280.0).abs() < 1.0, "{peak}");
    let d = t.describe();
    assert!(d.contains("tiles 1472 (92 columns of 16)"), "{d}");
    assert!(
        d.contains("AMP f8 -> f16: 128 MACs/cycle/tile, K-block 32"),
        "{d}"
    );
}
