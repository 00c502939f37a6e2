//! The pass manager: a registry of passes and named pipelines, MLIR's
//! textual pipeline syntax (`builtin.module(func.func(cse),canonicalize{max-iterations=3})`),
//! nested op pass managers, verification after each pass, IR printing
//! around passes, timing and statistics.

use crate::context::{Context, Op};
use crate::diag::Diagnostic;
use crate::opdef::Registry;
use crate::printer::{op_to_string, PrintOptions};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// A declared pass option.
#[derive(Clone, Copy, Debug)]
pub struct PassOptionInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub default: &'static str,
}

/// Option values given to a pass (`{name=value ...}`), validated against its declaration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassOptions {
    pub values: BTreeMap<String, String>,
}

impl PassOptions {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(|s| s.as_str())
    }
    pub fn get_u64(&self, name: &str, default: u64) -> Result<u64, String> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| {
                format!("invalid value '{v}' for option '{name}': expected an unsigned integer")
            }),
        }
    }
    pub fn get_bool(&self, name: &str, default: bool) -> Result<bool, String> {
        match self.get(name) {
            None => Ok(default),
            Some("true" | "1" | "") => Ok(true),
            Some("false" | "0") => Ok(false),
            Some(v) => Err(format!(
                "invalid value '{v}' for option '{name}': expected true or false"
            )),
        }
    }
}

/// A statistic a pass reports (`--mlir-pass-statistics`).
#[derive(Clone, Debug)]
pub struct Statistic {
    pub name: &'static str,
    pub description: &'static str,
    pub value: u64,
}

pub trait Pass {
    /// Runs on `op` (an op of the pass's anchor kind). An error fails the pipeline.
    fn run(&mut self, cx: &mut Context, op: Op) -> Result<(), Diagnostic>;
    fn statistics(&self) -> Vec<Statistic> {
        Vec::new()
    }
}

pub type PassConstructor = fn(&PassOptions) -> Result<Box<dyn Pass>, String>;

/// A registered pass.
#[derive(Clone)]
pub struct PassInfo {
    /// The command-line name: `cse`, `canonicalize`.
    pub argument: &'static str,
    /// The display name in reports: `CSE`, `Canonicalizer`.
    pub name: &'static str,
    /// One paragraph, printed by `--help`.
    pub description: &'static str,
    /// The op it runs on, or `None` for any op.
    pub anchor: Option<&'static str>,
    pub options: &'static [PassOptionInfo],
    pub create: PassConstructor,
}

/// A registered named pipeline: a textual pipeline under a name.
#[derive(Clone)]
pub struct PipelineInfo {
    pub argument: &'static str,
    pub description: &'static str,
    pub pipeline: &'static str,
}

enum Element {
    Pass {
        info: PassInfo,
        options: PassOptions,
        pass: Box<dyn Pass>,
        time: Duration,
    },
    Nested(OpPassManager),
}

/// Passes to run on ops named `anchor` (`any` matches every op).
pub struct OpPassManager {
    pub anchor: String,
    elements: Vec<Element>,
    time: Duration,
}

impl OpPassManager {
    pub fn new(anchor: &str) -> Self {
        OpPassManager {
            anchor: anchor.to_string(),
            elements: Vec::new(),
            time: Duration::ZERO,
        }
    }

    fn matches(&self, name: &str) -> bool {
        self.anchor == "any" || self.anchor == name
    }

    /// The pipeline in textual form, as `--dump-pass-pipeline` would print it.
    pub fn to_text(&self) -> String {
        let mut s = format!("{}(", self.anchor);
        for (i, e) in self.elements.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            match e {
                Element::Pass { info, options, .. } => {
                    s.push_str(info.argument);
                    if !options.values.is_empty() {
                        s.push('{');
                        let opts: Vec<String> = options
                            .values
                            .iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect();
                        s.push_str(&opts.join(" "));
                        s.push('}');
                    }
                }
                Element::Nested(pm) => s.push_str(&pm.to_text()),
            }
        }
        s.push(')');
        s
    }
}

/// How IR is printed around passes.
#[derive(Clone, Copy, Debug, Default)]
pub struct IrPrinting {
    pub before_all: bool,
    pub after_all: bool,
    pub after_change: bool,
    pub after_failure: bool,
    pub print: PrintOptions,
}

