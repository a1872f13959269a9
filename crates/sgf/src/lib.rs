//! Game records for Tengen: a lenient SGF FF[4] reader for what real files contain (legacy
//! encodings, `CA` anywhere in the root, Fox komi, `tt` passes, compressed point lists, main lines
//! nested hundreds deep), a writer that round-trips, and a replay of a record under Chinese
//! practice that reports illegal moves, repetitions, no-result cycles and broken alternation.
//!
//! Reading goes bytes → [`tree::RawCollection`] (tokenised on bytes, values undecoded) →
//! [`Collection`] (values decoded once the encoding is known) → [`GameRecord`] (the main line,
//! typed with `tengen-rules` points and colours).

pub mod check;
pub mod encoding;
pub mod record;
pub mod tree;
pub mod write;

pub use check::{check_bytes, check_game, CheckReport, FileCheck, Finding, FindingKind};
pub use encoding::{ChosenEncoding, EncodingSource};
pub use record::{GameInfo, GameRecord, RecordedMove, MAX_MOVES};
pub use write::write_game;

use tengen_rules::{Point, SetupError};

/// Why a file or a game in it cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SgfError {
    /// The bytes are not an SGF collection at all.
    #[error("not an SGF file: {reason}")]
    NotSgf {
        /// What is missing.
        reason: String,
    },
    /// The SGF grammar is broken in a way a lenient reader cannot repair.
    #[error("SGF syntax error at byte {offset}: {reason}")]
    Syntax {
        /// Byte offset in the file (after any byte-order mark).
        offset: usize,
        /// What is wrong.
        reason: String,
    },
    /// `CA` names an encoding this reader does not know.
    #[error("unsupported encoding CA[{label}]")]
    UnsupportedEncoding {
        /// The label as written.
        label: String,
    },
    /// The game trees of one file declare different encodings; one file has one encoding.
    #[error("game trees in one file declare different encodings: CA[{first}] and CA[{second}]")]
    MixedEncodings {
        /// The first label.
        first: String,
        /// The first label that disagrees with it.
        second: String,
    },
    /// `SZ` cannot be read or is outside what the rules core supports (1–19 a side).
    #[error("unsupported board size SZ[{value}] (1 to 19 on each side)")]
    BoardSize {
        /// The value as written.
        value: String,
    },
    /// A point or move value is not a point of this board.
    #[error("{property}[{value}] in node {node} is not a point of a {width}x{height} board")]
    BadPoint {
        /// Property identifier.
        property: String,
        /// The value as written.
        value: String,
        /// Node number in the main line (0 = root).
        node: usize,
        /// Board width.
        width: u8,
        /// Board height.
        height: u8,
    },
    /// Setup (`AB`, `AW`, `AE`, `PL`) after the first move of the main line.
    #[error("setup property {property} in node {node}, after move {after_move}: setup belongs before the first move")]
    SetupAfterFirstMove {
        /// Property identifier.
        property: String,
        /// Node number in the main line.
        node: usize,
        /// How many moves came before it.
        after_move: usize,
    },
    /// `HA` (handicap) after setup stones were already placed in an earlier node.
    #[error("HA (handicap) in node {node} after setup stones in an earlier node: handicap stones come first")]
    HandicapAfterSetup {
        /// Node number in the main line.
        node: usize,
    },
    /// The setup position cannot stand (a chain without liberties, Art. 3).
    #[error("illegal setup: {}", describe_setup_error(cause, point, sgf))]
    IllegalSetup {
        /// Human coordinate of a point of the offending chain.
        point: String,
        /// SGF coordinate of that point.
        sgf: String,
        /// The rules core's verdict.
        cause: SetupError,
    },
    /// More moves in the main line than [`MAX_MOVES`].
    #[error("{moves} moves in the main line: more than the {max} a record may hold")]
    TooManyMoves {
        /// Moves in the main line.
        moves: usize,
        /// The limit.
        max: usize,
    },
}

impl SgfError {
    /// The error for a setup chain without liberties, with both coordinate notations.
    pub(crate) fn illegal_setup(point: Point, height: u8, cause: SetupError) -> Self {
        SgfError::IllegalSetup { point: point.to_human(height), sgf: point.to_sgf(), cause }
    }
}

fn describe_setup_error(cause: &SetupError, point: &str, sgf: &str) -> String {
    match cause {
        SetupError::NoLiberties { .. } => {
            format!("the chain at {point} (SGF {sgf}) has no liberties; it could not stand on a board (Art. 3)")
        }
        SetupError::OffBoard { .. } => format!("point {sgf} is outside the board"),
        other => other.to_string(),
    }
}

/// A view of one decoded property.
#[derive(Debug, Clone, Copy)]
pub struct Property<'a> {
    coll: &'a Collection,
    slot: tree::PropSlot,
}

impl<'a> Property<'a> {
    /// Identifier, upper case.
    pub fn ident(&self) -> &'a str {
        std::str::from_utf8(self.coll.raw.ident(&self.slot)).unwrap_or("")
    }

    /// Values decoded to text (escapes resolved).
    pub fn values(&self) -> impl Iterator<Item = &'a str> + 'a {
        let coll = self.coll;
        let first = self.slot.first_value as usize;
        (first..first + self.slot.value_count as usize).map(move |i| coll.text_of(i))
    }

    /// The first value.
    pub fn first(&self) -> Option<&'a str> {
        self.values().next()
    }
}

/// A view of one decoded node.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    coll: &'a Collection,
    id: tree::NodeId,
}

