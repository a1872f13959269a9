//! Byte-level SGF tokeniser and collection tree: iterative (no recursion, so a main line written
//! as hundreds of nested variations cannot overflow the stack), lenient about junk between nodes.
//!
//! Values are kept as raw bytes (escapes resolved) until the encoding of the file is known:
//! `CA` may come after the values it governs, so decoding happens once the whole file is read.

use crate::SgfError;

/// Index of a node in a [`RawCollection`].
pub type NodeId = usize;

/// One property as read from the file: identifier and raw (undecoded, unescaped) values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawProperty {
    /// Identifier in upper case (lower-case letters of old FF[3] identifiers are dropped).
    pub ident: String,
    /// Values with `\` escapes and soft line breaks resolved, still in the file's encoding.
    pub values: Vec<Vec<u8>>,
}

/// One node: properties in file order and children in file order (first child = main line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawNode {
    /// Properties in file order.
    pub props: Vec<RawProperty>,
    /// Children in file order; the first child continues the main line.
    pub children: Vec<NodeId>,
}

impl RawNode {
    /// The first property with this identifier.
    pub fn get(&self, ident: &str) -> Option<&RawProperty> {
        self.props.iter().find(|p| p.ident == ident)
    }
}

/// Every game tree of one file, in one arena of nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawCollection {
    /// All nodes; children refer to them by index.
    pub nodes: Vec<RawNode>,
    /// Root node of each game tree, in file order.
    pub roots: Vec<NodeId>,
    /// Recoverable oddities met while reading (junk bytes, unclosed trees...).
    pub warnings: Vec<String>,
}

impl RawCollection {
    /// The main line of the game tree rooted at `root`: root, first child, its first child...
    pub fn main_line(&self, root: NodeId) -> Vec<NodeId> {
        let mut line = vec![root];
        let mut at = root;
        while let Some(&next) = self.nodes.get(at).and_then(|n| n.children.first()) {
            line.push(next);
            at = next;
        }
        line
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
                let id = coll.nodes.len();
                coll.nodes.push(RawNode::default());
                match current {
                    Some(parent) => coll.nodes[parent].children.push(id),
                    None => coll.roots.push(id),
                }
                current = Some(id);
                i += 1;
            }
            b'A'..=b'Z' | b'a'..=b'z' => {
                let start = i;
                let mut ident = String::new();
                while i < len && bytes[i].is_ascii_alphabetic() {
                    if bytes[i].is_ascii_uppercase() {
                        ident.push(bytes[i] as char);
                    }
                    i += 1;
                }
                while i < len && bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                if i >= len || bytes[i] != b'[' {
                    // Letters without a value: junk (old editors, stray text). Skip them.
                    if !open.is_empty() && !junk_reported {
                        coll.warnings.push(format!("text without a value at byte {start} ignored"));
                        junk_reported = true;
                    }
                    continue;
                }
                let mut values = Vec::new();
                while i < len && bytes[i] == b'[' {
                    let (value, next) = read_value(bytes, i + 1, lead)?;
                    values.push(value);
                    i = next;
                    while i < len && bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                }
                if open.is_empty() {
                    continue; // text between game trees
                }
                if ident.is_empty() {
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
                        coll.warnings.push(format!("property {ident} at byte {start} before the first ';': node opened"));
                        let id = coll.nodes.len();
                        coll.nodes.push(RawNode::default());
                        coll.roots.push(id);
                        current = Some(id);
                        id
                    }
                };
                coll.nodes[node].props.push(RawProperty { ident, values });
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

/// Reads one value starting just after '['; returns the value and the index after ']'.
fn read_value(bytes: &[u8], i: usize, lead: LeadBytes) -> Result<(Vec<u8>, usize), SgfError> {
    // Lenient about unescaped `]` first; if that runs to the end of the file, the strict reading
    // (first unescaped `]` closes) is the better guess.
    read_value_with(bytes, i, lead, true).or_else(|_| read_value_with(bytes, i, lead, false))
}

fn read_value_with(bytes: &[u8], mut i: usize, lead: LeadBytes, lenient: bool) -> Result<(Vec<u8>, usize), SgfError> {
    let start = i.saturating_sub(1);
    let mut out = Vec::new();
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
            b']' if !lenient || closes_value(bytes, i + 1) => return Ok((out, i + 1)),
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
        assert_eq!(c.nodes[0].props[0].values[0], b"a]b\\cd".to_vec());
        Ok(())
    }

    #[test]
    fn shift_jis_trail_backslash_is_not_an_escape() -> Result<(), SgfError> {
        // "ソ" in Shift_JIS is 0x83 0x5C.
        let c = parse_raw(b"(;PB[\x83\x5C]PW[x])", LeadBytes::ShiftJis)?;
        assert_eq!(c.nodes[0].props[0].values[0], vec![0x83, 0x5C]);
        assert_eq!(c.nodes[0].props[1].values[0], b"x".to_vec());
        Ok(())
    }

    #[test]
    fn variations_and_multiple_trees() -> Result<(), SgfError> {
        let c = parse_raw(b"(;A[1](;B[aa];W[bb])(;B[cc]))(;B[dd])", LeadBytes::None)?;
        assert_eq!(c.roots.len(), 2);
        assert_eq!(c.main_line(c.roots[0]).len(), 3);
        assert_eq!(c.nodes[0].children.len(), 2);
        Ok(())
    }

    #[test]
    fn unescaped_bracket_in_prose_stays_in_the_comment() -> Result<(), SgfError> {
        let c = parse_raw(b"(;C[the move W[fe] is illegal]AB[aa];B[bb])", LeadBytes::None)?;
        assert_eq!(c.nodes[0].props[0].values[0], b"the move W[fe] is illegal".to_vec());
        assert_eq!(c.nodes[0].props[1].ident, "AB");
        Ok(())
    }

    #[test]
    fn properties_before_the_first_semicolon_open_a_node() -> Result<(), SgfError> {
        let c = parse_raw(b"(\r\nPB[x]\r\n;B[pd])", LeadBytes::None)?;
        assert_eq!(c.nodes[0].props[0].ident, "PB");
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
