//! The events the referee publishes: a versioned JSON schema (see `docs/events.md`), with the
//! article each infraction applies, its evidence, confidence, ruling and status.

use serde::{Deserialize, Serialize};
use tengen_rules::{ByColor, Color, Point};

/// Version of the event schema; bumped on any incompatible change.
pub const EVENT_SCHEMA_VERSION: u32 = 1;

/// A point of an event: a [`Point`], written in both notations people and records use
/// (`{"human": "Q16", "sgf": "pd"}`, `docs/events.md`) and read back from its SGF form, so
/// that no reader parses the text again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "PointForms", try_from = "PointForms")]
pub struct PointRef {
    /// The point.
    pub point: Point,
}

impl PointRef {
    /// A point of the 19×19 board.
    pub fn of(point: Point) -> Self {
        PointRef { point }
    }
}

/// The wire form of a [`PointRef`].
#[derive(Serialize, Deserialize)]
struct PointForms {
    /// Human notation, letters without I, row 1 at the bottom: "Q16".
    human: String,
    /// SGF notation, from the top-left: "pd".
    sgf: String,
}

impl From<PointRef> for PointForms {
    fn from(p: PointRef) -> Self {
        PointForms { human: p.point.human(), sgf: p.point.to_sgf() }
    }
}

impl TryFrom<PointForms> for PointRef {
    type Error = tengen_rules::CoordError;

    fn try_from(forms: PointForms) -> Result<Self, Self::Error> {
        Point::parse_on_board(&forms.sgf).map(PointRef::of)
    }
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The referee adopted the start position (empty board or handicap stones).
    Start,
    /// A stone was played and entered in the record.
    Move,
    /// Stones were captured by a move (removed from the legal board, Art. 4).
    Capture,
    /// A side passed (entered by the arbiter or a player: a camera cannot see it).
    Pass,
    /// Several moves were missed by the camera; the physical board was adopted as the position.
    Resync,
    /// The board was covered for a long time.
    Occluded,
    /// The camera or the board moved (raised by the server from vision tracking).
    BoardMoved,
    /// A point cannot be read for a while: a stone between points or off the grid is not a move.
    UnclearPoint,
    /// Play ended (two passes, agreement or resignation).
    GameEnd,
    /// Dead stones were marked or unmarked for counting.
    DeadStones,
    /// The counted (or decided) result.
    Result,
    /// A confirmed warning (Art. 24).
    Warning,
    /// The players hold the wrong colours (Art. 17.1).
    WrongColours,
    /// The same side played twice: a double move or an unrecorded pass (Art. 17.2).
    DoubleMove,
    /// A stone lifted (and replayed) after it was played (Art. 17.3).
    Takeback,
    /// Stones found moved (Art. 17.5).
    MovedStone,
    /// Many stones disturbed at once (Art. 17.6).
    ScatteredBoard,
    /// Stones with liberties removed (Art. 18.1).
    WrongCapture,
    /// Stones without liberties left on the board (Art. 18.2).
    MissedCapture,
    /// A ko retaken at once (Art. 18.3, 20.1).
    KoRetaken,
    /// A stone on a forbidden point (Art. 19, 5).
    ForbiddenPoint,
    /// A whole-board position repeated (Art. 6).
    Repetition,
    /// A cycle that cannot end (triple ko, eternal life: Art. 20.3).
    NoResult,
    /// The arbiter corrected a recorded move.
    Correction,
    /// The first stable board is not the start the game was set up with: stones on the board of
    /// an even game, handicap stones off the standard points (Art. 2).
    SetupMismatch,
}

