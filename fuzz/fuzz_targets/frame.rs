//! The frame edge check and the vision behind it: any bytes are refused by the check or
//! decoded within the frame limits, and a decoded frame is searched for a board within the work
//! budget (a small one, to keep runs fast) and read when one is found. No panic, no decode the
//! check did not allow, no search past its budget.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tengen_vision::locate::{locate, LocateError, LocateOptions};
use tengen_vision::{check_frame, decode_rgb_with, read_board, FrameLimits, ReaderConfig, WorkLimit, WorkStopped};

/// Small frames only: the fuzzer's seeds are small, and large ones would make runs slow.
const LIMITS: FrameLimits = FrameLimits { max_side: 1024, max_pixels: 640 * 480, min_side: 64 };
const STEPS: u64 = 20_000_000;

fuzz_target!(|data: &[u8]| {
    let checked = check_frame(data, &LIMITS);
    let Ok(frame) = decode_rgb_with(data, LIMITS) else {
        return;
    };
    let info = checked.expect("a frame the check refused was decoded");
    let (w, h) = frame.rgb.dimensions();
    assert!(
        (w, h) == (info.width, info.height) || (w, h) == (info.height, info.width),
        "decoded {w}×{h}, the header said {}×{}",
        info.width,
        info.height
    );
    let options = LocateOptions { work: WorkLimit::steps(STEPS), ..LocateOptions::default() };
    match locate(&frame.rgb, &options) {
        Ok(located) => {
            assert!(located.quality.work_steps <= STEPS);
            let reading = read_board(&frame.rgb, &located.geometry, &ReaderConfig::default());
            assert_eq!(reading.points.len(), 19);
        }
        Err(LocateError::Stopped(stopped)) => {
            assert_eq!(stopped, WorkStopped::Exhausted { limit: STEPS })
        }
        Err(_) => {}
    }
});
