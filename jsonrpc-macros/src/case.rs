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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_from_variant_names() {
        assert_eq!(sentence("DivisionByZero"), "Division by zero");
        assert_eq!(sentence("Overflow"), "Overflow");
        assert_eq!(sentence("Not_Found"), "Not found");
    }

    #[test]
    fn rename_rules_are_serde_names() {
        assert!(RENAME_RULES.contains(&"camelCase"));
        assert!(!RENAME_RULES.contains(&"camelcase"));
    }
}