impl EventKind {
    /// The machine name (as in the JSON).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Start => "start",
            EventKind::Move => "move",
            EventKind::Capture => "capture",
            EventKind::Pass => "pass",
            EventKind::Resync => "resync",
            EventKind::Occluded => "occluded",
            EventKind::BoardMoved => "board_moved",
            EventKind::UnclearPoint => "unclear_point",
            EventKind::GameEnd => "game_end",
            EventKind::DeadStones => "dead_stones",
            EventKind::Result => "result",
            EventKind::Warning => "warning",
            EventKind::WrongColours => "wrong_colours",
            EventKind::DoubleMove => "double_move",
            EventKind::Takeback => "takeback",
            EventKind::MovedStone => "moved_stone",
            EventKind::ScatteredBoard => "scattered_board",
            EventKind::WrongCapture => "wrong_capture",
            EventKind::MissedCapture => "missed_capture",
            EventKind::KoRetaken => "ko_retaken",
            EventKind::ForbiddenPoint => "forbidden_point",
            EventKind::Repetition => "repetition",
            EventKind::NoResult => "no_result",
            EventKind::Correction => "correction",
            EventKind::SetupMismatch => "setup_mismatch",
        }
    }

    /// Whether this kind is an infraction the arbiter confirms or dismisses.
    pub fn is_infraction(self) -> bool {
        self.article().is_some()
            && !matches!(
                self,
                EventKind::Warning
                    | EventKind::Pass
                    | EventKind::GameEnd
                    | EventKind::Result
                    | EventKind::Capture
                    | EventKind::UnclearPoint
                    | EventKind::DeadStones
            )
    }

    /// The article of the 2002 Chinese rules the event applies, e.g. "18.2".
    pub fn article(self) -> Option<&'static str> {
        Some(match self {
            EventKind::Capture => "4",
            EventKind::Pass => "2",
            EventKind::UnclearPoint => "2",
            EventKind::SetupMismatch => "2",
            EventKind::GameEnd => "7",
            EventKind::DeadStones => "8",
            EventKind::Result => "9",
            EventKind::Warning => "24",
            EventKind::WrongColours => "17.1",
            EventKind::DoubleMove => "17.2",
            EventKind::Takeback => "17.3",
            EventKind::MovedStone => "17.5",
            EventKind::ScatteredBoard => "17.6",
            EventKind::WrongCapture => "18.1",
            EventKind::MissedCapture => "18.2",
            EventKind::KoRetaken => "18.3",
            EventKind::ForbiddenPoint => "19",
            EventKind::Repetition => "6",
            EventKind::NoResult => "20.3",
            EventKind::Start
            | EventKind::Move
            | EventKind::Resync
            | EventKind::Occluded
            | EventKind::BoardMoved
            | EventKind::Correction => return None,
        })
    }

    /// Whether confirming this infraction costs the offending side a warning (Art. 24).
    pub fn warns(self) -> bool {
        matches!(
            self,
            EventKind::DoubleMove
                | EventKind::Takeback
                | EventKind::WrongCapture
                | EventKind::MissedCapture
                | EventKind::KoRetaken
        )
    }

    /// What the article prescribes, in English and Chinese.
    pub fn ruling(self) -> Option<Message> {
        let (en, zh) = match self {
            EventKind::SetupMismatch => (
                "An even game starts on an empty board; a handicap game with the stones on the standard points, White first (Art. 2). Confirm once the board is put right (the stones were not moves); dismiss a misreading; adopt the board if the game goes on from it as found.",
                "對局開始時棋盤應為空枰；讓子局的讓子應放在星位上，白先（第2條）。棋盤擺正後確認（這些棋子不算著手）；誤讀則駁回；若對局按目前盤面繼續，請以目前盤面為準。",
            ),
            EventKind::WrongColours => (
                "Wrong colours may be corrected up to and including move 10; after move 10 the game stands as played (Art. 17.1).",
                "拿錯黑白棋，在第10手之前（含）允許改正；超過10手一律不予改正（第17條1款）。",
            ),
            EventKind::DoubleMove => (
                "If the other side had not passed, the second move is void and the player is warned (Art. 17.2). Confirm = double move; dismiss = an unrecorded pass (a pass is entered before the move).",
                "一方並未表示棄權，另一方連下兩著，判第二著無效並警告一次（第17條2款）。確認＝連下兩著；駁回＝未記錄的虛著。",
            ),
            EventKind::Takeback => (
                "A takeback claimed before the opponent's next move: the stone goes back to its first point and the player is warned (Art. 17.3). A stone dropped by accident may be replayed with the opponent's consent.",
                "悔棋無效，判棋子放回原處，並警告一次（第17條3款）；棋子不慎掉落，經對手同意可揀起另選著點。",
            ),
            EventKind::MovedStone => (
                "Moved stones go back to their points if both agree; otherwise the chief arbiter rules (reasonable point, the move stands, draw, replay, both lose); a deliberate move loses (Art. 17.5).",
                "移動之子經雙方同意挪回原處；否則由裁判長判：挪至合理點、有效、和棋、重賽或雙方均負；故意移子者判負（第17條5款）。",
            ),
            EventKind::ScatteredBoard => (
                "Restore the position from the record (the list below) and continue if both agree; otherwise draw, replay or both lose; a player who scattered the board and cannot restore it loses (Art. 17.6).",
                "經復盤，雙方一致則按復盤次序繼續比賽；否則判和棋、重賽或雙方均負；無意散亂而不能復盤者判負（第17條6款）。",
            ),
            EventKind::WrongCapture => (
                "Stones with liberties were removed: the remover is warned and the stones go back (Art. 18.1).",
                "誤提對方有氣之子，判誤提者警告一次，將有氣之子放回原處（第18條1款）。",
            ),
            EventKind::MissedCapture => (
                "Stones without liberties were not (or only partly) removed: the player who failed to remove them is warned and the stones are removed (Art. 18.2).",
                "未提或漏提對方無氣之子，判未提、漏提者警告一次並提取無氣之子（第18條2款）。",
            ),
            EventKind::KoRetaken => (
                "A ko retaken without a threat: the retake is void, counts as a pass, and the player is warned (Art. 18.3, 20.1).",
                "劫爭須找劫材時未找而提劫，判提劫之手無效，棄權一次並警告一次（第18條3款、第20條1款）。",
            ),
            EventKind::ForbiddenPoint => (
                "A stone on a forbidden point: the move is void and counts as a pass (Art. 19).",
                "棋子下在禁著點上，判著手無效，棄權一次（第19條）。",
            ),
            EventKind::Repetition => (
                "Whole-board repetition is forbidden in principle (Art. 6); the arbiter applies Art. 20.",
                "禁止全局同形再現（第6條），由裁判按第20條處理。",
            ),
            EventKind::NoResult => (
                "A cycle such as triple ko or eternal life: the competition may rule no result, a draw or a replay (Art. 20.3).",
                "三劫循環、四劫循環、長生等全局同形再現：可判無勝負、和棋或加賽（第20條3款）。",
            ),
            _ => return None,
        };
        Some(Message::new(en, zh))
    }
}

