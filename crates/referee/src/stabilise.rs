//! Stabilising: from per-frame readings to a physical board worth explaining. A board is
//! accepted only after enough hand-free frames agree; a noisy or unreadable point keeps its
//! previous value, so a single flickering point never becomes a move.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use tengen_rules::{Grid, Point, Stone, BOARD_POINTS};

use crate::observation::Observation;

/// How readings become a stable board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StabiliserConfig {
    /// Hand-free frames in the window a new board is judged over (at least).
    pub frames: usize,
    /// Frames of the window a point may disagree in (a flicker) and still be settled; a strict
    /// majority of the window must agree whatever this says.
    pub flicker_tolerance: usize,
    /// The window must also span at least this many seconds (a hand stays longer than a frame
    /// or two; a board must be seen still for a while).
    pub min_seconds: f64,
    /// Readings below this confidence count as unknown (the point keeps its value).
    pub min_confidence: f32,
    /// A point unreadable this long without a hand is reported (a stone between points?).
    pub unclear_notice_seconds: f64,
    /// A new board waits up to this long while some point is contested — no value has enough
    /// frames yet, but a new value has at least as many as the kept one (a capture lifted while
    /// the capturing stone's reading still settles). Without the wait the board would be
    /// accepted half-changed and a capture reported as a stone removed.
    pub contested_wait_seconds: f64,
}

impl Default for StabiliserConfig {
    fn default() -> Self {
        StabiliserConfig {
            frames: 4,
            flicker_tolerance: 1,
            min_seconds: 1.0,
            min_confidence: 0.5,
            unclear_notice_seconds: 5.0,
            contested_wait_seconds: 1.0,
        }
    }
}

/// The reading of one hand-free frame after the confidence filter: `None` = unknown.
#[derive(Clone)]
struct FilteredFrame {
    t: f64,
    frame_ref: Option<String>,
    cells: Vec<Option<(Stone, f32)>>,
}

/// A board accepted as stable, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct StableBoard {
    /// The stones.
    pub grid: Grid,
    /// Mean confidence of the agreeing readings per point (1.0 where the value was kept).
    pub confidence: Vec<f32>,
    /// Time of the last frame of the window.
    pub t: f64,
    /// Reference of the last frame of the window.
    pub frame_ref: Option<String>,
}

/// What one frame did to the stabiliser.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StabiliserOutput {
    /// A new stable board that differs from the last one.
    pub changed: Option<StableBoard>,
    /// Points that just became unreadable for longer than the notice time.
    pub unclear: Vec<tengen_rules::Point>,
}

/// Turns a stream of observations into stable boards.
#[derive(Debug, Clone)]
pub struct Stabiliser {
    config: StabiliserConfig,
    stable: Grid,
    window: VecDeque<FilteredFrameDebug>,
    /// Since when each point has been unreadable in hand-free frames, and whether reported.
    unclear_since: Vec<Option<(f64, bool)>>,
    /// Report the first full window even if it equals the initial board (start adoption).
    report_next: bool,
    /// Since when a changed board has been held back by a contested point.
    contested_since: Option<f64>,
}

/// Debug wrapper so the window can derive Debug without printing 361 cells per frame.
#[derive(Clone)]
struct FilteredFrameDebug(FilteredFrame);
impl std::fmt::Debug for FilteredFrameDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "frame@{}", self.0.t)
    }
}

impl Stabiliser {
    /// A stabiliser whose current board is `initial`.
    pub fn new(config: StabiliserConfig, initial: Grid) -> Self {
        Stabiliser {
            config,
            stable: initial,
            window: VecDeque::new(),
            unclear_since: vec![None; BOARD_POINTS],
            report_next: false,
            contested_since: None,
        }
    }

    /// The current stable board.
    pub fn stable(&self) -> &Grid {
        &self.stable
    }

    /// Makes the next full window report its board even when it equals the current one (the
    /// referee adopts the start position from it).
    pub fn report_first(&mut self) {
        self.report_next = true;
    }

    /// Forgets the frames seen so far (the camera or the board moved): the next stable board
    /// needs a full window of fresh frames.
    pub fn reset_window(&mut self) {
        self.window.clear();
        self.contested_since = None;
    }

