//! `canonicalize`: folds ops, applies every registered canonicalization
//! pattern and removes dead ops, greedily until a fixpoint.

use ipu_ir::pass::{Pass, PassInfo, PassOptionInfo, PassOptions, Statistic};
use ipu_ir::rewrite::{apply_patterns_greedily, GreedyConfig, PatternSet, RewriteStats};
use ipu_ir::{Context, Diagnostic, Op};

pub const INFO: PassInfo = PassInfo {
    argument: "canonicalize",
    name: "Canonicalizer",
    description: "Canonicalize operations: fold them, apply every registered canonicalization pattern and erase dead \
                  operations, repeatedly, until nothing changes or max-iterations is reached.",
    anchor: None,
    options: &[
        PassOptionInfo { name: "max-iterations", description: "Maximum sweeps over the IR", default: "10" },
        PassOptionInfo { name: "top-down", description: "Visit operations top-down (definitions before uses)", default: "true" },
        PassOptionInfo { name: "test-convergence", description: "Fail if the rewrites did not converge", default: "false" },
    ],
    create,
};

struct Canonicalize {
    config: GreedyConfig,
    test_convergence: bool,
    patterns: Option<PatternSet>,
    totals: RewriteStats,
}

fn create(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let config = GreedyConfig {
        max_iterations: o.get_u64("max-iterations", 10)?.min(u32::MAX as u64) as u32,
        top_down: o.get_bool("top-down", true)?,
        fold: true,
    };
    Ok(Box::new(Canonicalize {
        config,
        test_convergence: o.get_bool("test-convergence", false)?,
        patterns: None,
        totals: RewriteStats::default(),
    }))
}

impl Pass for Canonicalize {
    fn run(&mut self, cx: &mut Context, op: Op) -> Result<(), Diagnostic> {
        let patterns = self
            .patterns
            .get_or_insert_with(|| PatternSet::canonicalization(cx.registry()));
        let stats = apply_patterns_greedily(cx, op, patterns, self.config);
        self.totals.folded += stats.folded;
        self.totals.rewritten += stats.rewritten;
        self.totals.erased_dead += stats.erased_dead;
        if self.test_convergence && !stats.converged {
            return Err(Diagnostic::error(
                cx.op_loc(op),
                format!(
                    "canonicalization did not converge within {} iterations",
                    self.config.max_iterations
                ),
            ));
        }
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "num-folded",
                description: "Number of operations folded",
                value: self.totals.folded,
            },
            Statistic {
                name: "num-rewritten",
                description: "Number of pattern rewrites",
                value: self.totals.rewritten,
            },
            Statistic {
                name: "num-dce'd",
                description: "Number of dead operations erased",
                value: self.totals.erased_dead,
            },
        ]
    }
}
