//! Byte-level SGF tokeniser and collection tree: iterative (no recursion, so a main line written
//! as hundreds of nested variations cannot overflow the stack), lenient about junk between nodes.
//!
//! Values are kept as raw bytes (escapes resolved) until the encoding of the file is known:
//! `CA` may come after the values it governs, so decoding happens once the whole file is read.

use crate::SgfError;

/// Index of a node in a [`RawCollection`].
pub type NodeId = usize;

/// "No node" in the child and sibling links.
const NO_NODE: u32 = u32::MAX;

/// A byte range `[start, end)` in a collection's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One property: its identifier and a run of values in the collection's value list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropSlot {
    /// Identifier (upper-case letters only; the lower case of old FF[3] names is dropped).
    pub ident: Span,
    /// Index of the first value in [`RawCollection::values`].
    pub first_value: u32,
    /// Number of values.
    pub value_count: u32,
}

/// One node: a run of properties and links to its children (first child = main line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeSlot {
    /// Index of the first property in [`RawCollection::props`].
    pub first_prop: u32,
    /// Number of properties.
    pub prop_count: u32,
    first_child: u32,
    last_child: u32,
    next_sibling: u32,
}

impl NodeSlot {
    fn new(first_prop: usize) -> Self {
        NodeSlot {
            first_prop: first_prop as u32,
            prop_count: 0,
            first_child: NO_NODE,
            last_child: NO_NODE,
            next_sibling: NO_NODE,
        }
    }
}

/// Every game tree of one file in flat arrays (no allocation per node, property or value):
/// identifiers and unescaped values live in one byte buffer, still in the file's encoding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawCollection {
    /// Identifiers and values (escapes resolved), concatenated.
    pub bytes: Vec<u8>,
    /// Every value, as a span of `bytes`.
    pub values: Vec<Span>,
    /// Every property, nodes' runs in order.
    pub props: Vec<PropSlot>,
    /// Every node.
    pub nodes: Vec<NodeSlot>,
    /// Root node of each game tree, in file order.
    pub roots: Vec<NodeId>,
    /// Recoverable oddities met while reading (junk bytes, unclosed trees...).
    pub warnings: Vec<String>,
}

impl RawCollection {
    /// The children of a node, in file order.
    pub fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let mut next = self.nodes.get(id).map_or(NO_NODE, |n| n.first_child);
        std::iter::from_fn(move || {
            if next == NO_NODE {
                return None;
            }
            let here = next as usize;
            next = self.nodes[here].next_sibling;
            Some(here)
        })
    }

    /// The main line of the game tree rooted at `root`: root, first child, its first child...
    pub fn main_line(&self, root: NodeId) -> Vec<NodeId> {
        let mut line = vec![root];
        let mut at = root;
        while let Some(next) = self.nodes.get(at).map(|n| n.first_child).filter(|&c| c != NO_NODE) {
            line.push(next as usize);
            at = next as usize;
        }
        line
    }

    /// The properties of a node.
    pub fn props_of(&self, id: NodeId) -> &[PropSlot] {
        let n = &self.nodes[id];
        &self.props[n.first_prop as usize..(n.first_prop + n.prop_count) as usize]
    }

    /// The identifier of a property.
    pub fn ident(&self, prop: &PropSlot) -> &[u8] {
        &self.bytes[prop.ident.range()]
    }

    /// The raw bytes of value `index`.
    pub fn value_bytes(&self, index: usize) -> &[u8] {
        &self.bytes[self.values[index].range()]
    }

    /// The first raw value of the first property `ident` of a node.
    pub fn first_value(&self, id: NodeId, ident: &str) -> Option<&[u8]> {
        self.props_of(id)
            .iter()
            .find(|p| self.ident(p) == ident.as_bytes() && p.value_count > 0)
            .map(|p| self.value_bytes(p.first_value as usize))
    }

    fn new_node(&mut self, parent: Option<NodeId>) -> NodeId {
        let id = self.nodes.len();
        self.nodes.push(NodeSlot::new(self.props.len()));
        match parent {
            Some(p) => {
                let last = self.nodes[p].last_child;
                if last == NO_NODE {
                    self.nodes[p].first_child = id as u32;
                } else {
                    self.nodes[last as usize].next_sibling = id as u32;
                }
                self.nodes[p].last_child = id as u32;
            }
            None => self.roots.push(id),
        }
        id
    }
}

