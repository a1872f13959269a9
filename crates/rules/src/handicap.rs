//! Handicap stones: the standard star points for 2–9 stones, and the board's symmetries a camera
//! looking from any side may show them in.

use crate::point::Point;

/// Fewest handicap stones (one stone is "Black first without komi", not a placement).
pub const MIN_HANDICAP: u8 = 2;
/// Most handicap stones on the standard points.
pub const MAX_HANDICAP: u8 = 9;

/// A handicap that has no standard placement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandicapError {
    /// Only 2 to 9 stones have standard points.
    #[error("a handicap of {0} stones has no standard placement (2 to 9)")]
    Stones(u8),
    /// Boards smaller than 7×7 or of even size have no star points to put them on.
    #[error("a {0}×{0} board has no standard handicap points (odd sizes from 7)")]
    Size(u8),
}

/// The standard points of `stones` handicap stones on a `size`×`size` board, as Black sees the
/// board (row 1 at the bottom): 2 = upper right and lower left, 3 adds lower right, 4 the four
/// corners, 5 adds the centre, 6 the four corners and the left and right sides, 7 adds the
/// centre, 8 the corners and the four sides, 9 every star point.
pub fn handicap_points(stones: u8, size: u8) -> Result<Vec<Point>, HandicapError> {
    if !(MIN_HANDICAP..=MAX_HANDICAP).contains(&stones) {
        return Err(HandicapError::Stones(stones));
    }
    if size < 7 || size.is_multiple_of(2) {
        return Err(HandicapError::Size(size));
    }
    // The corner star points lie on the 4th line (3rd on boards under 13×13).
    let near = if size >= 13 { 3 } else { 2 };
    let (far, mid) = (size - 1 - near, size / 2);
    // Rows count from the top (SGF), so "upper" is `near` and "lower" is `far`.
    let (upper_right, lower_left, lower_right, upper_left) =
        (Point::new(far, near), Point::new(near, far), Point::new(far, far), Point::new(near, near));
    let (centre, left, right, top, bottom) = (
        Point::new(mid, mid),
        Point::new(near, mid),
        Point::new(far, mid),
        Point::new(mid, near),
        Point::new(mid, far),
    );
    let corners = vec![upper_right, lower_left, lower_right, upper_left];
    let mut points = match stones {
        2 => vec![upper_right, lower_left],
        3 => vec![upper_right, lower_left, lower_right],
        4 | 5 => corners,
        6 | 7 => [corners, vec![left, right]].concat(),
        _ => [corners, vec![left, right, top, bottom]].concat(),
    };
    if stones % 2 == 1 && stones >= 5 {
        points.push(centre);
    }
    points.sort();
    Ok(points)
}

/// The point as seen after one of the square's 8 symmetries (`symmetry` 0–7: bit 0 mirrors
/// left–right, bit 1 mirrors top–bottom, bit 2 swaps rows and columns).
fn transform(p: Point, symmetry: u8, size: u8) -> Point {
    let last = size - 1;
    let mut q = p;
    if symmetry & 1 != 0 {
        q.col = last - q.col;
    }
    if symmetry & 2 != 0 {
        q.row = last - q.row;
    }
    if symmetry & 4 != 0 {
        q = Point::new(q.row, q.col);
    }
    q
}

/// Every distinct way the standard placement may look to a camera on any side of the board
/// (and mirrored, as a camera image may be): each a sorted list of points.
pub fn handicap_placements(stones: u8, size: u8) -> Result<Vec<Vec<Point>>, HandicapError> {
    let standard = handicap_points(stones, size)?;
    let mut placements: Vec<Vec<Point>> = Vec::new();
    for symmetry in 0..8 {
        let mut seen: Vec<Point> = standard.iter().map(|&p| transform(p, symmetry, size)).collect();
        seen.sort();
        if !placements.contains(&seen) {
            placements.push(seen);
        }
    }
    Ok(placements)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(points: &[Point]) -> Vec<String> {
        let mut h: Vec<String> = points.iter().map(|p| p.to_human(19)).collect();
        h.sort();
        h
    }

    #[test]
    fn the_standard_points_are_the_star_points_in_the_customary_order() {
        let expect = |n: u8, points: &[&str]| {
            let mut want: Vec<String> = points.iter().map(|s| (*s).to_owned()).collect();
            want.sort();
            assert_eq!(human(&handicap_points(n, 19).expect("standard")), want, "{n} stones");
        };
        expect(2, &["Q16", "D4"]);
        expect(3, &["Q16", "D4", "Q4"]);
        expect(4, &["Q16", "D4", "Q4", "D16"]);
        expect(5, &["Q16", "D4", "Q4", "D16", "K10"]);
        expect(6, &["Q16", "D4", "Q4", "D16", "D10", "Q10"]);
        expect(7, &["Q16", "D4", "Q4", "D16", "D10", "Q10", "K10"]);
        expect(8, &["Q16", "D4", "Q4", "D16", "D10", "Q10", "K16", "K4"]);
        expect(9, &["Q16", "D4", "Q4", "D16", "D10", "Q10", "K16", "K4", "K10"]);
        let mut nine: Vec<String> = handicap_points(2, 9).expect("9x9").iter().map(|p| p.to_human(9)).collect();
        nine.sort();
        assert_eq!(nine, ["C3", "G7"]);
        assert_eq!(handicap_points(1, 19), Err(HandicapError::Stones(1)));
        assert_eq!(handicap_points(10, 19), Err(HandicapError::Stones(10)));
        assert_eq!(handicap_points(4, 6), Err(HandicapError::Size(6)));
    }

    #[test]
    fn symmetric_placements_are_listed_once_and_asymmetric_ones_in_every_orientation() {
        let count = |n| handicap_placements(n, 19).expect("standard").len();
        // Two stones lie on one diagonal or the other; three leave out one of four corners.
        assert_eq!(count(2), 2);
        assert_eq!(count(3), 4);
        assert_eq!(count(4), 1);
        assert_eq!(count(5), 1);
        // Six and seven put the side stones on the left and right, or on the top and bottom.
        assert_eq!(count(6), 2);
        assert_eq!(count(7), 2);
        assert_eq!(count(8), 1);
        assert_eq!(count(9), 1);
        for n in MIN_HANDICAP..=MAX_HANDICAP {
            for placement in handicap_placements(n, 19).expect("standard") {
                assert_eq!(placement.len(), usize::from(n));
            }
        }
    }
}
