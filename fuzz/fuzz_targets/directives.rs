//! Any text given as a directives file (formats/diagnose.md), against the resources of
//! testdata/diagnose/io.txt: an error naming its line, or directives that steer a search.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spoor_diagnose::cube::Cube;
use spoor_diagnose::{search, Directives, Resources, SearchOptions};
use spoor_model::{Definitions, Silent};
use std::sync::OnceLock;

fn folded() -> &'static (Definitions, Cube) {
    static FOLDED: OnceLock<(Definitions, Cube)> = OnceLock::new();
    FOLDED.get_or_init(|| {
        let text =
            std::fs::read(spoor_testkit::testdata("diagnose/io.txt")).expect("testdata/diagnose/io.txt");
        let path = std::env::temp_dir().join(format!("spoor-fuzz-directives-{}.spoor", std::process::id()));
        std::fs::write(&path, spoor_testkit::ordered_bytes("io.txt", text)).expect("a temporary file");
        let (defs, _, cube, _) = spoor_diagnose::fold(path.to_str().unwrap(), &Silent).expect("io.txt folds");
        let _ = std::fs::remove_file(&path);
        (defs, cube)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (defs, cube) = folded();
    let res = Resources::new(defs, cube);
    match Directives::parse("fuzz.dirs", text, &res) {
        Ok(d) => {
            let shg =
                search::search(cube, &res, &d, &SearchOptions { max_tests: 200, ..SearchOptions::default() });
            assert!(shg.tested <= 200);
        }
        Err(e) => assert!(e.starts_with("fuzz.dirs:"), "{e}"),
    }
});