    /// Feeds one frame.
    pub fn push(&mut self, obs: &Observation) -> StabiliserOutput {
        let mut out = StabiliserOutput::default();
        if obs.occluded {
            // Never infer anything from a frame with a hand in it: start the window again.
            self.reset_window();
            return out;
        }
        let mut cells = Vec::with_capacity(BOARD_POINTS);
        for p in Point::all() {
            let po = obs.points[usize::from(p.row)][usize::from(p.col)];
            let known = po.reading.stone().filter(|_| po.confidence >= self.config.min_confidence);
            cells.push(known.map(|s| (s, po.confidence)));
            let slot = &mut self.unclear_since[p.index()];
            match (known, slot.as_mut()) {
                (Some(_), _) => *slot = None,
                (None, None) => *slot = Some((obs.t, false)),
                (None, Some((since, reported))) => {
                    if !*reported && obs.t - *since >= self.config.unclear_notice_seconds {
                        *reported = true;
                        out.unclear.push(p);
                    }
                }
            }
        }
        self.window.push_back(FilteredFrameDebug(FilteredFrame { t: obs.t, frame_ref: obs.frame_ref.clone(), cells }));
        let frames = self.config.frames.max(1);
        // The window holds at least `frames` frames and spans at least `min_seconds`: drop the
        // oldest frame only while both still hold without it.
        while self.window.len() > frames {
            let span_without_first = match (self.window.get(1), self.window.back()) {
                (Some(second), Some(last)) => last.0.t - second.0.t,
                _ => 0.0,
            };
            if span_without_first < self.config.min_seconds {
                break;
            }
            self.window.pop_front();
        }
        if self.window.len() < frames {
            return out;
        }
        let (first_t, last) = match (self.window.front(), self.window.back()) {
            (Some(f), Some(l)) => (f.0.t, l.0.clone()),
            _ => return out,
        };
        if last.t - first_t < self.config.min_seconds {
            return out;
        }
        // Flickers are tolerated (at least `flicker_tolerance` frames, a quarter of a long window)
        // but a strict majority of the window must always agree.
        let len = self.window.len();
        let needed = len.saturating_sub(self.config.flicker_tolerance.max(len / 4)).max(len / 2 + 1);
        let mut grid = self.stable.clone();
        let mut confidence = vec![1.0f32; BOARD_POINTS];
        let mut contested = false;
        for p in Point::all() {
            let i = p.index();
            // Count each value among the frames that read this point.
            let mut tally: [(usize, f32); 3] = [(0, 0.0); 3];
            for f in &self.window {
                if let Some((s, c)) = f.0.cells[i] {
                    let k = stone_slot(s);
                    tally[k].0 += 1;
                    tally[k].1 += c;
                }
            }
            let kept = stone_slot(self.stable.get(p));
            if let Some((k, (n, sum))) = tally.iter().enumerate().max_by_key(|(_, (n, _))| *n) {
                if *n >= needed {
                    grid.set(p, slot_stone(k));
                    confidence[i] = sum / *n as f32;
                } else if *n > 0 && k != kept && *n >= tally[kept].0 {
                    contested = true;
                }
            }
        }
        let changed = grid != self.stable || self.report_next;
        if changed && contested {
            // Hold the board back while the contested point may still settle, but not for ever:
            // a point that never settles (a stone between points) must not freeze the game.
            let since = *self.contested_since.get_or_insert(last.t);
            if last.t - since < self.config.contested_wait_seconds {
                return out;
            }
        }
        self.contested_since = None;
        if changed {
            self.report_next = false;
            self.stable = grid.clone();
            out.changed = Some(StableBoard { grid, confidence, t: last.t, frame_ref: last.frame_ref });
        }
        out
    }
}

fn stone_slot(s: Stone) -> usize {
    match s {
        Stone::Empty => 0,
        Stone::Of(tengen_rules::Color::Black) => 1,
        Stone::Of(tengen_rules::Color::White) => 2,
    }
}