pub struct PassManager {
    pub root: OpPassManager,
    pub verify_each: bool,
    pub printing: IrPrinting,
}

impl PassManager {
    pub fn new(anchor: &str) -> Self {
        PassManager {
            root: OpPassManager::new(anchor),
            verify_each: true,
            printing: IrPrinting::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.root.elements.is_empty()
    }

    /// Appends a textual pipeline. `builtin.module(...)` anchors on the root;
    /// a bare list of passes runs on the root too.
    pub fn add_pipeline(&mut self, registry: &Registry, text: &str) -> Result<(), String> {
        let elems = PipelineParser::new(text).parse_list()?;
        for e in elems {
            if e.nested.is_some() && e.name == self.root.anchor {
                // `builtin.module(...)` at the top names the root itself.
                for inner in e.nested.unwrap_or_default() {
                    build(registry, &mut self.root, inner, 0)?;
                }
            } else {
                build(registry, &mut self.root, e, 0)?;
            }
        }
        Ok(())
    }

    /// Appends one registered pass or pipeline by name, with options text (`a=1 b=2`).
    pub fn add_by_name(
        &mut self,
        registry: &Registry,
        name: &str,
        options: &str,
    ) -> Result<(), String> {
        let text = if options.is_empty() {
            name.to_string()
        } else {
            format!("{name}{{{options}}}")
        };
        self.add_pipeline(registry, &text)
    }

    /// Runs the pipeline on `op`. IR dumps go to `log`.
    pub fn run(
        &mut self,
        cx: &mut Context,
        op: Op,
        log: &mut dyn std::io::Write,
    ) -> Result<(), Diagnostic> {
        let printing = self.printing;
        let verify_each = self.verify_each;
        let start = Instant::now();
        let r = run_pm(&mut self.root, cx, op, printing, verify_each, log);
        self.root.time += start.elapsed();
        r
    }

    /// Timing rows: (depth, name, time), in pipeline order.
    pub fn timing_rows(&self) -> Vec<(usize, String, Duration)> {
        let mut rows = Vec::new();
        collect_timing(&self.root, 0, &mut rows);
        rows
    }

    /// `--mlir-pass-statistics` report, like MLIR's.
    pub fn statistics_report(&self) -> String {
        let mut s = String::new();
        s.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        s.push_str("                         ... Pass statistics report ...\n");
        s.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        stats_into(&self.root, 0, &mut s);
        s
    }
}

fn collect_timing(pm: &OpPassManager, depth: usize, rows: &mut Vec<(usize, String, Duration)>) {
    for e in &pm.elements {
        match e {
            Element::Pass { info, time, .. } => rows.push((depth, info.name.to_string(), *time)),
            Element::Nested(sub) => {
                rows.push((depth, format!("'{}' Pipeline", sub.anchor), sub.time));
                collect_timing(sub, depth + 1, rows);
            }
        }
    }
}

fn stats_into(pm: &OpPassManager, depth: usize, s: &mut String) {
    let pad = "  ".repeat(depth);
    for e in &pm.elements {
        match e {
            Element::Pass { info, pass, .. } => {
                let _ = writeln!(s, "{pad}{}", info.name);
                for st in pass.statistics() {
                    let _ = writeln!(
                        s,
                        "{pad}  (S) {} {} - {}",
                        st.value, st.name, st.description
                    );
                }
            }
            Element::Nested(sub) => {
                let _ = writeln!(s, "{pad}'{}' Pipeline", sub.anchor);
                stats_into(sub, depth + 1, s);
            }
        }
    }
}

fn dump(
    cx: &Context,
    op: Op,
    when: &str,
    info: &PassInfo,
    opts: PrintOptions,
    log: &mut dyn std::io::Write,
) {
    let text = op_to_string(cx, op, opts);
    let _ = write!(
        log,
        "// -----// IR Dump {when} {} ({}) //----- //\n{text}\n",
        info.name, info.argument
    );
}

fn run_pm(
    pm: &mut OpPassManager,
    cx: &mut Context,
    op: Op,
    printing: IrPrinting,
    verify_each: bool,
    log: &mut dyn std::io::Write,
) -> Result<(), Diagnostic> {
    for e in &mut pm.elements {
        match e {
            Element::Pass {
                info, pass, time, ..
            } => {
                if printing.before_all {
                    dump(cx, op, "Before", info, printing.print, log);
                }
                let before = printing
                    .after_change
                    .then(|| op_to_string(cx, op, printing.print));
                let _span = tracing::debug_span!("pass", pass = info.argument).entered();
                let start = Instant::now();
                let mut result = pass.run(cx, op);
                if result.is_ok() && verify_each {
                    result = crate::verify::verify(cx, op);
                }
                *time += start.elapsed();
                if let Err(d) = result {
                    if printing.after_failure {
                        dump(cx, op, "After Failed", info, printing.print, log);
                    }
                    return Err(d);
                }
                let changed = before.is_some_and(|b| b != op_to_string(cx, op, printing.print));
                if printing.after_all || (printing.after_change && changed) {
                    dump(cx, op, "After", info, printing.print, log);
                }
            }
            Element::Nested(sub) => {
                let start = Instant::now();
                for child in cx.nested_ops(op) {
                    if !cx.is_erased(child) && sub.matches(cx.name_str(child)) {
                        run_pm(sub, cx, child, printing, verify_each, log)?;
                    }
                }
                sub.time += start.elapsed();
            }
        }
    }
    Ok(())
}

fn build(
    registry: &Registry,
    pm: &mut OpPassManager,
    e: ParsedElement,
    depth: usize,
) -> Result<(), String> {
    if depth > 32 {
        return Err("pipeline nesting is too deep (recursive named pipeline?)".into());
    }
    if let Some(nested) = e.nested {
        let mut sub = OpPassManager::new(&e.name);
        for inner in nested {
            build(registry, &mut sub, inner, depth + 1)?;
        }
        pm.elements.push(Element::Nested(sub));
        return Ok(());
    }
    if let Some(info) = registry.pass(&e.name) {
        if let Some(anchor) = info.anchor {
            if pm.anchor != anchor && pm.anchor != "any" {
                return Err(format!(
                    "can't run '{}' pass on '{}' ops: it runs on '{anchor}' ops; nest it, e.g. {}({anchor}({}))",
                    e.name, pm.anchor, pm.anchor, e.name
                ));
            }
        }
        let mut options = PassOptions::default();
        for (k, v) in e.options {
            if !info.options.iter().any(|o| o.name == k) {
                let known: Vec<_> = info.options.iter().map(|o| o.name).collect();
                return Err(format!(
                    "no such option '{k}' for pass '{}' (options: {})",
                    e.name,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            options.values.insert(k, v);
        }
        let pass = (info.create)(&options).map_err(|m| format!("pass '{}': {m}", e.name))?;
        pm.elements.push(Element::Pass {
            info: info.clone(),
            options,
            pass,
            time: Duration::ZERO,
        });
        return Ok(());
    }
    if let Some(p) = registry.pipeline(&e.name) {
        if !e.options.is_empty() {
            return Err(format!("pipeline '{}' takes no options", e.name));
        }
        let elems = PipelineParser::new(p.pipeline).parse_list()?;
        for inner in elems {
            if inner.nested.is_some() && inner.name == pm.anchor {
                for x in inner.nested.unwrap_or_default() {
                    build(registry, pm, x, depth + 1)?;
                }
            } else {
                build(registry, pm, inner, depth + 1)?;
            }
        }
        return Ok(());
    }
    Err(format!(
        "'{}' does not refer to a registered pass or pass pipeline",
        e.name
    ))
}

#[derive(Debug)]
struct ParsedElement {
    name: String,
    options: Vec<(String, String)>,
    nested: Option<Vec<ParsedElement>>,
}

struct PipelineParser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl<'a> PipelineParser<'a> {
    fn new(text: &'a str) -> Self {
        PipelineParser {
            s: text.as_bytes(),
            text,
            i: 0,
        }
    }
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn err(&self, msg: &str) -> String {
        format!(
            "invalid pass pipeline '{}' at column {}: {msg}",
            self.text,
            self.i + 1
        )
    }
    fn parse_list(&mut self) -> Result<Vec<ParsedElement>, String> {
        let v = self.list()?;
        self.ws();
        if self.i != self.s.len() {
            return Err(self.err("unexpected trailing text"));
        }
        Ok(v)
    }
    fn list(&mut self) -> Result<Vec<ParsedElement>, String> {
        let mut out = Vec::new();
        loop {
            self.ws();
            if self.i >= self.s.len() || self.s[self.i] == b')' {
                if out.is_empty() && self.i < self.s.len() {
                    return Ok(out);
                }
                if out.is_empty() {
                    return Err(self.err("expected a pass name"));
                }
                return Err(self.err("expected a pass name after ','"));
            }
            out.push(self.element()?);
            self.ws();
            if self.i < self.s.len() && self.s[self.i] == b',' {
                self.i += 1;
                continue;
            }
            return Ok(out);
        }
    }
    fn element(&mut self) -> Result<ParsedElement, String> {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"-_.".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        if start == self.i {
            return Err(self.err("expected a pass name"));
        }
        let name = self.text[start..self.i].to_string();
        self.ws();
        let mut options = Vec::new();
        if self.i < self.s.len() && self.s[self.i] == b'{' {
            self.i += 1;
            options = self.options()?;
        }
        self.ws();
        let mut nested = None;
        if self.i < self.s.len() && self.s[self.i] == b'(' {
            self.i += 1;
            let inner = self.list()?;
            self.ws();
            if self.i >= self.s.len() || self.s[self.i] != b')' {
                return Err(self.err("expected ')'"));
            }
            self.i += 1;
            nested = Some(inner);
        }
        Ok(ParsedElement {
            name,
            options,
            nested,
        })
    }
    fn options(&mut self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        loop {
            self.ws();
            if self.i >= self.s.len() {
                return Err(self.err("unterminated options: expected '}'"));
            }
            if self.s[self.i] == b'}' {
                self.i += 1;
                return Ok(out);
            }
            let start = self.i;
            while self.i < self.s.len() && !b"= }".contains(&self.s[self.i]) {
                self.i += 1;
            }
            let key = self.text[start..self.i].to_string();
            if key.is_empty() {
                return Err(self.err("expected an option name"));
            }
            let mut value = String::new();
            if self.i < self.s.len() && self.s[self.i] == b'=' {
                self.i += 1;
                value = self.option_value()?;
            }
            out.push((key, value));
        }
    }
    fn option_value(&mut self) -> Result<String, String> {
        let start = self.i;
        let mut depth = 0i32;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'{' | b'(' | b'[' => depth += 1,
                b'}' | b')' | b']' if depth == 0 => break,
                b'}' | b')' | b']' => depth -= 1,
                b' ' if depth == 0 => break,
                b'"' | b'\'' => {
                    let q = self.s[self.i];
                    self.i += 1;
                    while self.i < self.s.len() && self.s[self.i] != q {
                        self.i += 1;
                    }
                    if self.i >= self.s.len() {
                        return Err(self.err("unterminated quoted option value"));
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
        let v = &self.text[start..self.i];
        let v = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
            .unwrap_or(v);
        Ok(v.to_string())
    }
}

/// MLIR-style `--mlir-timing` report.
pub fn timing_report(rows: &[(usize, String, Duration)], total: Duration) -> String {
    let mut s = String::new();
    let t = total.as_secs_f64().max(1e-9);
    s.push_str("===-------------------------------------------------------------------------===\n");
    s.push_str("                         ... Execution time report ...\n");
    s.push_str("===-------------------------------------------------------------------------===\n");
    let _ = writeln!(
        s,
        "  Total Execution Time: {:.4} seconds\n",
        total.as_secs_f64()
    );
    s.push_str("  ----Wall Time----  ----Name----\n");
    for (depth, name, d) in rows {
        let secs = d.as_secs_f64();
        let _ = writeln!(
            s,
            "  {:8.4} ({:5.1}%)  {}{}",
            secs,
            100.0 * secs / t,
            "  ".repeat(*depth),
            name
        );
    }
    let _ = writeln!(s, "  {:8.4} (100.0%)  Total", total.as_secs_f64());
    s
}