/// Which bytes start a two-byte character whose second byte may be `\` or `]`: inside a value such
/// a pair must be taken whole, or a Shift_JIS "ソ" (0x83 0x5C) would be read as an escape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeadBytes {
    /// Single-byte or ASCII-safe encodings (UTF-8, EUC-*, Latin-1): no pairing.
    None,
    /// Shift_JIS: leads 0x81–0x9F and 0xE0–0xFC.
    ShiftJis,
    /// GBK / GB18030 / Big5 / UHC: leads 0x81–0xFE.
    HighHalf,
}

impl LeadBytes {
    fn is_lead(self, b: u8) -> bool {
        match self {
            LeadBytes::None => false,
            LeadBytes::ShiftJis => matches!(b, 0x81..=0x9F | 0xE0..=0xFC),
            LeadBytes::HighHalf => matches!(b, 0x81..=0xFE),
        }
    }
}

/// Parses the bytes of a whole file (already transcoded to an ASCII-compatible encoding).
pub fn parse_raw(bytes: &[u8], lead: LeadBytes) -> Result<RawCollection, SgfError> {
    let mut coll = RawCollection::default();
    // Stack of "node a new variation hangs from" for each open '('; None at the top of a game tree.
    let mut open: Vec<Option<NodeId>> = Vec::new();
    // Last node of the sequence being read in the innermost open tree.
    let mut current: Option<NodeId> = None;
    let mut junk_reported = false;
    let len = bytes.len();

    // Anything before the first '(' is ignored (mail headers, BOMs of other files...).
    let mut i = match bytes.iter().position(|&b| b == b'(') {
        Some(p) => p,
        None => return Err(SgfError::NotSgf { reason: "no '(' found".into() }),
    };
    while i < len {
        let b = bytes[i];
        match b {
            b'(' => {
                open.push(current);
                i += 1;
            }
            b')' => {
                match open.pop() {
                    Some(parent) => current = parent,
                    None => {
                        if !junk_reported {
                            coll.warnings.push(format!("unmatched ')' at byte {i} ignored"));
                            junk_reported = true;
                        }
                    }
                }
                i += 1;
                if open.is_empty() {
                    current = None;
                }
            }
            b';' => {
                if open.is_empty() {
                    // A node outside any tree: lenient readers skip it.
                    if !junk_reported {
                        coll.warnings.push(format!("node outside a game tree at byte {i} ignored"));
                        junk_reported = true;
                    }
                    i += 1;
                    // Skip to the next '('.
                    while i < len && bytes[i] != b'(' {
                        i += 1;
                    }
                    continue;
                }
                current = Some(coll.new_node(current));
                i += 1;
            }
            b'A'..=b'Z' | b'a'..=b'z' => {
                let start = i;
                let ident_start = coll.bytes.len();
                while i < len && bytes[i].is_ascii_alphabetic() {
                    if bytes[i].is_ascii_uppercase() {
                        coll.bytes.push(bytes[i]);
                    }
                    i += 1;
                }
                let ident = Span { start: ident_start as u32, end: coll.bytes.len() as u32 };
                while i < len && bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                let values_start = coll.values.len();
                while i < len && bytes[i] == b'[' {
                    let value_start = coll.bytes.len();
                    i = read_value(bytes, i + 1, lead, &mut coll.bytes)?;
                    coll.values.push(Span { start: value_start as u32, end: coll.bytes.len() as u32 });
                    while i < len && bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                }
                let value_count = coll.values.len() - values_start;
                let drop_property = |coll: &mut RawCollection| {
                    coll.values.truncate(values_start);
                    coll.bytes.truncate(ident_start);
                };
                if value_count == 0 {
                    // Letters without a value: junk (old editors, stray text). Skip them.
                    drop_property(&mut coll);
                    if !open.is_empty() && !junk_reported {
                        coll.warnings.push(format!("text without a value at byte {start} ignored"));
                        junk_reported = true;
                    }
                    continue;
                }
                if open.is_empty() {
                    drop_property(&mut coll);
                    continue; // text between game trees
                }
                if ident.start == ident.end {
                    drop_property(&mut coll);
                    if !junk_reported {
                        coll.warnings.push(format!("value without an upper-case identifier at byte {start} ignored"));
                        junk_reported = true;
                    }
                    continue;
                }
                let node = match current {
                    Some(node) => node,
                    None => {
                        // `(` followed by properties without `;`: some editors omit the first
                        // semicolon. Open the node they obviously belong to.
                        coll.warnings.push(format!("property at byte {start} before the first ';': node opened"));
                        let id = coll.new_node(None);
                        current = Some(id);
                        id
                    }
                };
                if node + 1 != coll.nodes.len() {
                    // After ')' only '(' or ')' may follow; a property there belongs to no node.
                    drop_property(&mut coll);
                    if !junk_reported {
                        coll.warnings.push(format!("property after ')' at byte {start} ignored"));
                        junk_reported = true;
                    }
                    continue;
                }
                coll.props.push(PropSlot { ident, first_value: values_start as u32, value_count: value_count as u32 });
                coll.nodes[node].prop_count += 1;
            }
            _ if b.is_ascii_whitespace() => i += 1,
            _ => {
                if !open.is_empty() && !junk_reported {
                    coll.warnings.push(format!("unexpected byte 0x{b:02x} at {i} ignored"));
                    junk_reported = true;
                }
                i += 1;
            }
        }
    }
    if !open.is_empty() {
        coll.warnings.push(format!("file ends inside {} unclosed game tree(s)", open.len()));
    }
    if coll.roots.is_empty() {
        return Err(SgfError::NotSgf { reason: "no game tree with a node".into() });
    }
    Ok(coll)
}

