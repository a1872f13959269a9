//! Choosing the character encoding of a record: byte-order marks, the `CA` property (wherever it
//! stands in the root node), and a guess among the encodings real Go records use when `CA` is absent.

use encoding_rs::{Encoding, BIG5, EUC_KR, GB18030, SHIFT_JIS, UTF_8, WINDOWS_1252};

use crate::tree::LeadBytes;

/// How the encoding of a file was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodingSource {
    /// A UTF-8 or UTF-16 byte-order mark.
    ByteOrderMark,
    /// The `CA` property.
    Declared,
    /// `CA` named a legacy encoding but the file is valid UTF-8 with non-ASCII text: converters
    /// re-encode files without updating `CA`.
    DeclaredButUtf8,
    /// No `CA`: the file is plain ASCII or valid UTF-8.
    Utf8ByDefault,
    /// No `CA` and not UTF-8: the best-scoring legacy encoding.
    Guessed,
}

/// The encoding chosen for one file.
#[derive(Debug, Clone, Copy)]
pub struct ChosenEncoding {
    /// The encoding values are decoded with.
    pub encoding: &'static Encoding,
    /// Why it was chosen.
    pub source: EncodingSource,
}

/// Which lead bytes the tokeniser must pair inside values for this encoding.
pub fn lead_bytes(encoding: &'static Encoding) -> LeadBytes {
    if encoding == SHIFT_JIS {
        LeadBytes::ShiftJis
    } else if encoding == GB18030 || encoding == encoding_rs::GBK || encoding == BIG5 || encoding == EUC_KR {
        LeadBytes::HighHalf
    } else {
        LeadBytes::None
    }
}

/// Strips a byte-order mark; UTF-16 input is transcoded to UTF-8. Returns the bytes to tokenise
/// and whether a BOM fixed the encoding.
pub fn strip_bom(bytes: &[u8]) -> (std::borrow::Cow<'_, [u8]>, bool) {
    match Encoding::for_bom(bytes) {
        Some((enc, bom_len)) if enc == UTF_8 => (std::borrow::Cow::Borrowed(&bytes[bom_len..]), true),
        Some((enc, bom_len)) => {
            let (text, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
            (std::borrow::Cow::Owned(text.into_owned().into_bytes()), true)
        }
        None => (std::borrow::Cow::Borrowed(bytes), false),
    }
}

/// Resolves a `CA` label ("GB2312", "Shift_JIS", "MS_KANJI", "UTF16LE"...) to an encoding.
pub fn for_label(label: &str) -> Option<&'static Encoding> {
    let trimmed = label.trim();
    if let Some(enc) = Encoding::for_label(trimmed.as_bytes()) {
        return Some(enc);
    }
    // Common spellings outside the WHATWG label list.
    let squashed: String =
        trimmed.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
    match squashed.as_str() {
        "utf8" => Some(UTF_8),
        "utf16le" | "utf16" => Some(encoding_rs::UTF_16LE),
        "utf16be" => Some(encoding_rs::UTF_16BE),
        "sjis" | "shiftjis" | "mskanji" | "cp932" => Some(SHIFT_JIS),
        "gb2312" | "gbk" | "cp936" | "euccn" => Some(encoding_rs::GBK),
        "gb18030" => Some(GB18030),
        "euckr" | "cp949" | "ksc5601" => Some(EUC_KR),
        "big5" | "cp950" => Some(BIG5),
        "latin1" | "iso88591" => Some(WINDOWS_1252),
        _ => None,
    }
}

/// Whether the bytes hold any non-ASCII byte.
fn has_non_ascii(bytes: &[u8]) -> bool {
    bytes.iter().any(|b| !b.is_ascii())
}

/// Chooses the encoding when the file declares `declared` (already resolved) or nothing.
pub fn choose(bytes: &[u8], declared: Option<&'static Encoding>) -> ChosenEncoding {
    let valid_utf8 = std::str::from_utf8(bytes).is_ok();
    match declared {
        Some(enc) if enc == UTF_8 => ChosenEncoding { encoding: UTF_8, source: EncodingSource::Declared },
        Some(enc) => {
            if valid_utf8 && has_non_ascii(bytes) {
                ChosenEncoding { encoding: UTF_8, source: EncodingSource::DeclaredButUtf8 }
            } else {
                ChosenEncoding { encoding: enc, source: EncodingSource::Declared }
            }
        }
        None if valid_utf8 => ChosenEncoding { encoding: UTF_8, source: EncodingSource::Utf8ByDefault },
        None => ChosenEncoding { encoding: guess_legacy(bytes), source: EncodingSource::Guessed },
    }
}

