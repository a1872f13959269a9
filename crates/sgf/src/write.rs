//! Writing a [`GameRecord`] as SGF FF[4] in UTF-8, so that reading it back gives the same record.

use std::fmt::Write as _;

use tengen_rules::{Move, Point};

use crate::GameRecord;

/// Escapes a text value: `]` and `\` get a backslash (FF[4] Text).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == ']' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Formats a komi in points without a trailing ".0" (`7.5`, `0`, `-3.5`); from 100 up the
/// decimal point stays, or a reader would take `KM[100]` for Fox's hundredths.
fn komi_text(k: f64) -> String {
    if k.fract() == 0.0 && k.abs() < 100.0 {
        format!("{}", k as i64)
    } else if k.fract() == 0.0 {
        format!("{k:.1}")
    } else {
        format!("{k}")
    }
}

fn push_text(out: &mut String, ident: &str, value: Option<&str>) {
    if let Some(v) = value {
        let _ = write!(out, "{ident}[{}]", escape(v));
    }
}

fn push_points(out: &mut String, ident: &str, points: &[Point]) {
    if points.is_empty() {
        return;
    }
    out.push_str(ident);
    for p in points {
        let _ = write!(out, "[{}]", p.to_sgf());
    }
}

/// The record as SGF text: one game tree, root properties, then one node per move.
pub fn write_game(rec: &GameRecord) -> String {
    let mut out = String::with_capacity(64 + rec.moves.len() * 8);
    out.push_str("(;FF[4]GM[1]CA[UTF-8]AP[Tengen]");
    if rec.width == rec.height {
        let _ = write!(out, "SZ[{}]", rec.width);
    } else {
        let _ = write!(out, "SZ[{}:{}]", rec.width, rec.height);
    }
    push_text(&mut out, "RU", rec.rules.as_deref());
    if let Some(k) = rec.komi {
        let _ = write!(out, "KM[{}]", komi_text(k));
    }
    if let Some(h) = rec.info.handicap {
        let _ = write!(out, "HA[{h}]");
    }
    push_text(&mut out, "RE", rec.info.result.as_deref());
    push_text(&mut out, "DT", rec.info.date.as_deref());
    push_text(&mut out, "PB", rec.info.black_name.as_deref());
    push_text(&mut out, "PW", rec.info.white_name.as_deref());
    push_text(&mut out, "BR", rec.info.black_rank.as_deref());
    push_text(&mut out, "WR", rec.info.white_rank.as_deref());
    push_text(&mut out, "EV", rec.info.event.as_deref());
    push_text(&mut out, "RO", rec.info.round.as_deref());
    push_text(&mut out, "GN", rec.info.game_name.as_deref());
    push_text(&mut out, "C", rec.root_comment.as_deref());
    push_points(&mut out, "AB", &rec.setup_black);
    push_points(&mut out, "AW", &rec.setup_white);
    if let Some(pl) = rec.first_player {
        let _ = write!(out, "PL[{}]", pl.sgf_letter());
    }
    for (i, m) in rec.moves.iter().enumerate() {
        if i % 10 == 0 {
            out.push('\n');
        }
        let value = match m.mv {
            Move::Place(p) => p.to_sgf(),
            Move::Pass => String::new(),
        };
        let _ = write!(out, ";{}[{value}]", m.color.sgf_letter());
        push_text(&mut out, "C", m.comment.as_deref());
    }
    out.push_str(")\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape(r"a]b\c"), r"a\]b\\c");
    }

    #[test]
    fn komi_keeps_a_decimal_point_where_fox_komi_could_be_meant() {
        assert_eq!(komi_text(7.5), "7.5");
        assert_eq!(komi_text(0.0), "0");
        assert_eq!(komi_text(156.0), "156.0");
        assert_eq!(crate::record::parse_komi(&komi_text(156.0)), Some(156.0));
    }
}
