//! The machine stage's parallel parts give what doing each part in turn
//! gives: the exchange rows equal a sequential build, and the package and
//! summaries do not depend on the number of threads. And local copies run
//! during the phase before their compute set only when it cannot disturb
//! them.

use super::*;
use ipu_ir::pass::PassManager;
use ipu_ir::Registry;

/// `src` parsed and lowered to the exchange stage for test16: (context, module).
fn to_exchange_stage(name: &str, src: &str) -> (Context, Op) {
    let mut r = Registry::new();
    ipu_dialects::register_all_dialects(&mut r);
    r.register_pass(ipu_nn_to_tile::INFO);
    r.register_pass(ipu_tile_to_exchange::INFO);
    let r = Arc::new(r);
    let mut cx = Context::new(r.clone());
    let m = ipu_ir::parser::parse_source(&mut cx, name, src).expect("parses");
    let mut pm = PassManager::new("builtin.module");
    pm.add_pipeline(
        &r,
        "builtin.module(convert-nn-to-tile{target=test16},convert-tile-to-exchange{target=test16})",
    )
    .expect("pipeline");
    pm.run(&mut cx, m, &mut std::io::sink())
        .unwrap_or_else(|d| panic!("{d}"));
    (cx, m)
}

/// The 16-tile MLP of the lit tests, lowered to the exchange stage: (context, function).
fn exchange_stage() -> (Context, Op) {
    let src = include_str!("../../../lit/Conversion/ExchangeToMachine/mlp.mlir");
    let (cx, m) = to_exchange_stage("mlp.mlir", src);
    let f = cx
        .nested_ops(m)
        .into_iter()
        .find(|&o| ipu_dialects::func::Func::isa(&cx, o))
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
        out.push(PhaseRows {
            step: s,
            summary: StepSummary {
                kind: StepKind::Exchange,
                label: String::new(),
                cycles: Some(target.exchange_phase_cycles(schedule.horizon)),
                bound: None,
            },
            reused: false,
            rows: resolved_rows(&phase, &schedule, &vs, target),
            same_as: None,
        });
    }
    out
}

