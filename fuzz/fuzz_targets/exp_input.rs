//! What spoor-exp reads that a user wrote: a map file (formats/exp.md, "Mapping") or a
//! `--where` query. The first byte picks which. A map file parses or names its line; a
//! query parses or names its column, and what parses is valid SQL over a store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spoor_exp::{Mapping, Query, Store};
use std::path::Path;

thread_local! {
    static STORE: Store = Store::open(Path::new(":memory:")).expect("an in-memory store");
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    if which % 2 == 0 {
        match Mapping::parse("fuzz.map", text) {
            Ok(m) => {
                for (from, to) in m.pairs() {
                    // A name maps to its target, and what is below it below the target.
                    assert_eq!(&m.apply(from), to);
                    let below = format!("{from}/x");
                    if !m.pairs().iter().any(|(f, _)| *f == below) {
                        assert!(m.apply(&below).ends_with("/x"));
                    }
                }
            }
            Err(e) => assert!(e.to_string().starts_with("fuzz.map:"), "{e}"),
        }
    } else {
        match Query::parse(text) {
            Ok(q) => STORE.with(|s| {
                s.select(Some(&q)).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            }),
            Err(e) => assert!(e.starts_with("column ") || e == "empty query", "{e}"),
        }
    }
});