impl<'a> Node<'a> {
    /// Properties in file order.
    pub fn props(&self) -> impl Iterator<Item = Property<'a>> + 'a {
        let coll = self.coll;
        coll.raw.props_of(self.id).iter().map(move |&slot| Property { coll, slot })
    }

    /// The first value of the first property with this identifier.
    pub fn value(&self, ident: &str) -> Option<&'a str> {
        self.props().find(|p| p.ident() == ident).and_then(|p| p.first())
    }

    /// Children in file order; the first continues the main line.
    pub fn children(&self) -> impl Iterator<Item = tree::NodeId> + 'a {
        self.coll.raw.children(self.id)
    }
}

/// Every game tree of a file, decoded.
#[derive(Debug, Clone)]
pub struct Collection {
    raw: tree::RawCollection,
    /// Decoded values, concatenated; `spans[i]` is value `i` of `raw`.
    text: String,
    spans: Vec<tree::Span>,
    /// The encoding values were decoded with, and why.
    pub encoding: ChosenEncoding,
    /// Recoverable oddities: junk skipped, bytes replaced while decoding, a `CA` overridden.
    pub warnings: Vec<String>,
}

impl Collection {
    /// Root of each game tree, in file order.
    pub fn roots(&self) -> &[tree::NodeId] {
        &self.raw.roots
    }

    /// Number of nodes in all trees.
    pub fn node_count(&self) -> usize {
        self.raw.nodes.len()
    }

    /// A node by id.
    pub fn node(&self, id: tree::NodeId) -> Node<'_> {
        Node { coll: self, id }
    }

    /// Node ids of the main line of game `root`.
    pub fn main_line(&self, root: tree::NodeId) -> Vec<tree::NodeId> {
        self.raw.main_line(root)
    }

    fn text_of(&self, value: usize) -> &str {
        let span = self.spans[value];
        self.text.get(span.start as usize..span.end as usize).unwrap_or("")
    }

    /// Every game of the file as a typed record (each may fail on its own).
    pub fn games(&self) -> Vec<Result<GameRecord, SgfError>> {
        self.raw.roots.iter().map(|&root| GameRecord::from_collection(self, root)).collect()
    }
}

/// Reads a whole file: byte-order mark, tokenising, encoding choice, decoding.
pub fn read_collection(bytes: &[u8]) -> Result<Collection, SgfError> {
    let (body, bom) = encoding::strip_bom(bytes);
    let body: &[u8] = &body;
    let raw = tree::parse_raw(body, tree::LeadBytes::None)?;

    // Declared encodings: CA in each root node (one file, one encoding).
    let mut declared: Option<(&'static encoding_rs::Encoding, String)> = None;
    for &root in &raw.roots {
        let Some(value) = raw.first_value(root, "CA") else { continue };
        let label = String::from_utf8_lossy(value).trim().to_string();
        let enc = encoding::for_label(&label).ok_or_else(|| SgfError::UnsupportedEncoding { label: label.clone() })?;
        match &declared {
            None => declared = Some((enc, label)),
            Some((first, first_label)) if *first != enc => {
                return Err(SgfError::MixedEncodings { first: first_label.clone(), second: label });
            }
            Some(_) => {}
        }
    }
    let chosen = if bom {
        ChosenEncoding { encoding: encoding_rs::UTF_8, source: EncodingSource::ByteOrderMark }
    } else {
        let declared_enc = declared.as_ref().map(|(e, _)| *e);
        // A UTF-16 label without a byte-order mark cannot be tokenised as bytes; read as UTF-8.
        let declared_enc = declared_enc.filter(|e| *e != encoding_rs::UTF_16LE && *e != encoding_rs::UTF_16BE);
        encoding::choose(body, declared_enc)
    };
    let mut warnings = raw.warnings.clone();
    if chosen.source == EncodingSource::DeclaredButUtf8 {
        if let Some((_, label)) = &declared {
            warnings.push(format!("CA[{label}] declared but the file is valid UTF-8: read as UTF-8"));
        }
    }
    // Two-byte encodings whose second byte can be `\` or `]` must be tokenised again, pairing bytes.
    let lead = encoding::lead_bytes(chosen.encoding);
    let raw = if lead == tree::LeadBytes::None { raw } else { tree::parse_raw(body, lead)? };

    // Decode. The common case, UTF-8 throughout, is one copy of the buffer with the same spans.
    let (text, spans, replaced) = if chosen.encoding == encoding_rs::UTF_8 && std::str::from_utf8(&raw.bytes).is_ok() {
        (String::from_utf8_lossy(&raw.bytes).into_owned(), raw.values.clone(), 0usize)
    } else {
        let mut text = String::with_capacity(raw.bytes.len() + raw.bytes.len() / 2);
        let mut spans = Vec::with_capacity(raw.values.len());
        let mut replaced = 0usize;
        for i in 0..raw.values.len() {
            let start = text.len();
            replaced += usize::from(encoding::decode_value_into(raw.value_bytes(i), chosen.encoding, &mut text));
            spans.push(tree::Span { start: start as u32, end: text.len() as u32 });
        }
        (text, spans, replaced)
    };
    if replaced > 0 {
        warnings.push(format!(
            "{replaced} value(s) not valid {}: undecodable bytes replaced by U+FFFD",
            chosen.encoding.name()
        ));
    }
    Ok(Collection { raw, text, spans, encoding: chosen, warnings })
}

/// Reads the first game of a file.
pub fn read_game(bytes: &[u8]) -> Result<GameRecord, SgfError> {
    let coll = read_collection(bytes)?;
    let root = *coll.roots().first().ok_or_else(|| SgfError::NotSgf { reason: "no game tree".into() })?;
    GameRecord::from_collection(&coll, root)
}
