//! The observation reader behind `tengen referee`: any bytes, split into lines as the command
//! splits them, read by the one line reader (`Input::from_line`) and fed to a referee. A bad
//! line is an error (the command skips it); no panic, whatever the lines say.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tengen_referee::{Input, Referee, RefereeConfig};

fuzz_target!(|data: &[u8]| {
    let mut referee = Referee::new(RefereeConfig::default());
    for line in data.split(|&b| b == b'\n') {
        let Ok(text) = std::str::from_utf8(line) else {
            continue;
        };
        let Ok(input) = Input::from_line(text) else {
            continue;
        };
        match &input {
            Input::Arbiter { t, action } => {
                let _ = referee.arbiter(*t, action);
            }
            other => {
                let _ = referee.feed(other);
            }
        }
    }
    let _ = referee.state();
});
