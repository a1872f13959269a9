//! Every sentence the referee says, in English and Chinese: one table. The referee names what
//! happened (a [`Say`]) where it happens; the words are all here, one arm a message, so they
//! can be read, reviewed and translated together. The Simplified Chinese is derived from the
//! Chinese here (`hans`); the rulings that go with each kind of infraction are in `event`.

use tengen_rules::{Color, Point};

use crate::event::{Message, ResultForms};

/// What the referee has to say.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Say<'a> {
    /// The board has been covered for `secs` seconds.
    Occluded { secs: f64 },
    /// The board or the camera moved (by `shift_cells` grid cells, when measured).
    BoardMoved { shift_cells: Option<f64> },
    /// A stone between points or off the grid (Art. 2).
    UnclearPoint { point: Point },
    /// An even game starts on an empty board.
    EvenStart,
    /// Stones stand on the board at the start of an even game.
    StonesAtEvenStart { black: usize, white: usize },
    /// A handicap game starts with its stones in place.
    HandicapStart { stones: u8 },
    /// The handicap stones are not as set up.
    HandicapMismatch { stones: u8, shown: &'a [Point], black: usize, white: usize },
    /// A game started from the board as found, which is empty (or holds move 1).
    StartFromEmpty,
    /// A game started from the board as found.
    StartAsFound { black: usize, white: usize, to_move: Color },
    /// The stone lifted from `from` was replayed at `to` (Art. 17.3).
    TakebackReplayed { side: Color, from: Point, to: Point },
    /// A move; `orders` when several move orders fit the change.
    Move { side: Color, point: Point, number: u32, orders: Option<u32> },
    /// A capture; `still` of the captured stones are still on the board.
    Capture { side: Color, captured: &'a [Point], still: usize },
    /// The first stone on an empty board is white (Art. 17.1).
    FirstStoneWhite { point: Point },
    /// The same side played twice in a row.
    DoubleMove { side: Color, point: Point, number: u32 },
    /// A whole-board position repeats (Art. 6).
    Repetition { point: Point, after_move: u32 },
    /// A cycle that cannot end (Art. 20.3).
    NoResult,
    /// A ko retaken at once: void.
    KoRetaken { side: Color, point: Point, number: u32 },
    /// A stone on a point without liberties: void.
    ForbiddenPoint { side: Color, point: Point, number: u32 },
    /// A stone on an occupied point.
    OccupiedPoint { point: Point },
    /// The arbiter adopted the board as seen.
    ArbiterAdoptedBoard,
    /// `added` stones appeared at once: moves were missed.
    MovesNotSeen { added: u32 },
    /// The arbiter corrected a move (`to` and `from`: a point or `pass`).
    Correction { side: Color, number: u32, to: &'a str, from: &'a str },
    /// A stone was lifted (and replayed at `to`) before the opponent moved (Art. 17.3).
    Takeback { side: Color, from: Point, to: Option<Point> },
    /// Stones missing, changed colour or moved.
    MovedStones { from: &'a [Point], to: &'a [Point] },
    /// Stones with liberties removed.
    WrongCapture { side: Color, points: &'a [Point] },
    /// Many points disturbed at once.
    Scattered { points: usize },
    /// Captured stones not removed.
    MissedCapture { side: Color, move_number: u32, points: &'a [Point], removed_some: bool, why: MissedWhy },
    /// The arbiter's decision on infraction `id`, which said `infraction`.
    Decision { id: u64, confirmed: bool, infraction: &'a Message, outcome: Outcome },
    /// A warning (Art. 24); the second loses the game.
    Warning { side: Color, second: bool },
    /// A pass.
    Pass { side: Color, number: u32 },
    /// Play is over.
    PlayOver { why: PlayOver },
    /// The dead stones marked.
    DeadStones { dead: &'a [Point] },
    /// Wrong colours (Art. 17.1): corrected up to move 10, the game stands after it.
    WrongColours { number: u32, corrected: bool },
    /// The result.
    Result { forms: &'a ResultForms },
}

/// Why a capture counts as missed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MissedWhy {
    /// The opponent has moved.
    OpponentMoved,
    /// The stones are still there after the grace time, in seconds.
    StillThere(f64),
}

/// What a decision changes beyond the verdict.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Outcome {
    /// Nothing more.
    Nothing,
    /// A double move confirmed: the second move is void.
    SecondMoveVoid,
    /// A double move dismissed: `side`'s unrecorded pass is entered.
    PassEntered(Color),
    /// A takeback confirmed: the stone goes back to this point.
    StoneBack(Point),
    /// Wrong colours confirmed (Art. 17.1).
    WrongColours { number: u32, corrected: bool },
}

/// Why play is over.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PlayOver {
    /// Both sides passed in succession (Art. 7.3).
    BothPassed,
    /// A side resigned (Art. 7.2).
    Resigned(Color),
    /// Both sides agree (Art. 7.1, 13).
    Agreed,
}

/// Points in people's notation, separated by spaces.
pub(crate) fn refs(points: &[Point]) -> String {
    points.iter().map(|p| p.human()).collect::<Vec<_>>().join(" ")
}

/// "1 stone", "5 stones".
fn count_en(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// "A stone" / "Stones" (or "The stone").
fn stones_en(points: &[Point], one: &'static str) -> &'static str {
    if points.len() == 1 {
        one
    } else {
        "Stones"
    }
}

/// A resignation's result in words: the exact form in English, the customary one in Chinese.
pub(crate) fn resignation(winner: Color) -> (String, String) {
    (format!("{} wins by resignation", winner.title()), format!("{}中盤勝", winner.chinese()))
}

/// A result in words in each language, with its record form (`RE`) beside it.
pub(crate) fn with_record_form(en: &str, zh: &str, re: &str) -> Message {
    Message::new(format!("{en} ({re})"), format!("{zh}（記譜：{re}）"))
}

/// A result as typed by the arbiter in the record's form (`B+R`, `W+T`, `B+F`, `W+3.5`, `0`,
/// `Draw`, `Void`), in words in each language; anything else is shown as typed.
pub fn result_message(re: &str) -> Message {
    let text = re.trim();
    let (en, zh) = match text.to_ascii_lowercase().as_str() {
        "0" | "draw" | "jigo" | "b+0" | "w+0" => ("Draw (jigo)".to_owned(), "和棋".to_owned()),
        "void" | "?" => ("No result".to_owned(), "無勝負".to_owned()),
        lower => {
            let winner = match lower.as_bytes().first() {
                Some(b'b') => Some(Color::Black),
                Some(b'w') => Some(Color::White),
                _ => None,
            };
            let how = lower.get(1..).and_then(|rest| rest.strip_prefix('+'));
            match (winner, how) {
                (Some(c), Some("r" | "resign")) => resignation(c),
                (Some(c), Some("t" | "time")) => {
                    (format!("{} wins on time", c.title()), format!("{}超時勝", c.chinese()))
                }
                (Some(c), Some("f" | "forfeit")) => {
                    (format!("{} wins by forfeit", c.title()), format!("{}勝（對方判負）", c.chinese()))
                }
                (Some(c), Some(points)) => match points.parse::<f64>() {
                    Ok(p) if p.is_finite() && p > 0.0 => {
                        // Points form: half a point is a quarter stone (Art. 11).
                        let margin = if c == Color::Black { p / 2.0 } else { -p / 2.0 };
                        let result = tengen_rules::GameResult {
                            winner: Some(c),
                            black_margin_stones: margin,
                            black_count: 0.0,
                            lost_by_warnings: None,
                        };
                        (result.exact(), result.customary())
                    }
                    _ => return Message::new(text, text),
                },
                _ => return Message::new(text, text),
            }
        }
    };
    with_record_form(&en, &zh, text)
}

/// Art. 17.1's ruling on wrong colours found at move `number`.
fn wrong_colours(number: u32, corrected: bool) -> (String, String) {
    if corrected {
        (
            format!("Wrong colours found at move {number}: to be corrected (allowed up to and including move 10, Art. 17.1). Restart the game with the organiser's colours (new game)."),
            format!("第{number}手時發現拿錯黑白棋：允許改正（第10手之前含第10手，第17條1款），請按賽會原定的黑白重新開始對局。"),
        )
    } else {
        (
            format!("Wrong colours found at move {number}: after move 10 the game stands as played (Art. 17.1). The record names who played which colour; later pairings follow the organiser's colours."),
            format!("第{number}手時發現拿錯黑白棋：超過10手，不予改正（第17條1款）；棋譜按實際執子記錄，此後的編排以賽會原定為依據。"),
        )
    }
}

impl Say<'_> {
    /// The words, in English and Chinese.
    #[allow(clippy::too_many_lines)]
    pub(crate) fn message(self) -> Message {
        let (en, zh) = match self {
            Say::Occluded { secs } => (
                format!("The board has been covered for {secs:.0} s: moves cannot be seen."),
                format!("棋盤已被遮擋{secs:.0}秒，無法看到著手。"),
            ),
            Say::BoardMoved { shift_cells: Some(s) } => (
                format!("The board or the camera moved ({s:.1} grid cells); readings restart from fresh frames."),
                format!("棋盤或攝像機移動了（{s:.1}格）；重新讀取。"),
            ),
            Say::BoardMoved { shift_cells: None } => (
                "The board or the camera moved; readings restart from fresh frames.".to_owned(),
                "棋盤或攝像機移動了；重新讀取。".to_owned(),
            ),
            Say::UnclearPoint { point } => (
                format!("{} cannot be read: a stone between points or off the grid is not a move (Art. 2). Place it on a point or remove it.", point.human()),
                format!("{}無法辨認：落在交叉點之間或棋盤外的棋子不算著手（第2條）。請放到點上或取走。", point.human()),
            ),
            Say::EvenStart => ("Even game: empty board, Black to move.".to_owned(), "對局開始：空枰，黑先。".to_owned()),
            Say::StonesAtEvenStart { black: b, white: w } => {
                let n = b + w;
                (
                    format!("{} on the board at the start of an even game ({b} black, {w} white): they are not moves. Clear the board, or adopt it as the start if the game goes on from it.", count_en(n, "stone", "stones")),
                    format!("對局開始時棋盤上已有{n}子（黑{b}、白{w}）：不算著手。請清空棋盤；若對局由此繼續，請以目前盤面為準。"),
                )
            }
            Say::HandicapStart { stones } => (
                format!("Handicap game: {stones} stones on the standard points, White to move."),
                format!("讓{stones}子局：黑子放在星位上，白先。"),
            ),
            Say::HandicapMismatch { stones, shown, black: b, white: w } => (
                format!("The board at the start does not show the {stones} handicap stones on the standard points ({}): {b} black and {w} white stones. Put them right, or adopt the board as the start if it was agreed.", refs(shown)),
                format!("開局盤面與讓{stones}子的星位（{}）不符：黑{b}子、白{w}子。請擺正；若雙方同意，則以目前盤面為準。", refs(shown)),
            ),
            Say::StartFromEmpty => ("Game start: empty board, Black to move.".to_owned(), "對局開始：空枰，黑先。".to_owned()),
            Say::StartAsFound { black: b, white: w, to_move } => (
                format!("Game start from the board as found: {b} black and {w} white stones, {} to move.", to_move.name()),
                format!("按盤面開始：黑{b}子、白{w}子，{}方先行。", to_move.chinese()),
            ),
            Say::TakebackReplayed { side, from, to } => {
                let (h, th) = (from.human(), to.human());
                (
                    format!("{} replayed the stone lifted from {h} at {th}: a takeback. The move is recorded at {th} unless the arbiter confirms (then the stone goes back to {h} and {} is warned).", side.title(), side.name()),
                    format!("{}將{h}拿起的棋子改下在{th}：悔棋。裁判確認前該手記為{th}；確認則棋子放回{h}並警告。", side.chinese()),
                )
            }
            Say::Move { side, point, number, orders } => {
                let human = point.human();
                match orders {
                    Some(orders) => (
                        format!("{} plays {human} (move {number}; {orders} orders fit this change).", side.title()),
                        format!("{}{human}（第{number}手；此變化有{orders}種次序）。", side.chinese()),
                    ),
                    None => (format!("{} plays {human} (move {number}).", side.title()), format!("第{number}手：{}{human}。", side.chinese())),
                }
            }
            Say::Capture { side, captured, still } => {
                let n = captured.len();
                if still == 0 {
                    (format!("{} captures {}: {}.", side.title(), count_en(n, "stone", "stones"), refs(captured)), format!("{}提{n}子：{}。", side.chinese(), refs(captured)))
                } else {
                    (
                        format!("{} captures {}: {}; {still} still on the board (pending removal).", side.title(), count_en(n, "stone", "stones"), refs(captured)),
                        format!("{}提{n}子：{}；尚有{still}子未提出。", side.chinese(), refs(captured)),
                    )
                }
            }
            Say::FirstStoneWhite { point } => {
                let human = point.human();
                (
                    format!("The first stone on the empty board is white ({human}): the players may hold the wrong colours."),
                    format!("空枰第一子為白子（{human}）：雙方可能拿錯黑白棋。"),
                )
            }
            Say::DoubleMove { side, point, number } => {
                let human = point.human();
                (
                    format!("{} played twice in a row ({human}, move {number}): a double move or an unrecorded pass by {}. The arbiter decides.", side.title(), side.opponent().name()),
                    format!("{}連下兩著（{human}，第{number}手）：連下兩著或{}方未記錄的虛著，由裁判裁決。", side.chinese(), side.opponent().chinese()),
                )
            }
            Say::Repetition { point, after_move } => {
                let human = point.human();
                (
                    format!("{human} repeats the whole-board position after move {after_move} (Art. 6)."),
                    format!("{human}造成全局同形再現（與第{after_move}手後相同，第6條）。"),
                )
            }
            Say::NoResult => (
                "The same position has come round three times: a cycle (triple ko, eternal life) that cannot end (Art. 20.3).".to_owned(),
                "同一局面第三次出現：三劫、長生等循環（第20條3款）。".to_owned(),
            ),
            Say::KoRetaken { side, point, number } => {
                let human = point.human();
                (
                    format!("{} retakes the ko at {human} at once, without a threat (move {number}): void, counts as a pass.", side.title()),
                    format!("{}在{human}立即回提劫（第{number}手），未找劫材：無效，棄權一次。", side.chinese()),
                )
            }
            Say::ForbiddenPoint { side, point, number } => {
                let human = point.human();
                (
                    format!("{} plays on the forbidden point {human} (no liberty, captures nothing; move {number}): void, counts as a pass.", side.title()),
                    format!("{}下在禁著點{human}（第{number}手）：無效，棄權一次。", side.chinese()),
                )
            }
            Say::OccupiedPoint { point } => {
                let human = point.human();
                (format!("A stone appeared on an occupied point {human}."), format!("{human}已有棋子，又出現一子。"))
            }
            Say::ArbiterAdoptedBoard => ("The arbiter set the legal position to the board as seen.".to_owned(), "裁判以目前盤面為準。".to_owned()),
            Say::MovesNotSeen { added } => (
                format!("{added} new stones at once: moves were not seen (missed frames). The board as seen is adopted as the position; the record lacks about {added} moves and the side to move is taken from the next move."),
                format!("同時出現{added}子：有著手未被看到。以目前盤面為準，記錄缺約{added}手，下一手決定輪到哪方。"),
            ),
            Say::Correction { side, number, to, from } => (
                format!("The arbiter corrected move {number}: {} {to} (was {from}).", side.title()),
                format!("裁判更正第{number}手：{}{to}（原記為{from}）。", side.chinese()),
            ),
            Say::Takeback { side, from, to: Some(to) } => {
                let (h, ph) = (from.human(), to.human());
                (
                    format!("{} lifted the stone at {h} and played it at {ph} before the opponent moved: a takeback. The move is recorded at {ph} unless the arbiter confirms (then the stone goes back to {h} and {} is warned).", side.title(), side.name()),
                    format!("{}將{h}的棋子拿起改下在{ph}：悔棋。裁判確認前該手記為{ph}；確認則棋子放回{h}並警告。", side.chinese()),
                )
            }
            Say::Takeback { side, from, to: None } => {
                let h = from.human();
                (format!("{} lifted the stone just played at {h}: a takeback.", side.title()), format!("{}拿起剛下的{h}棋子：悔棋。", side.chinese()))
            }
            Say::MovedStones { from, to } => {
                if to.is_empty() {
                    (format!("{} missing from {} without a capture: moved or removed.", stones_en(from, "A stone"), refs(from)), format!("{}的棋子未經提取而消失：被移動或拿走。", refs(from)))
                } else if from == to {
                    (format!("{} at {} changed colour.", stones_en(from, "The stone"), refs(from)), format!("{}的棋子顏色改變。", refs(from)))
                } else {
                    (format!("{} moved from {} to {}.", stones_en(from, "A stone"), refs(from), refs(to)), format!("棋子從{}移到{}。", refs(from), refs(to)))
                }
            }
            Say::WrongCapture { side, points } => (
                format!("{} removed stones that still have liberties: {}.", side.title(), refs(points)),
                format!("{}誤提有氣之子：{}。", side.chinese(), refs(points)),
            ),
            Say::Scattered { points: n } => (
                format!("{n} points disturbed at once: the board is scattered. Restore it from the record (list attached)."),
                format!("{n}處棋子同時被擾亂：棋局散亂，請按記錄復盤（附清單）。"),
            ),
            Say::MissedCapture { side, move_number, points, removed_some, why } => {
                let partly = if removed_some { "only partly removed" } else { "not removed" };
                let (stones, are) = if points.len() == 1 { ("the stone", "is") } else { ("the stones", "are") };
                let why = match why {
                    MissedWhy::OpponentMoved => "the opponent has moved".to_owned(),
                    MissedWhy::StillThere(secs) => format!("still there after {secs:.0} s"),
                };
                (
                    format!("{} captured at move {move_number} but {stones} {} {are} {partly} ({why}).", side.title(), refs(points)),
                    format!("{}第{move_number}手提子，但{}{}。", side.chinese(), refs(points), if removed_some { "漏提" } else { "未提" }),
                )
            }
            Say::Decision { id, confirmed, infraction, outcome } => {
                let verdict = if confirmed { ("confirmed", "確認") } else { ("dismissed", "駁回") };
                let (note_en, note_zh) = match outcome {
                    Outcome::Nothing => (String::new(), String::new()),
                    Outcome::SecondMoveVoid => (" The second move is void: remove the stone.".to_owned(), "第二著無效，請取走該子。".to_owned()),
                    Outcome::PassEntered(side) => (
                        format!(" An unrecorded pass by {} is entered before the move.", side.name()),
                        format!("記錄{}方虛著一次。", side.chinese()),
                    ),
                    Outcome::StoneBack(point) => (format!(" The stone goes back to {}.", point.human()), format!("棋子放回{}。", point.human())),
                    Outcome::WrongColours { number, corrected } => {
                        let (en, zh) = wrong_colours(number, corrected);
                        (format!(" {en}"), zh)
                    }
                };
                (
                    format!("Arbiter {} infraction {id}: {}{note_en}", verdict.0, infraction.en),
                    format!("裁判{}第{id}號違規：{}{note_zh}", verdict.1, infraction.zh),
                )
            }
            Say::Warning { side, second: true } => (
                format!("Second warning for {}: the game is lost (Art. 24.2).", side.name()),
                format!("{}方第二次警告，判負（第24條2款）。", side.chinese()),
            ),
            Say::Warning { side, second: false } => (
                format!("Warning for {}: one stone is deducted at counting (Art. 24.1).", side.name()),
                format!("{}方警告一次，計算勝負時罰出一子（第24條1款）。", side.chinese()),
            ),
            Say::Pass { side, number } => (format!("{} passes (move {number}).", side.title()), format!("第{number}手：{}虛著。", side.chinese())),
            Say::PlayOver { why } => {
                let (en, zh) = match why {
                    PlayOver::BothPassed => ("Both sides passed in succession (Art. 7.3).".to_owned(), "雙方連續使用虛著（第7條3款）。".to_owned()),
                    PlayOver::Resigned(loser) => (format!("{} resigns (Art. 7.2).", loser.title()), format!("{}方認輸（第7條2款）。", loser.chinese())),
                    PlayOver::Agreed => ("Both sides agree that play is finished (Art. 7.1, 13).".to_owned(), "雙方確認著子完畢（第7條1款、第13條）。".to_owned()),
                };
                (
                    format!("Play is over. {en} Mark the dead stones (a suggestion is attached) and count."),
                    format!("終局。{zh}請確認死子（附建議）並計算勝負。"),
                )
            }
            Say::DeadStones { dead } => (
                format!("Dead stones: {}.", if dead.is_empty() { "none".to_string() } else { refs(dead) }),
                format!("死子：{}。", if dead.is_empty() { "無".to_string() } else { refs(dead) }),
            ),
            Say::WrongColours { number, corrected } => wrong_colours(number, corrected),
            Say::Result { forms } => (format!("Result: {} ({}).", forms.exact, forms.points), format!("結果：{}。", forms.customary)),
        };
        Message::new(en, zh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_said_in_each_language() {
        let m = result_message("W+R");
        assert_eq!((m.en.as_str(), m.zh.as_str()), ("White wins by resignation (W+R)", "白中盤勝（記譜：W+R）"));
        // Simplified (written with escapes: this file's Chinese is the Traditional the table converts).
        assert_eq!(m.zh_hans, "白中\u{76d8}\u{80dc}（\u{8bb0}\u{8c31}：W+R）");
        let m = result_message("B+1.5");
        assert_eq!((m.en.as_str(), m.zh.as_str()), ("Black wins by ¾ stone (B+1.5)", "黑勝1/2子（記譜：B+1.5）"));
        assert_eq!(result_message("Draw").zh, "和棋（記譜：Draw）");
        assert_eq!(result_message("Void").en, "No result (Void)");
        // Anything else is shown as typed.
        assert_eq!(result_message("B+lots").en, "B+lots");
        assert_eq!(result_message(" ").en, "");
    }
}