/// Whether a `]` whose next byte is `next` really closes a value: what follows must be SGF
/// (another value, a node, a variation, its end, or a property identifier with a value). An
/// unescaped `]` inside a comment ("the move W[fe] is illegal") is followed by prose instead.
fn closes_value(bytes: &[u8], next: usize) -> bool {
    let mut i = next;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let Some(&b) = bytes.get(i) else { return true };
    match b {
        b'[' | b';' | b'(' | b')' => true,
        b'A'..=b'Z' | b'a'..=b'z' => {
            let mut has_upper = false;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                has_upper |= bytes[i].is_ascii_uppercase();
                i += 1;
            }
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            has_upper && bytes.get(i) == Some(&b'[')
        }
        _ => false,
    }
}

/// Reads one value starting just after '[' into `out`; returns the index after ']'.
fn read_value(bytes: &[u8], i: usize, lead: LeadBytes, out: &mut Vec<u8>) -> Result<usize, SgfError> {
    // Lenient about unescaped `]` first; if that runs to the end of the file, the strict reading
    // (first unescaped `]` closes) is the better guess.
    let mark = out.len();
    read_value_with(bytes, i, lead, true, out).or_else(|_| {
        out.truncate(mark);
        read_value_with(bytes, i, lead, false, out)
    })
}