/// Where an infraction stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// An ordinary event: nothing to decide.
    Info,
    /// Raised by the referee, awaiting the arbiter.
    Suspected,
    /// The arbiter confirmed it.
    Confirmed,
    /// The arbiter dismissed it.
    Dismissed,
}

/// A text in English and Chinese, the Chinese in both scripts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// English.
    pub en: String,
    /// Chinese in Traditional characters.
    pub zh: String,
    /// Chinese in Simplified characters, derived from `zh`.
    #[serde(default)]
    pub zh_hans: String,
}

impl Message {
    /// A message from English and Traditional Chinese; article references are put in the rules'
    /// own wording (第十八條第二款) and the Simplified text is derived.
    pub fn new(en: impl Into<String>, zh: impl Into<String>) -> Self {
        let zh = crate::hans::chinese_articles(&zh.into());
        Message { en: en.into(), zh_hans: crate::hans::to_simplified(&zh), zh }
    }
}

/// One stable board as evidence: when, which frame, and what it showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sighting {
    /// Time of the frame, seconds.
    pub t: f64,
    /// The frame's reference, if the source gave one.
    pub frame_ref: Option<String>,
    /// The stable board, 19 rows of `.XO`, top row first.
    pub rows: Vec<String>,
}

/// Evidence of an infraction: the stable boards before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The last stable board before the change.
    pub before: Option<Sighting>,
    /// The stable board that showed it.
    pub after: Option<Sighting>,
}

/// What a point must hold to restore the recorded position (scattered board, corrections).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restore {
    /// The point.
    pub point: PointRef,
    /// The stone it must hold, `None` for empty.
    pub stone: Option<Color>,
}

