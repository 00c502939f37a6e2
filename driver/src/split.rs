//! `--split-input-file`: cut a buffer at `// -----` lines. Each chunk is a
//! slice of the buffer with the number of lines before it, so diagnostics
//! and expectations point at the right line of the file without copying
//! (linear in the size of the buffer, however many chunks it has).

pub const MARKER: &str = "// -----";

/// One chunk: its text and the lines of the buffer before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    pub first_line: u32,
    pub text: &'a str,
}

/// The chunks of `text`, in order.
pub fn split(text: &str) -> Vec<Chunk<'_>> {
    let mut chunks = Vec::new();
    let mut start = 0usize;
    let mut first_line = 0u32;
    let mut pos = 0usize;
    for (line_no, line) in text.split_inclusive('\n').enumerate() {
        let end = pos + line.len();
        if line.trim_end() == MARKER {
            chunks.push(Chunk {
                first_line,
                text: &text[start..pos],
            });
            start = end;
            first_line = u32::try_from(line_no + 1).unwrap_or(u32::MAX);
        }
        pos = end;
    }
    chunks.push(Chunk {
        first_line,
        text: &text[start..],
    });
    chunks
}

#[cfg(test)]
mod tests {
    use super::{split, Chunk};

    #[test]
    fn chunks_keep_line_numbers() {
        let c = split("a\n// -----\nb\nc\n// -----\n");
        assert_eq!(
            c,
            vec![
                Chunk {
                    first_line: 0,
                    text: "a\n"
                },
                Chunk {
                    first_line: 2,
                    text: "b\nc\n"
                },
                Chunk {
                    first_line: 5,
                    text: ""
                },
            ]
        );
    }

    #[test]
    fn many_empty_chunks_split_with_their_line_numbers() {
        let n = 24_000;
        let text = format!("{}\n", super::MARKER).repeat(n);
        let c = split(&text);
        assert_eq!(c.len(), n + 1);
        for (i, chunk) in c.iter().enumerate() {
            assert_eq!(chunk.first_line as usize, i);
            assert_eq!(chunk.text, "");
        }
    }
}
