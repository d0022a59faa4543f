//! CSV fields as every command writes them (RFC 4180).

/// A field as it goes into a CSV line: quoted when it holds a comma, a quote, CR or LF,
/// inner quotes doubled; otherwise as it is.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// A number that may be absent, as a CSV field: empty when it is.
pub fn optional(v: Option<i64>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(field("plain name"), "plain name");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field("cr\r"), "\"cr\r\"");
        assert_eq!(field(""), "");
    }
}