/// A result in the three forms an arbiter writes, with the count behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultForms {
    /// Exact form in English, e.g. "Black wins by ¾ stone".
    pub exact: String,
    /// Points form as in SGF `RE`, e.g. "B+1.5".
    pub points: String,
    /// The customary Chinese form (Art. 11), e.g. "黑勝1/2子".
    pub customary: String,
    /// The winner; `None` for a draw (or no result).
    pub winner: Option<Color>,
    /// Black's area after penalties (stones), when counted.
    pub black_count: Option<f64>,
    /// Komi in points.
    pub komi_points: f64,
    /// Confirmed warnings: black, white.
    pub warnings: ByColor<u32>,
}

impl ResultForms {
    /// The result as people read it: the exact form in English, the customary form in
    /// Chinese, each with the record's points form (`RE`).
    pub fn message(&self) -> Message {
        crate::messages::with_record_form(&self.exact, &self.customary, &self.points)
    }
}

/// One event as published: the schema is documented in `docs/events.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Schema version ([`EVENT_SCHEMA_VERSION`]).
    pub schema: u32,
    /// Unique id: `table/game/seq`.
    pub id: String,
    /// Table id.
    pub table: String,
    /// Game id.
    pub game: String,
    /// Sequence number within the game, from 1, strictly increasing.
    pub seq: u64,
    /// Time of the input that raised it, seconds.
    pub t: f64,
    /// What happened.
    pub kind: EventKind,
    /// The article applied (e.g. "18.2"), `null` for events no article governs.
    pub article: Option<String>,
    /// The side concerned (the offending side for infractions), `null` when none or unknown.
    pub side: Option<Color>,
    /// The points concerned, in both notations.
    pub points: Vec<PointRef>,
    /// The move number concerned.
    pub move_number: Option<u32>,
    /// For infractions (and their confirmations): the id the arbiter answers with.
    pub infraction: Option<u64>,
    /// Info for ordinary events; suspected / confirmed / dismissed for infractions.
    pub status: Status,
    /// How sure the referee is, 0..=1.
    pub confidence: f32,
    /// Stable boards before and after, with frame references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// What the article prescribes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruling: Option<Message>,
    /// What happened, in English and Chinese.
    pub message: Message,
    /// Stones captured (move and capture events).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub captured: Vec<PointRef>,
    /// What to put back where (scattered board, corrections).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restore: Vec<Restore>,
    /// The result (result events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultForms>,
    /// How many move orders fit the change when several moves were seen at once (>1: ambiguous).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orders: Option<u32>,
    /// Chains suggested dead (game end), for the players to confirm.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_dead: Vec<PointRef>,
}

impl Event {
    /// A bare event of `kind`; the referee fills in the rest.
    pub fn new(table: &str, game: &str, seq: u64, t: f64, kind: EventKind, message: Message) -> Self {
        Event {
            schema: EVENT_SCHEMA_VERSION,
            id: format!("{table}/{game}/{seq}"),
            table: table.to_string(),
            game: game.to_string(),
            seq,
            t,
            kind,
            article: kind.article().map(str::to_string),
            side: None,
            points: Vec::new(),
            move_number: None,
            infraction: None,
            status: if kind.is_infraction() { Status::Suspected } else { Status::Info },
            confidence: 1.0,
            evidence: None,
            ruling: None,
            message,
            captured: Vec::new(),
            restore: Vec::new(),
            result: None,
            orders: None,
            suggested_dead: Vec::new(),
        }
    }

    /// Sets the points.
    pub fn with_points(mut self, points: &[Point]) -> Self {
        self.points = points.iter().map(|&p| PointRef::of(p)).collect();
        self
    }

    /// Sets the side.
    pub fn with_side(mut self, side: Option<Color>) -> Self {
        self.side = side;
        self
    }

    /// Sets the move number.
    pub fn with_move(mut self, n: Option<u32>) -> Self {
        self.move_number = n;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_written_in_both_notations_and_read_back_from_them() {
        let q16 = PointRef::of(Point::new(15, 3));
        let text = serde_json::to_string(&q16).expect("json");
        assert_eq!(text, r#"{"human":"Q16","sgf":"pd"}"#);
        assert_eq!(serde_json::from_str::<PointRef>(&text).expect("read back"), q16);
        assert!(serde_json::from_str::<PointRef>(r#"{"human":"Z99","sgf":"zz"}"#).is_err(), "not a point of the board");
    }
}