fn slot_stone(k: usize) -> Stone {
    match k {
        1 => Stone::Of(tengen_rules::Color::Black),
        2 => Stone::Of(tengen_rules::Color::White),
        _ => Stone::Empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::BOARD_LINES;
    use tengen_rules::{Color, Point};

    fn rows_with(points: &[(usize, usize, char)]) -> Vec<String> {
        let mut rows: Vec<Vec<char>> = vec![vec!['.'; BOARD_LINES]; BOARD_LINES];
        for &(c, r, ch) in points {
            rows[r][c] = ch;
        }
        rows.into_iter().map(|r| r.into_iter().collect()).collect()
    }

    fn obs(t: f64, points: &[(usize, usize, char)], occluded: bool) -> Observation {
        Observation::from_rows(t, &rows_with(points), occluded).expect("valid rows")
    }

    #[test]
    fn a_stone_is_accepted_after_enough_hand_free_frames_and_a_flicker_never() {
        let mut s =
            Stabiliser::new(StabiliserConfig { min_seconds: 0.3, ..StabiliserConfig::default() }, Grid::empty());
        assert!(s.push(&obs(0.0, &[(3, 3, 'X')], true)).changed.is_none(), "hand frame");
        // A single flicker at a different point in one frame.
        assert!(s.push(&obs(0.1, &[(3, 3, 'X'), (9, 9, 'O')], false)).changed.is_none());
        assert!(s.push(&obs(0.2, &[(3, 3, 'X')], false)).changed.is_none());
        assert!(s.push(&obs(0.3, &[(3, 3, 'X')], false)).changed.is_none());
        let stable = s.push(&obs(0.4, &[(3, 3, 'X')], false)).changed.expect("four hand-free frames");
        assert_eq!(stable.grid.get(Point::new(3, 3)), Stone::Of(Color::Black));
        assert_eq!(stable.grid.get(Point::new(9, 9)), Stone::Empty);
        // An unknown point keeps its value.
        for k in 0..6 {
            assert!(s.push(&obs(1.0 + f64::from(k), &[(3, 3, '?')], false)).changed.is_none());
        }
        assert_eq!(s.stable().get(Point::new(3, 3)), Stone::Of(Color::Black));
    }

    #[test]
    fn a_capture_is_not_accepted_half_done_while_the_capturing_stone_still_settles() {
        // Black A19 (0,0) is captured by White B19 (1,0): both change in the same view, but
        // B19 reads empty in the first frame and unreadable in the fourth.
        let mut s = Stabiliser::new(StabiliserConfig::default(), Grid::empty());
        let before = [(0, 0, 'X'), (0, 1, 'O')];
        for k in 0..5 {
            s.push(&obs(0.3 * f64::from(k), &before, false));
        }
        assert_eq!(s.stable().get(Point::new(0, 0)), Stone::Of(Color::Black));
        s.push(&obs(2.0, &before, true));
        let after = [(0, 1, 'O'), (1, 0, 'O')];
        let unread = [(0, 1, 'O'), (1, 0, '?')];
        let frames: [&[(usize, usize, char)]; 6] = [&[(0, 1, 'O')], &after, &after, &after, &unread, &after];
        let mut accepted = Vec::new();
        for (k, f) in frames.iter().enumerate() {
            if let Some(b) = s.push(&obs(2.3 + 0.3 * k as f64, f, false)).changed {
                accepted.push(b.grid);
            }
        }
        assert_eq!(accepted.len(), 1, "one board, the whole capture");
        assert_eq!(accepted[0].get(Point::new(0, 0)), Stone::Empty);
        assert_eq!(accepted[0].get(Point::new(1, 0)), Stone::Of(Color::White));
    }

    #[test]
    fn a_point_that_never_settles_holds_a_new_board_back_only_for_the_wait() {
        // A stone appears at (5,5) while (9,9) reads white and unreadable in turn for ever: white
        // leads the kept empty but never reaches the frames needed.
        let mut s = Stabiliser::new(StabiliserConfig::default(), Grid::empty());
        let mut accepted_at = None;
        for k in 0..20 {
            let flicker = if k % 2 == 0 { 'O' } else { '?' };
            let t = 0.3 * f64::from(k);
            if s.push(&obs(t, &[(5, 5, 'X'), (9, 9, flicker)], false)).changed.is_some() {
                accepted_at = Some(t);
                break;
            }
        }
        let t = accepted_at.expect("accepted after the wait");
        assert!((2.0..=2.5).contains(&t), "accepted at {t}: window 1.2 s + wait 1 s");
        assert_eq!(s.stable().get(Point::new(5, 5)), Stone::Of(Color::Black));
    }

    #[test]
    fn an_unreadable_point_is_reported_once() {
        let cfg = StabiliserConfig { unclear_notice_seconds: 2.0, ..StabiliserConfig::default() };
        let mut s = Stabiliser::new(cfg, Grid::empty());
        let mut reported = Vec::new();
        for k in 0..10 {
            reported.extend(s.push(&obs(f64::from(k), &[(4, 4, '?')], false)).unclear);
        }
        assert_eq!(reported, vec![Point::new(4, 4)]);
    }
}
