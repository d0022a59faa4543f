//! Lexing: a line into tokens.

use super::write::{needs_quotes, push_text};

/// One whitespace-separated item of a line: `value`, `"value"`, `key=value` or `key="value"`.
#[derive(Debug)]
pub(super) struct Tok {
    pub(super) key: Option<String>,
    pub(super) value: String,
    pub(super) quoted: bool,
}

impl Tok {
    /// How the token looked, for messages.
    pub(super) fn show(&self) -> String {
        let mut s = String::new();
        if let Some(k) = &self.key {
            s.push_str(k);
            s.push('=');
        }
        if self.quoted {
            push_quoted_always(&mut s, &self.value);
        } else {
            s.push_str(&self.value);
        }
        short(&s)
    }
}

/// `s`, cut to 60 characters: messages stay short whatever the input.
pub(super) fn short(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_owned(),
    }
}

fn push_quoted_always(b: &mut String, s: &str) {
    if needs_quotes(s) {
        push_text(b, s);
    } else {
        b.push('"');
        b.push_str(s);
        b.push('"');
    }
}

pub(super) fn quote(s: &str) -> String {
    let mut b = String::new();
    push_quoted_always(&mut b, s);
    b
}

fn is_bare_char(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, '"' | '=' | '#'))
}

/// Splits a line into tokens; a `#` at the start of a token starts a comment.
pub(super) fn tokenize(line: &str) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let mut it = line.chars().peekable();
    loop {
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        let Some(&c) = it.peek() else { break };
        if c == '#' {
            break;
        }
        let tok = if c == '"' {
            it.next();
            Tok { key: None, value: lex_quoted(&mut it)?, quoted: true }
        } else if c == '=' {
            return Err("'=' without a key before it".into());
        } else {
            let word = lex_bare(&mut it);
            if it.peek() == Some(&'=') {
                it.next();
                if it.peek() == Some(&'"') {
                    it.next();
                    Tok { key: Some(word), value: lex_quoted(&mut it)?, quoted: true }
                } else {
                    let value = lex_bare(&mut it);
                    Tok { key: Some(word), value, quoted: false }
                }
            } else {
                Tok { key: None, value: word, quoted: false }
            }
        };
        match it.peek() {
            None => {}
            Some(c) if c.is_whitespace() => {}
            Some(&c) => {
                let what = match c {
                    '#' => "a comment needs whitespace before its '#'".to_string(),
                    _ => format!("unexpected {c:?}"),
                };
                return Err(format!(
                    "{what} after {} (quote text containing whitespace, '\"', '=' or '#')",
                    tok.show()
                ));
            }
        }
        toks.push(tok);
    }
    Ok(toks)
}

fn lex_bare(it: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut s = String::new();
    while let Some(&c) = it.peek() {
        if !is_bare_char(c) {
            break;
        }
        s.push(c);
        it.next();
    }
    s
}

/// The rest of a quoted string whose opening quote was consumed.
fn lex_quoted(it: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<String, String> {
    let mut s = String::new();
    loop {
        match it.next() {
            None => return Err("unterminated quoted string (expected a closing '\"')".into()),
            Some('"') => return Ok(s),
            Some('\\') => match it.next() {
                Some('"') => s.push('"'),
                Some('\\') => s.push('\\'),
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                Some('r') => s.push('\r'),
                Some('u') => {
                    if it.next() != Some('{') {
                        return Err("bad escape: expected \\u{XXXX}".into());
                    }
                    let mut code: u32 = 0;
                    let mut digits = 0;
                    loop {
                        match it.next() {
                            Some('}') if digits > 0 => break,
                            Some(h) if h.is_ascii_hexdigit() && digits < 6 => {
                                code = code * 16 + h.to_digit(16).unwrap_or(0);
                                digits += 1;
                            }
                            _ => return Err("bad escape: expected \\u{XXXX} with 1 to 6 hex digits".into()),
                        }
                    }
                    match char::from_u32(code) {
                        Some(ch) => s.push(ch),
                        None => {
                            return Err(format!("bad escape: \\u{{{code:x}}} is not a Unicode scalar value"))
                        }
                    }
                }
                Some(other) => {
                    return Err(format!(
                        "unknown escape \\{other} (expected \\\", \\\\, \\n, \\t, \\r or \\u{{XXXX}})"
                    ))
                }
                None => return Err("unterminated quoted string (expected a closing '\"')".into()),
            },
            Some(c) => s.push(c),
        }
    }
}
