//! The machine stage's parallel parts give what doing each part in turn
//! gives: the exchange rows equal a sequential build, and the package and
//! summaries do not depend on the number of threads.

use super::*;
use ipu_ir::pass::PassManager;
use ipu_ir::Registry;

/// The 16-tile MLP of the lit tests, lowered to the exchange stage: (context, function).
fn exchange_stage() -> (Context, Op) {
    let mut r = Registry::new();
    ipu_dialects::register_all_dialects(&mut r);
    crate::register_lowering_passes(&mut r);
    let r = Arc::new(r);
    let mut cx = Context::new(r.clone());
    let src = include_str!("../../../lit/Conversion/ExchangeToMachine/mlp.mlir");
    let m = ipu_ir::parser::parse_source(&mut cx, "mlp.mlir", src).expect("parses");
    let mut pm = PassManager::new("builtin.module");
    pm.add_pipeline(
        &r,
        "builtin.module(convert-nn-to-tile{target=test16},convert-tile-to-exchange{target=test16})",
    )
    .expect("pipeline");
    pm.run(&mut cx, m, &mut std::io::sink())
        .unwrap_or_else(|d| panic!("{d}"));
    let f = cx
        .nested_ops(m)
        .into_iter()
        .find(|&o| cx.is(o, "func.func"))
        .expect("a function");
    (cx, f)
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}

/// Each phase's rows as when the phases are done one after another: its
/// schedule, its tiles' rows, every entry resolved to its tile's buffer.
fn sequential_rows(program: &Program, target: &Arc<Target>) -> Vec<PhaseRows> {
    let mut scheduler = ExchangeScheduler::new(target.clone());
    let mut out = Vec::new();
    for (s, step) in program.steps.iter().enumerate() {
        let Step::Exchange(ph) = step else { continue };
        let (phase, vs) = program.virtual_phase(ph);
        let (schedule, _) = scheduler.schedule_memo(&phase).expect("schedules");
        let mut rows = Vec::new();
        for (tile, entries) in tile_rows(&phase, &schedule.fragments, target)
            .into_iter()
            .enumerate()
        {
            let tile = tile as u32;
            let row: Vec<_> = entries
                .into_iter()
                .map(|e| match e {
                    RowEntry::Send { cycle, offset, len } => {
                        let (b, rel) =
                            VirtualSpace::resolve(&vs.src, tile, u64::from(offset)).expect("in");
                        let (b, rel) = (b as u32, rel as u32);
                        let e = RowEntry::Send {
                            cycle,
                            offset: rel,
                            len,
                        };
                        (e, Some(b))
                    }
                    RowEntry::Capture {
                        cycle,
                        port,
                        offset,
                        len,
                    } => {
                        let (b, rel) =
                            VirtualSpace::resolve(&vs.dst, tile, u64::from(offset)).expect("in");
                        let (b, rel) = (b as u32, rel as u32);
                        let e = RowEntry::Capture {
                            cycle,
                            port,
                            offset: rel,
                            len,
                        };
                        (e, Some(b))
                    }
                    select => (select, None),
                })
                .collect();
            if !row.is_empty() {
                rows.push((tile, row));
            }
        }
        out.push(PhaseRows {
            step: s,
            summary: StepSummary {
                kind: StepKind::Exchange,
                label: String::new(),
                cycles: Some(target.exchange_phase_cycles(schedule.horizon)),
                bound: None,
            },
            rows,
        });
    }
    out
}

#[test]
fn exchange_rows_equal_a_sequential_build_at_any_thread_count() {
    let (cx, f) = exchange_stage();
    let target = Arc::new(Target::load("test16").expect("test16"));
    let program = Program::read(&cx, f).unwrap_or_else(|d| panic!("{d}"));
    let want = sequential_rows(&program, &target);
    assert!(want.len() >= 2, "the MLP has several exchange phases");
    assert!(want.iter().all(|p| !p.rows.is_empty()));
    for threads in [1, 2, 4] {
        let got = pool(threads).install(|| exchange_rows(&program, &target));
        assert_eq!(got.len(), want.len(), "{threads} threads");
        for (g, w) in got.into_iter().zip(&want) {
            let g = g.unwrap_or_else(|d| panic!("{d}"));
            assert_eq!(g.step, w.step, "{threads} threads");
            assert_eq!(g.summary.cycles, w.summary.cycles);
            assert_eq!(
                g.rows, w.rows,
                "phase at step {}, {threads} threads",
                w.step
            );
        }
    }
}

#[test]
fn package_and_summaries_do_not_depend_on_the_thread_count() {
    let (cx, f) = exchange_stage();
    let target = Arc::new(Target::load("test16").expect("test16"));
    let build = |threads: usize| {
        let (pkg, stats, summary) = pool(threads)
            .install(|| build_package_with(&cx, f, &target, true))
            .unwrap_or_else(|d| panic!("{d}"));
        (pkg, format!("{stats:?}"), format!("{summary:?}"))
    };
    let one = build(1);
    assert!(!one.0.images.is_empty());
    assert!(
        one.2.contains("select tile"),
        "readable rows are summarised"
    );
    for threads in [2, 4] {
        let many = build(threads);
        assert!(many.0 == one.0, "package differs with {threads} threads");
        assert_eq!(many.1, one.1, "{threads} threads");
        assert_eq!(many.2, one.2, "{threads} threads");
    }
}