/// The rows of `phase` under `schedule`, every entry resolved to its tile's
/// buffer in `vs`.
fn resolved_rows(
    phase: &ipu_exchange_schedule::Phase,
    schedule: &ipu_exchange_schedule::Schedule,
    vs: &VirtualSpace,
    target: &Target,
) -> Vec<(u32, ProgramRow)> {
    let mut rows = Vec::new();
    for (tile, entries) in tile_rows(phase, &schedule.fragments, target)
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
    rows
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
fn a_repeated_phase_reuses_the_schedule_relocated_to_its_buffers() {
    let (cx, f) = exchange_stage();
    let target = Arc::new(Target::load("test16").expect("test16"));
    let mut program = Program::read(&cx, f).unwrap_or_else(|d| panic!("{d}"));
    // A copy of the first phase, naming fresh buffers of the same sizes.
    let (first, decl) = program
        .steps
        .iter()
        .enumerate()
        .find_map(|(s, st)| match st {
            Step::Exchange(ph) if !ph.moves.is_empty() => Some((s, ph.clone())),
            _ => None,
        })
        .expect("an exchange phase");
    let mut copy = decl.clone();
    let mut fresh: BTreeMap<BufId, BufId> = BTreeMap::new();
    for m in &mut copy.moves {
        for b in [&mut m.src, &mut m.dst] {
            *b = *fresh.entry(*b).or_insert_with(|| {
                program.buffers.push(program.buffers[*b].clone());
                program.buffers.len() - 1
            });
        }
    }
    program.steps.push(Step::Exchange(copy.clone()));
    let last = program.steps.len() - 1;
    // What a scheduler that never saw the original makes of the copy.
    let (phase, vs) = program.virtual_phase(&copy);
    let schedule = ExchangeScheduler::new(target.clone())
        .schedule(&phase)
        .expect("schedules");
    let want = resolved_rows(&phase, &schedule, &vs, &target);
    assert!(want
        .iter()
        .flat_map(|(_, r)| r)
        .any(|(_, b)| b.is_some_and(|b| fresh.values().any(|&n| n as u32 == b))));
    for threads in [1, 2] {
        let got = pool(threads).install(|| exchange_rows(&program, &target));
        let got: Vec<PhaseRows> = got
            .into_iter()
            .map(|r| r.unwrap_or_else(|d| panic!("{d}")))
            .collect();
        let orig = got.iter().find(|p| p.step == first).expect("the original");
        let again = got.last().expect("the copy");
        assert_eq!(again.step, last);
        assert!(!orig.reused && again.reused, "{threads} threads");
        assert_eq!(again.summary.cycles, orig.summary.cycles);
        assert_eq!(again.rows, want, "{threads} threads");
        assert_ne!(
            again.rows, orig.rows,
            "the copy's rows name its own buffers"
        );
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

#[test]
fn local_copies_run_during_the_phase_before_unless_it_touches_them() {
    use ipu_program::Move;
    let (cx, f) = exchange_stage();
    let target = Arc::new(Target::load("test16").expect("test16"));
    let program = Program::read(&cx, f).unwrap_or_else(|d| panic!("{d}"));
    // The MLP's tile 0 copies the part of the bias it holds itself, in a
    // compute set right after a phase.
    let (s, copy) = program
        .steps
        .iter()
        .enumerate()
        .find_map(|(s, st)| match st {
            Step::Compute(c)
                if s > 0
                    && !c.copies.is_empty()
                    && matches!(program.steps[s - 1], Step::Exchange(_)) =>
            {
                Some((s, c.copies[0].clone()))
            }
            _ => None,
        })
        .expect("a compute set with a local copy after a phase");
    let tile = copy.transfers[0].src_tile;
    let during = |program: &Program| {
        let plan = plan(&cx, f, program, &target).unwrap_or_else(|d| panic!("{d}"));
        let w = &plan.tiles[&tile];
        let calls = w.calls.get(&s).map_or(0, |c| c.len());
        let moved = w.during.get(&(s - 1)).cloned().unwrap_or_default();
        (calls, moved)
    };
    let (calls, moved) = during(&program);
    assert!(calls > 0);
    assert!(!moved.is_empty(), "the copy runs during the phase");
    assert!(moved.iter().all(|&k| k < calls));
    // A phase that sends from the copy's destination, or captures into its
    // source or onto the bytes it writes, keeps the copy in its compute set;
    // a capture beside those bytes does not.
    let other = other_buffer(&program, &copy);
    let end = copy
        .transfers
        .iter()
        .filter(|t| t.dsts[0].tile == tile)
        .map(|t| t.dsts[0].offset + t.len)
        .max()
        .expect("a transfer");
    let capture_at = |offset: u32| {
        let Step::Exchange(ph) = &program.steps[s - 1] else {
            unreachable!()
        };
        let mut ph = ph.clone();
        ph.moves.push(Move {
            src: other,
            dst: copy.dst,
            transfers: vec![ipu_exchange_schedule::Transfer::unicast(
                tile, 0, 1, tile, offset,
            )]
            .into(),
        });
        runs_during(&ph, &copy)
    };
    assert!(!capture_at(end - 1), "a capture onto the copy's last byte");
    assert!(capture_at(end), "a capture just past the copy's bytes");
    for (src, dst) in [(copy.dst, other), (other, copy.src)] {
        let mut touched = program.clone();
        let Step::Exchange(ph) = &mut touched.steps[s - 1] else {
            unreachable!()
        };
        let disturbing = Move {
            src,
            dst,
            transfers: Default::default(),
        };
        ph.moves.push(disturbing);
        assert!(!runs_during(ph, &copy));
        let (calls_after, moved_after) = during(&touched);
        assert_eq!(calls_after, calls, "the copy is still called");
        assert!(moved_after.is_empty(), "the copy stays in its compute set");
    }
}

/// A buffer of `program` that is neither `copy`'s source nor its destination.
fn other_buffer(program: &Program, copy: &ipu_program::Move) -> BufId {
    (0..program.buffers.len())
        .find(|&b| b != copy.src && b != copy.dst)
        .expect("another buffer")
}

/// A module whose `@main` calls a small layer `calls` times in a chain,
/// each call with its own parameters, lowered to the exchange stage for
/// test16: (context, `@main`).
fn called_layer(calls: usize) -> (Context, Op) {
    let mut src = String::from(
        "func.func private @layer(%x: tensor<8x64xf16>, %w: tensor<64x64xf16> {ipu.weight}, %b: tensor<64xf16> {ipu.weight}) -> tensor<8x64xf16> {\n\
         \x20 %h = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x64xf16>) -> tensor<8x64xf16>\n\
         \x20 %y = nn.add %h, %b : (tensor<8x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>\n\
         \x20 return %y : tensor<8x64xf16>\n}\nfunc.func @main(%x0: tensor<8x64xf16>",
    );
    for i in 0..calls {
        src += &format!(
            ", %w{i}: tensor<64x64xf16> {{ipu.weight}}, %b{i}: tensor<64xf16> {{ipu.weight}}"
        );
    }
    src += ") -> tensor<8x64xf16> {\n";
    for i in 0..calls {
        src += &format!(
            "  %x{} = func.call @layer(%x{i}, %w{i}, %b{i}) : (tensor<8x64xf16>, tensor<64x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>\n",
            i + 1
        );
    }
    src += &format!("  return %x{calls} : tensor<8x64xf16>\n}}\n");
    let (cx, m) = to_exchange_stage("calls.mlir", &src);
    let f = cx
        .nested_ops(m)
        .into_iter()
        .find(|&o| cx.get_str_attr(o, "sym_name") == Some("main"))
        .expect("@main");
    (cx, f)
}

#[test]
fn calls_share_one_frame_and_store_its_rows_once() {
    use memory::Category;
    let target = Arc::new(Target::load("test16").expect("test16"));
    let report = |calls: usize| {
        let (cx, f) = called_layer(calls);
        build_package(&cx, f, &target)
            .unwrap_or_else(|d| panic!("{d}"))
            .2
            .memory
    };
    let (one, three) = (report(1), report(3));
    let of = |r: &memory::MemoryReport, c: Category| -> Vec<u64> {
        r.tiles.iter().map(|t| t.bytes[c.index()]).collect()
    };
    // The layer's exchange rows touch only frame buffers: stored once per tile.
    assert_eq!(
        of(&one, Category::ExchangeRows),
        of(&three, Category::ExchangeRows)
    );
    assert!(of(&one, Category::ExchangeRows).iter().any(|&b| b > 4));
    // A record naming a parameter is stored once too: each call has a
    // block of its own words, which the subroutine writes into it.
    let (r1, r3) = (
        of(&one, Category::KernelRecords),
        of(&three, Category::KernelRecords),
    );
    assert!(
        r1.iter().zip(&r3).all(|(a, b)| b < &(2 * a)),
        "{r1:?} {r3:?}"
    );
    // The callee's code once: the programs grow by a few instructions per call.
    let (c1, c3) = (of(&one, Category::Code), of(&three, Category::Code));
    assert!(
        c1.iter().zip(&c3).all(|(a, b)| b < &(a + 256)),
        "{c1:?} {c3:?}"
    );
    // Each frame buffer is one buffer, named for the callee; only the
    // parameters' buffers are per call.
    let placed: std::collections::BTreeSet<usize> = three
        .tiles
        .iter()
        .flat_map(|t| t.placements.iter().map(|p| p.buffer))
        .collect();
    let placed: Vec<&memory::BufferInfo> = placed.iter().map(|&b| &three.buffers[b]).collect();
    assert!(placed.iter().any(|b| b.name.starts_with("layer.")));
    for b in &placed {
        if b.name.starts_with("layer1.") || b.name.starts_with("layer2.") {
            assert_eq!(b.category, Category::WeightsConstants, "{}", b.name);
        }
    }
    assert!(placed.iter().any(|b| b.name.starts_with("layer2.")));
}

/// The buffers step `s` of `program` names.
fn step_buffers(program: &Program, s: usize) -> Vec<BufId> {
    let moves = |ms: &[ipu_program::Move]| -> Vec<BufId> {
        ms.iter().flat_map(|m| [m.src, m.dst]).collect()
    };
    match &program.steps[s] {
        Step::Compute(c) => {
            let mut out = moves(&c.copies);
            for v in &c.vertices {
                out.extend(v.call.record.iter().filter_map(|w| match w {
                    Word::Buf(b, _) => Some(*b),
                    Word::Val(_) => None,
                }));
            }
            out
        }
        Step::Exchange(p) => moves(&p.moves),
        Step::Call(_) => Vec::new(),
    }
}

#[test]
fn repeated_steps_share_what_planning_them_again_gives() {
    let target = Arc::new(Target::load("test16").expect("test16"));
    let (cx, f) = called_layer(3);
    let mut program = read_expanded(&cx, f, &target, 0).unwrap_or_else(|d| panic!("{d}"));
    program.check(&target).unwrap_or_else(|d| panic!("{d}"));
    program.fold_frames();
    let repeated = program.repeated_steps();
    let calls = program.frames.call_ranges();
    assert_eq!(calls.len(), 3);
    // Later calls repeat steps of the first, and only steps that name
    // frame buffers alone (a call's parameters are its own).
    let first = calls[0].0.clone();
    for (r, _) in &calls[1..] {
        assert!(r.clone().any(|s| repeated[s].is_some()));
    }
    for (s, r) in repeated.iter().enumerate() {
        let Some(s0) = r else { continue };
        assert!(first.contains(s0), "step {s} repeats {s0}");
        let bufs = step_buffers(&program, s);
        assert!(bufs.iter().all(|&b| program.frames.is_frame(b)), "step {s}");
        assert_eq!(bufs, step_buffers(&program, *s0));
    }
    assert!(calls[1]
        .0
        .clone()
        .any(|s| repeated[s].is_none() && !step_buffers(&program, s).is_empty()));
    // The package and summaries are the same as when every step is planned anew.
    let build = |repeated: Vec<Option<usize>>| {
        let plan = plan_with(&cx, f, &program, &target, repeated).unwrap_or_else(|d| panic!("{d}"));
        let (pkg, stats, summary) =
            build_package_from(&cx, f, &target, plan, true).unwrap_or_else(|d| panic!("{d}"));
        (pkg, format!("{stats:?}"), format!("{summary:?}"))
    };
    let none = vec![None; program.steps.len()];
    let (shared, fresh) = (build(repeated), build(none));
    assert!(shared.0 == fresh.0, "the package differs");
    assert_eq!(shared.1, fresh.1);
    assert_eq!(shared.2, fresh.2);
}
