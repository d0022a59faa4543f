//! The `--where` language (formats/exp.md, "Queries"): comparisons of a run's attributes
//! joined by `and`, `or`, `not` and parentheses, e.g. `procs >= 8 and version = "2"`.

use rusqlite::types::Value;

/// Columns every run has, besides its attributes.
const COLUMNS: [&str; 5] = ["id", "events", "elapsed_ns", "trace", "added"];

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Num(f64),
    Text(String),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Like,
}

impl Op {
    fn sql(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "<>",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Like => "LIKE",
        }
    }
}

/// A parsed query.
#[derive(Clone, Debug, PartialEq)]
pub enum Query {
    Cmp(String, Op, Literal),
    And(Box<Query>, Box<Query>),
    Or(Box<Query>, Box<Query>),
    Not(Box<Query>),
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    Lit(Literal),
    Op(Op),
    Open,
    Close,
}

fn tokens(text: &str) -> Result<Vec<(usize, Token)>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let tok = match c {
            b'(' => {
                i += 1;
                Token::Open
            }
            b')' => {
                i += 1;
                Token::Close
            }
            b'"' | b'\'' => {
                let end = text[i + 1..]
                    .find(c as char)
                    .ok_or_else(|| format!("column {}: unterminated string", i + 1))?;
                let s = text[i + 1..i + 1 + end].to_owned();
                i += end + 2;
                Token::Lit(Literal::Text(s))
            }
            b'=' | b'!' | b'<' | b'>' => {
                let two = b.get(i + 1) == Some(&b'=') || (c == b'<' && b.get(i + 1) == Some(&b'>'));
                let op = match (c, two) {
                    (b'=', true) | (b'=', false) => Op::Eq,
                    (b'!', true) => Op::Ne,
                    (b'<', true) if b[i + 1] == b'>' => Op::Ne,
                    (b'<', true) => Op::Le,
                    (b'<', false) => Op::Lt,
                    (b'>', true) => Op::Ge,
                    (b'>', false) => Op::Gt,
                    _ => return Err(format!("column {}: expected `!=`", i + 1)),
                };
                i += 1 + two as usize;
                Token::Op(op)
            }
            c if c.is_ascii_digit() || c == b'-' || c == b'.' || c == b'+' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b"-+._".contains(&b[i])) {
                    i += 1;
                }
                let word = &text[start..i];
                match word.parse::<f64>() {
                    Ok(x) if x.is_finite() => Token::Lit(Literal::Num(x)),
                    _ => return Err(format!("column {}: `{word}` is not a number", start + 1)),
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b"_.-".contains(&b[i])) {
                    i += 1;
                }
                let word = &text[start..i];
                if word.eq_ignore_ascii_case("like") {
                    Token::Op(Op::Like)
                } else {
                    Token::Ident(word.to_owned())
                }
            }
            _ => {
                return Err(format!(
                    "column {}: unexpected `{}`",
                    i + 1,
                    &text[i..].chars().next().unwrap_or(' ')
                ))
            }
        };
        out.push((start, tok));
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Token)>,
    at: usize,
    len: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at).map(|t| &t.1)
    }

    fn column(&self) -> usize {
        self.toks.get(self.at).map_or(self.len, |t| t.0) + 1
    }

    fn keyword(&mut self, k: &str) -> bool {
        if matches!(self.peek(), Some(Token::Ident(w)) if w.eq_ignore_ascii_case(k)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Query, String> {
        let mut q = self.and()?;
        while self.keyword("or") {
            q = Query::Or(Box::new(q), Box::new(self.and()?));
        }
        Ok(q)
    }

    fn and(&mut self) -> Result<Query, String> {
        let mut q = self.not()?;
        while self.keyword("and") {
            q = Query::And(Box::new(q), Box::new(self.not()?));
        }
        Ok(q)
    }

    fn not(&mut self) -> Result<Query, String> {
        if self.keyword("not") {
            return Ok(Query::Not(Box::new(self.not()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Query, String> {
        let col = self.column();
        match self.toks.get(self.at).map(|t| t.1.clone()) {
            Some(Token::Open) => {
                self.at += 1;
                let q = self.or()?;
                if self.peek() != Some(&Token::Close) {
                    return Err(format!("column {}: expected `)`", self.column()));
                }
                self.at += 1;
                Ok(q)
            }
            Some(Token::Ident(key)) => {
                self.at += 1;
                let col = self.column();
                let Some(Token::Op(op)) = self.peek().cloned() else {
                    return Err(format!(
                        "column {col}: expected a comparison (= != < <= > >= like) after `{key}`"
                    ));
                };
                self.at += 1;
                let col = self.column();
                let lit = match self.toks.get(self.at).map(|t| t.1.clone()) {
                    Some(Token::Lit(l)) => l,
                    // A bare word is a string: `machine = node1`.
                    Some(Token::Ident(w))
                        if !["and", "or", "not"].contains(&w.to_ascii_lowercase().as_str()) =>
                    {
                        Literal::Text(w)
                    }
                    _ => {
                        return Err(format!(
                            "column {col}: expected a number or a string after `{}`",
                            op.sql()
                        ))
                    }
                };
                self.at += 1;
                if op == Op::Like && matches!(lit, Literal::Num(_)) {
                    return Err(format!("column {col}: `like` takes a string pattern"));
                }
                Ok(Query::Cmp(key, op, lit))
            }
            _ => Err(format!("column {col}: expected an attribute name, `not` or `(`")),
        }
    }
}

impl Query {
    /// Parses `text`; the error names the column and what was expected.
    pub fn parse(text: &str) -> Result<Query, String> {
        let toks = tokens(text)?;
        if toks.is_empty() {
            return Err("empty query".into());
        }
        let mut p = Parser { toks, at: 0, len: text.len() };
        let q = p.or()?;
        if p.at < p.toks.len() {
            return Err(format!("column {}: expected `and`, `or` or the end", p.column()));
        }
        Ok(q)
    }

    /// A condition on the table `runs` and its values, in order.
    pub fn to_sql(&self) -> (String, Vec<Value>) {
        let mut values = Vec::new();
        let text = self.sql_into(&mut values);
        (text, values)
    }

    fn sql_into(&self, values: &mut Vec<Value>) -> String {
        match self {
            Query::And(a, b) => format!("({} AND {})", a.sql_into(values), b.sql_into(values)),
            Query::Or(a, b) => format!("({} OR {})", a.sql_into(values), b.sql_into(values)),
            Query::Not(a) => format!("(NOT {})", a.sql_into(values)),
            Query::Cmp(key, op, lit) => {
                let value = match lit {
                    Literal::Num(x) => Value::Real(*x),
                    Literal::Text(s) => Value::Text(s.clone()),
                };
                if let Some(c) = COLUMNS.iter().find(|c| **c == key.as_str()) {
                    values.push(value);
                    return format!("(runs.{c} {} ?)", op.sql());
                }
                values.push(Value::Text(key.clone()));
                values.push(value);
                // A number compares with numbers (`procs >= 8`), a string with the text.
                let column = if matches!(lit, Literal::Num(_)) { "a.num" } else { "a.value" };
                format!(
                    "EXISTS (SELECT 1 FROM attrs a WHERE a.run = runs.id AND a.key = ? AND {column} {} ?)",
                    op.sql()
                )
            }
        }
    }
}

/// Runs named on a command line: a run's id, or a query selecting a set.
#[derive(Clone, Debug, PartialEq)]
pub enum Runs {
    Id(i64),
    Where(Query),
}

impl Runs {
    pub fn parse(text: &str) -> Result<Runs, String> {
        match text.trim().parse::<i64>() {
            Ok(id) => Ok(Runs::Id(id)),
            Err(_) => Query::parse(text).map(Runs::Where),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_and_precedence() {
        let q = Query::parse(r#"procs >= 8 and version = "2" or not machine = node1"#).unwrap();
        let (text, values) = q.to_sql();
        assert!(text.starts_with("((EXISTS"), "{text}");
        assert!(text.contains("a.num >= ?") && text.contains("a.value = ?") && text.contains("(NOT "));
        assert_eq!(
            values,
            vec![
                Value::Text("procs".into()),
                Value::Real(8.0),
                Value::Text("version".into()),
                Value::Text("2".into()),
                Value::Text("machine".into()),
                Value::Text("node1".into())
            ]
        );
        let (text, _) = Query::parse("id <= 3 and (a != 1 or b <> 'x')").unwrap().to_sql();
        assert!(text.contains("runs.id <= ?") && text.matches("<>").count() == 2, "{text}");
    }

    #[test]
    fn errors_name_the_column() {
        for (q, want) in [
            ("procs >=", "column 9: expected a number or a string"),
            ("procs 8", "column 7: expected a comparison"),
            ("(procs = 1", "column 11: expected `)`"),
            ("procs = 1 version = 2", "column 11: expected `and`"),
            ("v = \"2", "column 5: unterminated string"),
            ("v = 1e999", "not a number"),
            ("", "empty query"),
            ("x like 3", "`like` takes a string"),
            ("x = 1 #", "unexpected `#`"),
        ] {
            let e = Query::parse(q).unwrap_err();
            assert!(e.contains(want), "{q}: {e}");
        }
    }

    #[test]
    fn a_run_is_an_id_or_a_query() {
        assert_eq!(Runs::parse("12").unwrap(), Runs::Id(12));
        assert!(matches!(Runs::parse("procs = 4").unwrap(), Runs::Where(_)));
        assert!(Runs::parse("procs =").is_err());
    }
}
