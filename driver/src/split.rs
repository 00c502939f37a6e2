//! `--split-input-file`: cut a buffer at `// -----` lines. Each chunk keeps
//! its original line numbers (earlier lines become empty), so diagnostics
//! and expectations point at the right line of the file.

pub const MARKER: &str = "// -----";

/// The chunks of `text`, each padded to its original line numbers.
pub fn split(text: &str) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    for (line_no, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_end() == MARKER {
            chunks.push(std::mem::take(&mut current));
            current = "\n".repeat(line_no + 1);
        } else {
            current.push_str(line);
        }
    }
    chunks.push(current);
    chunks
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunks_keep_line_numbers() {
        let c = super::split("a\n// -----\nb\nc\n// -----\n");
        assert_eq!(
            c,
            vec!["a\n".to_string(), "\n\nb\nc\n".into(), "\n\n\n\n\n".into()]
        );
    }
}
