//! `--verify-diagnostics`: expectations written in the source as
//! `// expected-error@+1 {{message}}` (also `warning`, `note`, `remark`,
//! `@-N`, `@above`, `@below`), matched against the diagnostics produced.

use ipu_ir::diag::{Diagnostic, Severity, SourceMap};
use ipu_ir::Context;

#[derive(Debug, Clone)]
pub struct Expectation {
    pub severity: Severity,
    /// 1-based line the diagnostic must be on.
    pub line: u32,
    pub message: String,
    /// Where the expectation itself is written (line, column).
    pub at: (u32, u32),
    pub matched: bool,
}

/// Finds every expectation in `text`.
pub fn parse_expectations(text: &str) -> Result<Vec<Expectation>, (u32, u32, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        let mut rest = line;
        let mut offset = 0usize;
        while let Some(pos) = rest.find("expected-") {
            let col = (offset + pos) as u32 + 1;
            let after = &rest[pos + "expected-".len()..];
            let (severity, after) = if let Some(a) = after.strip_prefix("error") {
                (Severity::Error, a)
            } else if let Some(a) = after.strip_prefix("warning") {
                (Severity::Warning, a)
            } else if let Some(a) = after.strip_prefix("note") {
                (Severity::Note, a)
            } else if let Some(a) = after.strip_prefix("remark") {
                (Severity::Remark, a)
            } else {
                offset += pos + 9;
                rest = &rest[pos + 9..];
                continue;
            };
            let (target, after) = if let Some(a) = after.strip_prefix('@') {
                let end = a
                    .find(|c: char| c.is_whitespace() || c == '{')
                    .unwrap_or(a.len());
                let spec = &a[..end];
                let target = match spec {
                    "above" => line_no.checked_sub(1),
                    "below" => Some(line_no + 1),
                    _ => spec
                        .parse::<i64>()
                        .ok()
                        .and_then(|d| u32::try_from(line_no as i64 + d).ok()),
                };
                let Some(t) = target.filter(|&t| t > 0) else {
                    return Err((
                        line_no,
                        col,
                        format!("invalid line offset '@{spec}' in expected diagnostic"),
                    ));
                };
                (t, &a[end..])
            } else {
                (line_no, after)
            };
            let after = after.trim_start();
            let Some(body) = after.strip_prefix("{{") else {
                return Err((
                    line_no,
                    col,
                    "expected '{{' after expected diagnostic kind".to_string(),
                ));
            };
            let Some(end) = body.find("}}") else {
                return Err((
                    line_no,
                    col,
                    "expected '}}' to close the expected diagnostic message".to_string(),
                ));
            };
            out.push(Expectation {
                severity,
                line: target,
                message: body[..end].to_string(),
                at: (line_no, col),
                matched: false,
            });
            let consumed = rest.len() - body[end + 2..].len();
            offset += consumed;
            rest = &body[end + 2..];
        }
    }
    Ok(out)
}

/// Matches `diags` (notes included) against `expected`. Returns the failures
/// as diagnostics to report: unexpected diagnostics and unmet expectations.
pub fn check(
    cx: &mut Context,
    sources: &SourceMap,
    filename: &str,
    diags: &[Diagnostic],
    expected: &mut [Expectation],
) -> Vec<Diagnostic> {
    let mut failures = Vec::new();
    let flat: Vec<&Diagnostic> = diags
        .iter()
        .flat_map(|d| std::iter::once(d).chain(d.notes.iter()))
        .collect();
    for d in flat {
        let line = sources.resolve(cx, d.loc).map(|p| p.line);
        let hit = line.and_then(|l| {
            expected.iter_mut().find(|e| {
                !e.matched
                    && e.severity == d.severity
                    && e.line == l
                    && d.message.contains(&e.message)
            })
        });
        match hit {
            Some(e) => e.matched = true,
            None => failures.push(Diagnostic::error(
                d.loc,
                format!("unexpected {}: {}", d.severity, d.message),
            )),
        }
    }
    for e in expected.iter().filter(|e| !e.matched) {
        let loc = cx.file_loc(filename, e.at.0, e.at.1);
        failures.push(Diagnostic::error(
            loc,
            format!("expected {} \"{}\" was not produced", e.severity, e.message),
        ));
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_resolve_to_lines() {
        let text = "x\n// expected-error@+1 {{a}}\ny // expected-warning@above {{b}} expected-note@-1 {{c}}\n// expected-remark@below {{d}}\n";
        let e = parse_expectations(text).unwrap();
        let got: Vec<_> = e
            .iter()
            .map(|e| (e.severity, e.line, e.message.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Severity::Error, 3, "a"),
                (Severity::Warning, 2, "b"),
                (Severity::Note, 2, "c"),
                (Severity::Remark, 5, "d"),
            ]
        );
    }

    #[test]
    fn malformed_expectations_are_reported() {
        assert!(parse_expectations("// expected-error@+x {{a}}").is_err());
        assert!(parse_expectations("// expected-error {{a").is_err());
        assert!(parse_expectations("// expected-error a").is_err());
    }
}
