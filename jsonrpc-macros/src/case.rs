//! Case conversions for `rename_all` and default error messages.

/// The `rename_all` styles, as serde names them.
pub(crate) const RENAME_RULES: [&str; 8] = [
    "lowercase",
    "UPPERCASE",
    "PascalCase",
    "camelCase",
    "snake_case",
    "SCREAMING_SNAKE_CASE",
    "kebab-case",
    "SCREAMING-KEBAB-CASE",
];

/// A `snake_case` field name under a `rename_all` rule, as serde renames
/// it (so that names can be compared before serde sees them).
pub(crate) fn rename_field(field: &str, rule: Option<&str>) -> String {
    let pascal = || {
        let mut out = String::with_capacity(field.len());
        let mut capitalize = true;
        for c in field.chars() {
            if c == '_' {
                capitalize = true;
            } else if capitalize {
                out.push(c.to_ascii_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        }
        out
    };
    match rule {
        None | Some("lowercase") | Some("snake_case") => field.to_owned(),
        Some("UPPERCASE") | Some("SCREAMING_SNAKE_CASE") => field.to_ascii_uppercase(),
        Some("PascalCase") => pascal(),
        Some("camelCase") => {
            let pascal = pascal();
            let mut chars = pascal.chars();
            match chars.next() {
                Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                None => pascal,
            }
        }
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => field.to_ascii_uppercase().replace('_', "-"),
        Some(_) => field.to_owned(),
    }
}

/// Splits a `PascalCase` name into a sentence: `DivisionByZero` becomes
/// `Division by zero`.
pub(crate) fn sentence(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c == '_' {
            out.push(' ');
        } else if c.is_uppercase() && i > 0 {
            if !out.ends_with(' ') {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The backticked name in `expected` closest to `name`, when it is a likely
/// misspelling (at most two edits away).
pub(crate) fn closest<'a>(name: &str, expected: &'a str) -> Option<&'a str> {
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|candidate| {
            candidate
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance between two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn close_names_are_suggested_far_ones_are_not() {
        let expected = "one of `request`, `notification`, `progress`, `partial`";
        assert_eq!(closest("reqest", expected), Some("request"));
        assert_eq!(closest("notifcation", expected), Some("notification"));
        assert_eq!(closest("zzz", expected), None);
    }

    use super::*;

    #[test]
    fn sentences_from_variant_names() {
        assert_eq!(sentence("DivisionByZero"), "Division by zero");
        assert_eq!(sentence("Overflow"), "Overflow");
        assert_eq!(sentence("Not_Found"), "Not found");
    }

    #[test]
    fn fields_are_renamed_as_serde_renames_them() {
        assert_eq!(
            rename_field("scale_factor", Some("camelCase")),
            "scaleFactor"
        );
        assert_eq!(
            rename_field("scale_factor", Some("PascalCase")),
            "ScaleFactor"
        );
        assert_eq!(
            rename_field("scale_factor", Some("kebab-case")),
            "scale-factor"
        );
        assert_eq!(
            rename_field("scale_factor", Some("SCREAMING-KEBAB-CASE")),
            "SCALE-FACTOR"
        );
        assert_eq!(
            rename_field("scale_factor", Some("UPPERCASE")),
            "SCALE_FACTOR"
        );
        assert_eq!(rename_field("scale_factor", None), "scale_factor");
    }

    #[test]
    fn rename_rules_are_serde_names() {
        assert!(RENAME_RULES.contains(&"camelCase"));
        assert!(!RENAME_RULES.contains(&"camelcase"));
    }
}
