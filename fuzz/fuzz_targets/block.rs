//! Any bytes as the payload of a block of any form (the first byte picks the form and
//! the number of locations): every decoder of blocks agrees with `decode_block`
//! (`spoor_format::raw::decoders_agree`).
#![no_main]
#[path = "common/mod.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use spoor_format::binary::Form;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, payload)) = data.split_first() else { return };
    let form = [Form::Single, Form::Multi, Form::Local, Form::Compact][(pick & 3) as usize];
    if let Err(e) = spoor_format::raw::decoders_agree(payload, form, 1 + (pick >> 2) as usize) {
        panic!("{e}");
    }
});
