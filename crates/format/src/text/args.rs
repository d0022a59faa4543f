//! The arguments of a line: positional tokens and `key=value` items.

use super::lex::{quote, short, Tok};
use super::num::{parse_u32, NumErr};
use spoor_model::{CollOp, StrId};

/// A name: text to intern, or `@ID` naming a string id directly.
pub(super) enum NameRef {
    Text(String),
    Id(StrId),
}

pub(super) fn name_ref(what: &str, role: &str, tok: &Tok) -> Result<NameRef, String> {
    if tok.quoted {
        return Ok(NameRef::Text(tok.value.clone()));
    }
    if let Some(d) = tok.value.strip_prefix('@') {
        return match parse_u32(d) {
            Ok(id) => Ok(NameRef::Id(id)),
            Err(_) => Err(format!(
                "{what}: expected {role} (a name or @ID), found {} (quote names that start with '@')",
                tok.show()
            )),
        };
    }
    if tok.value.is_empty() {
        return Err(format!("{what}: expected {role}, found an empty value (write \"\" for an empty name)"));
    }
    Ok(NameRef::Text(tok.value.clone()))
}

/// The `key=value` arguments of one line, each to be taken once.
pub(super) struct Args<'a> {
    what: &'a str,
    items: Vec<(String, String, bool)>,
    used: Vec<bool>,
    /// The keys asked for so far, to list them when an unknown key is found.
    asked: Vec<&'static str>,
}

impl<'a> Args<'a> {
    /// Splits `toks` into leading positional tokens and `key=value` items.
    pub(super) fn new(what: &'a str, toks: Vec<Tok>) -> Result<(Vec<Tok>, Args<'a>), String> {
        let mut pos = Vec::new();
        let mut items: Vec<(String, String, bool)> = Vec::new();
        for t in toks {
            match t.key {
                None => {
                    if !items.is_empty() {
                        return Err(format!(
                            "{what}: unexpected {} after key=value arguments",
                            Tok { key: None, ..t }.show()
                        ));
                    }
                    pos.push(t);
                }
                Some(k) => {
                    if items.iter().any(|(ik, _, _)| *ik == k) {
                        return Err(format!("{what}: duplicate key {k}="));
                    }
                    items.push((k, t.value, t.quoted));
                }
            }
        }
        let used = vec![false; items.len()];
        Ok((pos, Args { what, items, used, asked: Vec::new() }))
    }

    fn take(&mut self, key: &'static str) -> Option<(String, bool)> {
        self.asked.push(key);
        let i = self.items.iter().position(|(k, _, _)| k == key)?;
        self.used[i] = true;
        Some((std::mem::take(&mut self.items[i].1), self.items[i].2))
    }

    pub(super) fn opt<T>(
        &mut self,
        key: &'static str,
        hint: &str,
        parse: impl Fn(&str) -> Result<T, NumErr>,
    ) -> Result<Option<T>, String> {
        let Some((v, quoted)) = self.take(key) else { return Ok(None) };
        let what = self.what;
        if quoted {
            return Err(format!("{what}: expected {key}={hint}, found {key}={}", short(&quote(&v))));
        }
        match parse(&v) {
            Ok(x) => Ok(Some(x)),
            Err(e) => {
                let v = short(&v);
                Err(match e {
                    NumErr::Syntax => format!("{what}: expected {key}={hint}, found {key}={v}"),
                    NumErr::Range(r) => format!("{what}: {key}={v} is out of range ({r})"),
                    NumErr::Fraction => format!("{what}: {key}={v} is not a whole number of nanoseconds"),
                })
            }
        }
    }

    pub(super) fn req<T>(
        &mut self,
        key: &'static str,
        hint: &str,
        parse: impl Fn(&str) -> Result<T, NumErr>,
    ) -> Result<T, String> {
        match self.opt(key, hint, parse)? {
            Some(x) => Ok(x),
            None => Err(format!("{}: expected {key}={hint}", self.what)),
        }
    }

    pub(super) fn name(&mut self, key: &'static str, role: &str) -> Result<NameRef, String> {
        let what = self.what;
        match self.take(key) {
            Some((value, quoted)) => {
                name_ref(what, &format!("{key}={role}"), &Tok { key: Some(key.into()), value, quoted })
            }
            None => Err(format!("{what}: expected {key}={role}")),
        }
    }

    /// Errors on any key no one asked for.
    pub(super) fn finish(self) -> Result<(), String> {
        if let Some(i) = self.used.iter().position(|u| !u) {
            let mut expected = String::new();
            for (j, k) in self.asked.iter().enumerate() {
                expected.push_str(if j == 0 { "" } else { ", " });
                expected.push_str(k);
                expected.push('=');
            }
            let expected = if expected.is_empty() { "none".to_string() } else { expected };
            return Err(format!("{}: unknown key {}= (expected {expected})", self.what, self.items[i].0));
        }
        Ok(())
    }
}

/// Errors unless there are exactly `n` positional arguments.
pub(super) fn positional(what: &str, pos: &[Tok], n: usize, expected: &str) -> Result<(), String> {
    if pos.len() < n {
        return Err(format!("{what}: expected {expected}"));
    }
    if let Some(t) = pos.get(n) {
        return Err(format!("{what}: unexpected argument {}", t.show()));
    }
    Ok(())
}

pub(super) fn coll_op(what: &str, pos: &[Tok]) -> Result<CollOp, String> {
    let names = || CollOp::ALL.iter().map(|o| o.name()).collect::<Vec<_>>().join(", ");
    match pos.first() {
        Some(t) if !t.quoted => CollOp::from_name(&t.value).ok_or_else(|| {
            format!("{what}: unknown collective operation {} (expected {})", t.show(), names())
        }),
        Some(t) => Err(format!("{what}: unknown collective operation {} (expected {})", t.show(), names())),
        None => Err(format!("{what}: expected a collective operation ({})", names())),
    }
}