/// Appends the value starting just after '[' to `out`; returns the index after its ']'.
fn read_value_with(
    bytes: &[u8],
    mut i: usize,
    lead: LeadBytes,
    lenient: bool,
    out: &mut Vec<u8>,
) -> Result<usize, SgfError> {
    let start = i.saturating_sub(1);
    let len = bytes.len();
    while i < len {
        let b = bytes[i];
        if lead.is_lead(b) && i + 1 < len {
            out.push(b);
            out.push(bytes[i + 1]);
            i += 2;
            continue;
        }
        match b {
            b']' if !lenient || closes_value(bytes, i + 1) => return Ok(i + 1),
            b'\\' => {
                i += 1;
                if i >= len {
                    break;
                }
                // Soft line break: backslash + newline (any of \n, \r, \r\n, \n\r) vanishes.
                match bytes[i] {
                    b'\n' | b'\r' => {
                        let first = bytes[i];
                        i += 1;
                        if i < len && (bytes[i] == b'\n' || bytes[i] == b'\r') && bytes[i] != first {
                            i += 1;
                        }
                    }
                    other => {
                        if lead.is_lead(other) && i + 1 < len {
                            out.push(other);
                            out.push(bytes[i + 1]);
                            i += 2;
                        } else {
                            out.push(other);
                            i += 1;
                        }
                    }
                }
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    Err(SgfError::Syntax { offset: start, reason: "value not closed by ']' before the end of the file".into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_main_line_is_followed() -> Result<(), SgfError> {
        let mut s = String::from("(;SZ[9]");
        for k in 0..5000 {
            s.push_str(if k % 2 == 0 { "(;B[aa]" } else { "(;W[bb]" });
        }
        for _ in 0..5000 {
            s.push(')');
        }
        s.push(')');
        let c = parse_raw(s.as_bytes(), LeadBytes::None)?;
        assert_eq!(c.roots.len(), 1);
        assert_eq!(c.main_line(c.roots[0]).len(), 5001);
        Ok(())
    }

    #[test]
    fn escapes_and_soft_breaks() -> Result<(), SgfError> {
        let c = parse_raw(b"(;C[a\\]b\\\\c\\\nd])", LeadBytes::None)?;
        assert_eq!(c.value_bytes(0), b"a]b\\cd");
        Ok(())
    }

    #[test]
    fn shift_jis_trail_backslash_is_not_an_escape() -> Result<(), SgfError> {
        // "ソ" in Shift_JIS is 0x83 0x5C.
        let c = parse_raw(b"(;PB[\x83\x5C]PW[x])", LeadBytes::ShiftJis)?;
        assert_eq!(c.first_value(0, "PB"), Some(&[0x83u8, 0x5C][..]));
        assert_eq!(c.first_value(0, "PW"), Some(&b"x"[..]));
        Ok(())
    }

    #[test]
    fn variations_and_multiple_trees() -> Result<(), SgfError> {
        let c = parse_raw(b"(;A[1](;B[aa];W[bb])(;B[cc]))(;B[dd])", LeadBytes::None)?;
        assert_eq!(c.roots.len(), 2);
        assert_eq!(c.main_line(c.roots[0]).len(), 3);
        assert_eq!(c.children(0).count(), 2);
        Ok(())
    }

    #[test]
    fn unescaped_bracket_in_prose_stays_in_the_comment() -> Result<(), SgfError> {
        let c = parse_raw(b"(;C[the move W[fe] is illegal]AB[aa];B[bb])", LeadBytes::None)?;
        assert_eq!(c.first_value(0, "C"), Some(&b"the move W[fe] is illegal"[..]));
        assert_eq!(c.ident(&c.props_of(0)[1]), b"AB");
        Ok(())
    }

    #[test]
    fn properties_before_the_first_semicolon_open_a_node() -> Result<(), SgfError> {
        let c = parse_raw(b"(\r\nPB[x]\r\n;B[pd])", LeadBytes::None)?;
        assert_eq!(c.ident(&c.props_of(0)[0]), b"PB");
        assert_eq!(c.main_line(c.roots[0]).len(), 2);
        Ok(())
    }

    #[test]
    fn rejects() {
        assert!(matches!(parse_raw(b"this is not an .sgf file", LeadBytes::None), Err(SgfError::NotSgf { .. })));
        assert!(matches!(parse_raw(b"(;C[abc", LeadBytes::None), Err(SgfError::Syntax { .. })));
        assert!(matches!(parse_raw(b"()", LeadBytes::None), Err(SgfError::NotSgf { .. })));
    }
}
