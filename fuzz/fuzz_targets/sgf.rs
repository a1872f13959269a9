//! The SGF reader and the rules replay behind `tengen sgf check`: any bytes give a report (a
//! parse error is a finding), never a panic, and the counts agree with the report.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let report = tengen_sgf::check_bytes(data);
    if let Ok(collection) = tengen_sgf::read_collection(data) {
        assert_eq!(report.games, collection.games().len(), "the check saw every game that was read");
    }
});
