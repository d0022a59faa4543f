//! Any text given to the text-form parser: an error naming a line, or events that
//! write back to text that parses to the same events.
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_format::text::{self, TextParser};

fuzz_target!(|data: &[u8]| {
    let mut p = TextParser::new("fuzz", data);
    let mut events = Vec::new();
    loop {
        match p.next_event() {
            Ok(Some(e)) => events.push(e),
            Ok(None) => break,
            Err(_) => return,
        }
    }
    let defs = p.into_defs();
    let mut out = Vec::new();
    text::write_header(&mut out).unwrap();
    text::write_definitions(&mut out, &defs).unwrap();
    for e in &events {
        text::write_event(&mut out, &defs, e).unwrap();
    }
    let mut again = TextParser::new("again", &out[..]);
    let mut back = Vec::new();
    while let Some(e) = again.next_event().expect("the writer's text parses") {
        back.push(e);
    }
    assert_eq!(again.defs(), &defs);
    assert_eq!(format!("{back:?}"), format!("{events:?}"));
});
