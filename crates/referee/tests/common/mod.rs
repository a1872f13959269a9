//! Helpers shared by the referee's integration tests: a table that shows boards to the referee
//! the way a camera would (a hand frame, then enough clear frames), and board editing.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use tengen_referee::{ArbiterAction, Event, EventKind, Observation, Referee, RefereeConfig, Snapshot, Status};
use tengen_rules::{Color, Point, BOARD_LINES};

/// A simulated table: a referee plus a clock in seconds.
pub struct Table {
    pub referee: Referee,
    pub t: f64,
    pub board: Vec<Vec<char>>,
    pub events: Vec<Event>,
}

pub fn p(text: &str) -> Point {
    Point::parse_on_board(text).expect("test coordinate")
}

impl Table {
    pub fn new() -> Self {
        Table::with_config(RefereeConfig::default())
    }

    pub fn with_config(config: RefereeConfig) -> Self {
        let mut t = Table {
            referee: Referee::new(config),
            t: 0.0,
            board: vec![vec!['.'; BOARD_LINES]; BOARD_LINES],
            events: Vec::new(),
        };
        t.show();
        t
    }

    pub fn rows(&self) -> Vec<String> {
        self.board.iter().map(|r| r.iter().collect()).collect()
    }

    /// Puts `ch` ('X', 'O' or '.') on the physical board (not yet shown).
    pub fn put(&mut self, at: &str, ch: char) -> &mut Self {
        let q = p(at);
        self.board[usize::from(q.row)][usize::from(q.col)] = ch;
        self
    }

    pub fn set_rows(&mut self, rows: &[&str]) -> &mut Self {
        self.board = rows.iter().map(|r| r.chars().collect()).collect();
        self
    }

    /// A hand over the board, then five clear frames of the current physical board, 0.5 s apart.
    pub fn show(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        let rows = self.rows();
        let mut hand = rows.clone();
        hand[9] = "?".repeat(BOARD_LINES);
        self.t += 0.5;
        out.extend(self.referee.observe(&Observation::from_rows(self.t, &hand, true).expect("rows")));
        for _ in 0..5 {
            self.t += 0.5;
            out.extend(self.referee.observe(&Observation::from_rows(self.t, &rows, false).expect("rows")));
        }
        self.events.extend(out.clone());
        out
    }

    /// Six moves (D4, D5, C5, Q16, E5, R16) that leave White's D5 in atari, Black to take it
    /// at D6 — the start of every capture scenario.
    pub fn play_atari_on_d5(&mut self) {
        self.play_moves(&["D4", "D5", "C5", "Q16", "E5", "R16"]);
    }

    /// Puts these stones ('X', 'O', or '.' to lift one) and shows the board: a change the
    /// referee expects, which must raise nothing.
    pub fn put_expected(&mut self, stones: &[(&str, char)]) {
        for &(at, ch) in stones {
            self.put(at, ch);
        }
        let events = self.show();
        assert!(events.is_empty(), "{:#?}", kinds(&events));
    }

    /// Ordinary moves in turn, each by the side to move and shown as a camera shows it: each
    /// must be recorded as that side's move and raise no infraction.
    pub fn play_moves(&mut self, points: &[&str]) {
        for at in points {
            let side = self.state().to_move;
            let events = self.play(at, if side == Color::Black { 'X' } else { 'O' }, &[]);
            assert_eq!(moves(&events), vec![(side, (*at).to_owned())], "{at}");
            assert!(infractions(&events).is_empty(), "{at}: {:#?}", kinds(&events));
        }
    }

    /// Plays a stone and lifts the given captured stones in the same view.
    pub fn play(&mut self, at: &str, ch: char, lifts: &[&str]) -> Vec<Event> {
        self.put(at, ch);
        for l in lifts {
            self.put(l, '.');
        }
        self.show()
    }

    /// Clear frames only (time passing with no hand), `secs` seconds.
    pub fn wait(&mut self, secs: f64) -> Vec<Event> {
        let rows = self.rows();
        let mut out = Vec::new();
        let end = self.t + secs;
        while self.t < end {
            self.t += 0.5;
            out.extend(self.referee.observe(&Observation::from_rows(self.t, &rows, false).expect("rows")));
        }
        self.events.extend(out.clone());
        out
    }

    pub fn arbiter(&mut self, action: ArbiterAction) -> Vec<Event> {
        self.t += 0.1;
        let out = self.referee.arbiter(self.t, &action).expect("arbiter action applies");
        self.events.extend(out.clone());
        out
    }

    pub fn state(&self) -> Snapshot {
        self.referee.state()
    }
}

pub fn kinds(events: &[Event]) -> Vec<EventKind> {
    events.iter().map(|e| e.kind).collect()
}

pub fn infractions(events: &[Event]) -> Vec<&Event> {
    events.iter().filter(|e| e.kind.is_infraction() && e.status == Status::Suspected).collect()
}

pub fn moves(events: &[Event]) -> Vec<(Color, String)> {
    events
        .iter()
        .filter(|e| e.kind == EventKind::Move)
        .map(|e| (e.side.expect("a move has a side"), e.points[0].point.human()))
        .collect()
}

/// The points an event concerns, in the people's form ("D4").
pub fn points_of(event: &Event) -> Vec<String> {
    event.points.iter().map(|p| p.point.human()).collect()
}

pub fn only_infraction(events: &[Event], kind: EventKind, article: &str) -> Event {
    let inf = infractions(events);
    assert_eq!(inf.len(), 1, "expected one infraction {kind:?}, got {:#?}", kinds(events));
    let e = inf[0].clone();
    assert_eq!(e.kind, kind, "{:#?}", e.message);
    assert_eq!(e.article.as_deref(), Some(article));
    assert!(e.infraction.is_some());
    assert!(e.evidence.is_some(), "infractions carry evidence");
    assert!(e.ruling.is_some(), "infractions carry the ruling");
    assert!(!e.message.zh.is_empty() && !e.message.en.is_empty());
    e
}
