//! The names a model gives its results, checked before any of them becomes
//! a file name (`ipu-run --output-dir DIR` writes `DIR/<name>.npy`). A name
//! comes from the model (an `ipu.name`, an ONNX graph output's name), so it
//! is untrusted: it must not climb out of `DIR` (`../x`), be a path of its
//! own (`/tmp/x`), be empty (a hidden `DIR/.npy`), or name the same file as
//! another result, also on a filesystem that ignores case.

/// Why a result's name cannot be a file name, or `None` when it can.
pub fn file_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("an empty name (it would write the hidden file '.npy')".into());
    }
    if name == "." || name == ".." {
        return Some(format!("the name '{name}' names a folder, not a file"));
    }
    if let Some(c) = name.chars().find(|&c| matches!(c, '/' | '\\' | '\0')) {
        let what = if c == '\0' {
            "a NUL byte"
        } else {
            "a path separator"
        };
        return Some(format!(
            "the name '{}' contains {what}, so its file would not be inside the output folder",
            name.escape_debug()
        ));
    }
    None
}

/// A problem with one of `names`: its index and the message, naming the
/// other result for a duplicate. `files`: the names become file names, so
/// the file-name rules apply and names equal but for case collide.
pub fn check_result_names(names: &[String], files: bool) -> Option<(usize, String)> {
    for (i, n) in names.iter().enumerate() {
        if files {
            if let Some(p) = file_name_problem(n) {
                return Some((i, format!("result #{i} cannot be written as a file: {p} (--output-names index writes DIR/result{i}.npy instead)")));
            }
        }
        for (j, other) in names[..i].iter().enumerate() {
            if other == n {
                return Some((
                    i,
                    format!("result #{i} has the same name '{n}' as result #{j}: one would replace the other"),
                ));
            }
            if files && other.to_lowercase() == n.to_lowercase() {
                return Some((
                    i,
                    format!("result #{i} named '{n}' differs only by case from result #{j} '{other}': on a case-insensitive filesystem both are one file"),
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hostile_names_are_refused() {
        for bad in [
            "", ".", "..", "../../x", "/tmp/abs", "a\\b", "a\0b", "sub/y",
        ] {
            assert!(file_name_problem(bad).is_some(), "{bad:?}");
        }
        for good in ["y", "output:0", ".hidden_but_named", "fc.out", "ü"] {
            assert!(file_name_problem(good).is_none(), "{good:?}");
        }
    }

    #[test]
    fn duplicates_and_case_collisions_name_both_results() {
        let (i, m) = check_result_names(&names(&["y", "z", "y"]), false).unwrap();
        assert_eq!(i, 2);
        assert!(m.contains("result #0"), "{m}");
        assert!(check_result_names(&names(&["Y", "y"]), false).is_none());
        let (i, m) = check_result_names(&names(&["Y", "y"]), true).unwrap();
        assert_eq!(i, 1);
        assert!(m.contains("case"), "{m}");
        assert!(check_result_names(&names(&["a/b"]), false).is_none());
    }
}
