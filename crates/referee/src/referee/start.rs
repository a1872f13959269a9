//! The start of a game: the first stable board checked against the setup (an even game,
//! handicap stones, or the board as found).

use super::*;

impl Referee {
    pub(super) fn adopt_start(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        match self.config.start {
            StartPosition::AdoptFirstBoard => self.start_as_found(stable, evidence),
            StartPosition::Even => self.start_even(stable, evidence),
            StartPosition::Handicap(stones) => self.start_handicap(stones, stable, evidence),
        }
    }

    /// Starts play from `board` with `to_move` first.
    pub(super) fn begin(&mut self, board: Board, to_move: Color) {
        self.record.begin(board, to_move);
        self.phase = Phase::Playing;
        self.physical.refresh_acks(self.record.game.board(), None);
    }

    /// The first board is not the setup the game was configured with: for the arbiter (the points
    /// that differ from the setup, trusted as little as their least sure reading).
    fn raise_setup_mismatch(
        &mut self,
        stable: &StableBoard,
        points: &[Point],
        evidence: &Evidence,
        message: Message,
    ) -> Event {
        let confidence = 0.9 * Self::min_confidence(stable, points);
        self.raise(stable.t, EventKind::SetupMismatch, None, points, confidence, evidence, message, None)
    }

    /// An even game: the board must be empty. A lone stone is the first move seen late (a white
    /// one raises Art. 17.1 as it is explained); more stones are for the arbiter, not moves.
    pub(super) fn start_even(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let ByColor { black: b, white: w } = stable.grid.counts();
        self.begin(empty_board(), Color::Black);
        let start = self
            .event(stable.t, EventKind::Start, Say::EvenStart.message())
            .with_side(Some(Color::Black))
            .with_move(Some(0));
        let mut events = vec![start];
        match b + w {
            0 => {}
            1 => events.extend(self.explain_change(stable, evidence)),
            _ => {
                let points: Vec<Point> = Grid::empty().differences(&stable.grid);
                let message = Say::StonesAtEvenStart { black: b, white: w }.message();
                events.push(self.raise_setup_mismatch(stable, &points, &evidence, message));
            }
        }
        events
    }

    /// A handicap game: wait until the stones stand on the standard points (seen from any side),
    /// then White moves. Stones beyond them are moves seen late; any other board is for the
    /// arbiter, and play starts from the standard placement closest to it.
    pub(super) fn start_handicap(&mut self, stones: u8, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let Ok(placements) = handicap_placements(stones, tengen_rules::MAX_BOARD_SIZE) else {
            // Not a standard handicap (a bad configuration): take the board as found.
            return self.start_as_found(stable, evidence);
        };
        let black_at = |p: &Point| stable.grid.get(*p) == Stone::Of(Color::Black);
        let ByColor { black: b, white: w } = stable.grid.counts();
        let placing = w == 0
            && b < usize::from(stones)
            && placements
                .iter()
                .any(|placement| stable.grid.differences(&Grid::empty()).iter().all(|p| placement.contains(p)));
        if placing {
            // Black is still putting the stones down (or has not begun): keep waiting.
            return Vec::new();
        }
        let complete = placements.iter().find(|placement| placement.iter().all(black_at));
        let closest = complete.unwrap_or_else(|| {
            placements
                .iter()
                .max_by_key(|placement| placement.iter().filter(|p| black_at(p)).count())
                .unwrap_or(&placements[0])
        });
        let mut grid = Grid::empty();
        for &p in closest {
            grid.set(p, Stone::Of(Color::Black));
        }
        let (board, _) = grid.to_legal_board();
        self.begin(board, Color::White);
        let start = self
            .event(stable.t, EventKind::Start, Say::HandicapStart { stones }.message())
            .with_side(Some(Color::White))
            .with_points(closest)
            .with_move(Some(0));
        let mut events = vec![start];
        if complete.is_some() {
            if stable.grid != grid {
                events.extend(self.explain_change(stable, evidence));
            }
        } else {
            let points = grid.differences(&stable.grid);
            let shown: Vec<Point> = closest.clone();
            let message = Say::HandicapMismatch { stones, shown: &shown, black: b, white: w }.message();
            events.push(self.raise_setup_mismatch(stable, &points, &evidence, message));
        }
        events
    }

    /// Whatever the first stable board shows is the start (handicap stones: White first).
    pub(super) fn start_as_found(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let ByColor { black: b, white: w } = stable.grid.counts();
        // There is no one-stone handicap: a lone black stone is move 1 seen late.
        let first_move_seen = b == 1 && w == 0;
        let (board, _dead) = if first_move_seen { (empty_board(), Vec::new()) } else { stable.grid.to_legal_board() };
        let to_move = if b > w && !first_move_seen { Color::White } else { Color::Black };
        self.begin(board, to_move);
        let said = if b + w == 0 || first_move_seen {
            Say::StartFromEmpty
        } else {
            Say::StartAsFound { black: b, white: w, to_move }
        };
        let e = self.event(stable.t, EventKind::Start, said.message()).with_side(Some(to_move)).with_move(Some(0));
        let mut events = vec![e];
        if first_move_seen {
            events.extend(self.explain_change(stable, evidence));
        }
        events
    }
}