/// Scores the candidates a Go record without `CA` is usually in and returns the best; ties go to
/// the earlier candidate (GB18030 first: most such files come from Chinese servers).
fn guess_legacy(bytes: &[u8]) -> &'static Encoding {
    let candidates: [&'static Encoding; 3] = [GB18030, SHIFT_JIS, EUC_KR];
    let mut best = WINDOWS_1252;
    let mut best_score = 0i64;
    for enc in candidates {
        let Some(text) = enc.decode_without_bom_handling_and_without_replacement(bytes) else {
            continue;
        };
        let score = plausibility(&text, enc);
        if score > best_score {
            best = enc;
            best_score = score;
        }
    }
    best
}

/// How much a decoded text looks like real East-Asian text: common characters score, characters
/// that only appear when bytes are read in the wrong encoding cost.
fn plausibility(text: &str, enc: &'static Encoding) -> i64 {
    let mut score = 0i64;
    for c in text.chars() {
        let u = c as u32;
        score += match u {
            0x3040..=0x30FF => 2,                   // kana: Japanese
            0xAC00..=0xD7A3 => 1,                   // Hangul syllables (GB text read as EUC-KR gives them too)
            0x3000..=0x303F | 0xFF01..=0xFF5E => 1, // CJK punctuation, full-width forms
            0x4E00..=0x9FFF => {
                // GB2312 covers the characters Chinese text uses; the rest of GBK mostly shows up
                // when Shift_JIS or other bytes are misread as GBK.
                if enc == GB18030 && !in_gb2312(c) {
                    -1
                } else {
                    1
                }
            }
            0xFF61..=0xFF9F => -2, // half-width katakana: rare in records
            0xE000..=0xF8FF => -5, // private use
            0x80..=0x2FFF if enc != encoding_rs::WINDOWS_1252 => -1,
            _ => 0,
        };
    }
    score
}

/// Whether a character is in GB2312 (encodes as an EUC-CN pair, both bytes ≥ 0xA1).
fn in_gb2312(c: char) -> bool {
    let mut buf = [0u8; 4];
    let s = c.encode_utf8(&mut buf);
    let (bytes, _, unmappable) = encoding_rs::GBK.encode(s);
    !unmappable && bytes.len() == 2 && bytes[0] >= 0xA1 && bytes[1] >= 0xA1
}

/// Decodes one value onto the end of `out`; returns whether bytes had to be replaced.
pub fn decode_value_into(bytes: &[u8], encoding: &'static Encoding, out: &mut String) -> bool {
    if !has_non_ascii(bytes) {
        // ASCII is the same in every encoding tokenised here.
        out.push_str(&String::from_utf8_lossy(bytes));
        return false;
    }
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    out.push_str(&text);
    had_errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(for_label("GB2312"), Some(encoding_rs::GBK));
        assert_eq!(for_label("MS_KANJI"), Some(SHIFT_JIS));
        assert_eq!(for_label("UTF16LE"), Some(encoding_rs::UTF_16LE));
        assert_eq!(for_label("utf-8"), Some(UTF_8));
        assert_eq!(for_label("foo"), None);
    }

    #[test]
    fn guesses() {
        // 古力 in GB2312, 井山 裕太 in Shift_JIS (kana-free names are ambiguous; with kana they are not).
        let gb = encoding_rs::GBK.encode("围棋是中国的").0.into_owned();
        assert_eq!(choose(&gb, None).encoding, GB18030);
        let sj = SHIFT_JIS.encode("囲碁はたのしい").0.into_owned();
        assert_eq!(choose(&sj, None).encoding, SHIFT_JIS);
        let latin = WINDOWS_1252.encode("Café élève").0.into_owned();
        assert_eq!(choose(&latin, None).encoding, WINDOWS_1252);
    }
}
