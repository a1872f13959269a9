//! Explaining one stable change of the physical board against the legal game: which moves,
//! captures and infractions most likely produced it. Pure: it reads a game and two boards and
//! returns a plan; the referee applies the plan.
//!
//! Each hypothesis gets a cost (a legal move in turn costs nothing; a double move, a void move,
//! a stone removed without being captured cost more) and the cheapest wins. Several moves seen at
//! once are ordered by legality: every order of the added stones is tried, and when several
//! orders fit equally well the plan says how many (ambiguous).

use std::collections::BTreeMap;

use tengen_rules::{Color, Game, Grid, IllegalReason, Move, Point, Stone};

/// Cost of a move out of turn (a double move, or an unrecorded pass).
const COST_OUT_OF_TURN: u32 = 10;
/// Cost of an illegal placement treated as a void move.
const COST_VOID: u32 = 10;
/// Cost of a stone of the legal board missing from the physical one (removed, not captured).
const COST_UNEXPLAINED_REMOVAL: u32 = 8;
/// Cost of a stone whose colour changed.
const COST_RECOLOUR: u32 = 8;
/// Cost of a stone slid to a neighbouring point (or moved by the side that just played).
const COST_MOVED_PAIR: u32 = 6;
/// Cost of a takeback (the last stone lifted, maybe replayed elsewhere).
const COST_TAKEBACK: u32 = 6;
/// Cost of captured stones left on the board when the opponent has already moved.
const COST_MISSED_CAPTURE: u32 = 3;

/// The last move of the record, when it is a placement.
#[derive(Debug, Clone)]
pub(crate) struct LastMove {
    pub side: Color,
    pub point: Point,
    pub captured: Vec<Point>,
}

/// What the explanation needs to know.
pub(crate) struct Context<'a> {
    pub game: &'a Game,
    pub legal: Grid,
    pub physical: &'a Grid,
    /// Points already accounted for, with the physical value they are known to have.
    pub acked: &'a BTreeMap<usize, Stone>,
    pub last_move: Option<LastMove>,
    /// After a resync the side to move is a guess: the first move of either colour is in turn.
    pub to_move_uncertain: bool,
    pub max_moves: usize,
    pub scatter_min: usize,
}

/// One move of the plan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    pub side: Color,
    pub point: Point,
    /// Illegal: the move is void and counts as a pass.
    pub void: Option<IllegalReason>,
}

/// Something that is not a move.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Finding {
    /// The last stone was lifted (and maybe replayed elsewhere) before the opponent moved.
    Takeback { side: Color, from: Point, to: Option<Point>, restored: Vec<Point> },
    /// Stones moved: from points (now empty or changed) to points (new stones), side unknown.
    MovedStones { from: Vec<Point>, to: Vec<Point> },
    /// Stones with liberties removed by `side` (the opponent of their owner).
    WrongCapture { side: Color, points: Vec<Point> },
    /// Many stones disturbed: every point that must be restored to the legal board.
    Scattered { points: Vec<Point> },
    /// Too many moves missed to reconstruct: adopt the physical board.
    Resync { added: u32 },
}

/// The chosen explanation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub steps: Vec<Step>,
    /// Orders of the added stones that fit equally well (1 = unambiguous).
    pub orders: u32,
    pub findings: Vec<Finding>,
    /// Stones removed beside a void move that the move would have captured (ko retake).
    pub void_removals: Vec<Point>,
    pub cost: u32,
}

struct Diff {
    added: Vec<(Point, Color)>,
    removed: Vec<(Point, Color)>,
    recoloured: Vec<Point>,
}

fn diff(ctx: &Context<'_>) -> Diff {
    let mut d = Diff { added: Vec::new(), removed: Vec::new(), recoloured: Vec::new() };
    for p in Point::all() {
        let (l, n) = (ctx.legal.get(p), ctx.physical.get(p));
        if l == n || ctx.acked.get(&p.index()) == Some(&n) {
            continue;
        }
        match (l, n) {
            (Stone::Empty, Stone::Of(c)) => d.added.push((p, c)),
            (Stone::Of(c), Stone::Empty) => d.removed.push((p, c)),
            _ => d.recoloured.push(p),
        }
    }
    d
}

/// A scattered board: every point where the physical board differs from the legal one, except
/// differences the arbiter has already acknowledged as they stand.
fn scattered(ctx: &Context<'_>) -> Finding {
    let points = ctx
        .legal
        .differences(ctx.physical)
        .into_iter()
        .filter(|p| ctx.acked.get(&p.index()) != Some(&ctx.physical.get(*p)))
        .collect();
    Finding::Scattered { points }
}

fn chebyshev(a: Point, b: Point) -> u8 {
    a.col.abs_diff(b.col).max(a.row.abs_diff(b.row))
}

/// Explains the difference between the legal board and the new physical board.
pub(crate) fn explain(ctx: &Context<'_>) -> Plan {
    let d = diff(ctx);
    if d.added.is_empty() && d.removed.is_empty() && d.recoloured.is_empty() {
        return Plan { orders: 1, ..Plan::default() };
    }
    let disturbed = d.removed.len() + d.recoloured.len();
    if d.added.len() > ctx.max_moves {
        // Too many stones to order: missed frames (a resync) unless stones also vanished en masse.
        if disturbed * 2 <= d.added.len() {
            return Plan {
                orders: 1,
                findings: vec![Finding::Resync { added: d.added.len() as u32 }],
                ..Plan::default()
            };
        }
        return Plan { orders: 1, findings: vec![scattered(ctx)], ..Plan::default() };
    }

    let mut candidates: Vec<Plan> = Vec::new();
    // Hypothesis 1: everything added is a move; removals are captures (or unexplained).
    candidates.push(search(ctx, &d.added, &d.removed, &d.recoloured, Vec::new(), 0));

    // Hypothesis 2: the last stone was taken back (lifted, maybe replayed elsewhere).
    if let Some(lm) = &ctx.last_move {
        let lifted = d.removed.iter().any(|&(p, c)| p == lm.point && c == lm.side);
        let restored: Vec<Point> = d
            .added
            .iter()
            .filter(|&&(p, c)| c == lm.side.opponent() && lm.captured.contains(&p))
            .map(|&(p, _)| p)
            .collect();
        let other_opponent = d.added.iter().any(|&(p, c)| c == lm.side.opponent() && !lm.captured.contains(&p));
        if lifted && !other_opponent {
            let own_added: Vec<Point> = d.added.iter().filter(|&&(_, c)| c == lm.side).map(|&(p, _)| p).collect();
            let to = if own_added.len() == 1 { Some(own_added[0]) } else { None };
            let added: Vec<(Point, Color)> =
                d.added.iter().copied().filter(|&(p, _)| Some(p) != to && !restored.contains(&p)).collect();
            let removed: Vec<(Point, Color)> = d.removed.iter().copied().filter(|&(p, _)| p != lm.point).collect();
            // The board back as it was before a ko capture is far more often the ko retaken by
            // the opponent than the capture taken back: let the void retake win then.
            let ko_shape = to.is_none() && lm.captured.len() == 1 && restored == lm.captured;
            let cost = if ko_shape { COST_TAKEBACK + 2 * COST_VOID + COST_UNEXPLAINED_REMOVAL } else { COST_TAKEBACK };
            let finding = Finding::Takeback { side: lm.side, from: lm.point, to, restored };
            candidates.push(search(ctx, &added, &removed, &d.recoloured, vec![finding], cost));
        }
    }

    // Hypothesis 3: stones slid to a neighbouring point, or moved by the side not to move.
    let mut pairs: Vec<(Point, Point)> = Vec::new();
    let mut used_added = Vec::new();
    for &(q, c) in &d.removed {
        if let Some(&(p, _)) =
            d.added.iter().find(|&&(p, pc)| pc == c && chebyshev(p, q) == 1 && !used_added.contains(&p))
        {
            pairs.push((q, p));
            used_added.push(p);
        }
    }
    if pairs.is_empty() && d.removed.len() == 1 && d.added.len() == 1 {
        let ((q, qc), (p, pc)) = (d.removed[0], d.added[0]);
        let not_their_turn = pc != ctx.game.to_move() && !ctx.to_move_uncertain;
        if qc == pc && not_their_turn {
            pairs.push((q, p));
            used_added.push(p);
        }
    }
    if !pairs.is_empty() {
        let added: Vec<(Point, Color)> = d.added.iter().copied().filter(|(p, _)| !used_added.contains(p)).collect();
        let removed: Vec<(Point, Color)> =
            d.removed.iter().copied().filter(|(q, _)| !pairs.iter().any(|(f, _)| f == q)).collect();
        let finding = Finding::MovedStones {
            from: pairs.iter().map(|(q, _)| *q).collect(),
            to: pairs.iter().map(|(_, p)| *p).collect(),
        };
        let cost = COST_MOVED_PAIR * pairs.len() as u32;
        candidates.push(search(ctx, &added, &removed, &d.recoloured, vec![finding], cost));
    }

    // The cheapest; on a tie the earlier hypothesis (plain moves first).
    let mut best = candidates.remove(0);
    for c in candidates {
        if c.cost < best.cost {
            best = c;
        }
    }
    finish(ctx, best)
}

/// Turns residual removals into findings, or one scattered board when there are many.
fn finish(ctx: &Context<'_>, mut plan: Plan) -> Plan {
    let mut game = ctx.game.clone();
    let mut last_mover = ctx.last_move.as_ref().map(|m| m.side);
    for s in &plan.steps {
        match s.void {
            None => {
                let _ = game.play(s.side, Move::Place(s.point));
            }
            Some(_) => {
                game.pass(s.side);
            }
        }
        last_mover = Some(s.side);
    }
    let after = Grid::from_board(game.board());
    // Stones beside a void move that it would have captured belong to that void move.
    let mut void_removals = Vec::new();
    for s in plan.steps.iter().filter(|s| s.void.is_some()) {
        for n in s.point.neighbours() {
            if after.get(n) == Stone::Of(s.side.opponent())
                && ctx.physical.get(n) == Stone::Empty
                && ctx.acked.get(&n.index()) != Some(&Stone::Empty)
            {
                for q in game.board().chain(n) {
                    if ctx.physical.get(q) == Stone::Empty && !void_removals.contains(&q) {
                        void_removals.push(q);
                    }
                }
            }
        }
    }
    let mut handled: Vec<Point> = void_removals.clone();
    for f in &plan.findings {
        match f {
            Finding::Takeback { from, to, restored, .. } => {
                handled.push(*from);
                handled.extend(to.iter().copied());
                handled.extend(restored.iter().copied());
            }
            Finding::MovedStones { from, to } => {
                handled.extend(from.iter().copied());
                handled.extend(to.iter().copied());
            }
            _ => {}
        }
    }
    let mut removed_by_colour: [Vec<Point>; 2] = [Vec::new(), Vec::new()];
    let mut recoloured = Vec::new();
    for p in Point::all() {
        if handled.contains(&p) || ctx.acked.get(&p.index()) == Some(&ctx.physical.get(p)) {
            continue;
        }
        match (after.get(p), ctx.physical.get(p)) {
            (Stone::Of(c), Stone::Empty) => removed_by_colour[usize::from(c == Color::White)].push(p),
            (Stone::Of(c), Stone::Of(d)) if c != d => recoloured.push(p),
            _ => {}
        }
    }
    let moved_count: usize =
        plan.findings.iter().map(|f| if let Finding::MovedStones { from, .. } = f { from.len() } else { 0 }).sum();
    let residual = removed_by_colour[0].len() + removed_by_colour[1].len() + recoloured.len();
    if residual + moved_count >= ctx.scatter_min {
        // Many stones disturbed at once: one scattered board, restore from the record, no moves.
        return Plan {
            steps: Vec::new(),
            orders: 1,
            findings: vec![scattered(ctx)],
            void_removals: Vec::new(),
            cost: plan.cost,
        };
    }
    for (i, stones) in removed_by_colour.into_iter().enumerate() {
        if stones.is_empty() {
            continue;
        }
        let owner = if i == 0 { Color::Black } else { Color::White };
        match last_mover {
            Some(m) if m == owner.opponent() => plan.findings.push(Finding::WrongCapture { side: m, points: stones }),
            _ => plan.findings.push(Finding::MovedStones { from: stones, to: Vec::new() }),
        }
    }
    if !recoloured.is_empty() {
        plan.findings.push(Finding::MovedStones { from: recoloured.clone(), to: recoloured });
    }
    plan.void_removals = void_removals;
    plan
}

struct SearchState<'a> {
    ctx: &'a Context<'a>,
    removed: &'a [(Point, Color)],
    recoloured: &'a [Point],
    best_cost: u32,
    best_steps: Vec<Step>,
    ties: u32,
    nodes: u32,
}

/// Upper bound on search nodes, so a pathological change can never stall a table.
const MAX_NODES: u32 = 50_000;

/// Orders the added stones as moves; returns the cheapest plan with `findings` attached.
fn search(
    ctx: &Context<'_>,
    added: &[(Point, Color)],
    removed: &[(Point, Color)],
    recoloured: &[Point],
    findings: Vec<Finding>,
    base_cost: u32,
) -> Plan {
    let mut st =
        SearchState { ctx, removed, recoloured, best_cost: u32::MAX, best_steps: Vec::new(), ties: 0, nodes: 0 };
    let mut remaining: Vec<(Point, Color)> = added.to_vec();
    let mut path = Vec::new();
    let skip: Vec<Point> = findings
        .iter()
        .flat_map(|f| match f {
            Finding::Takeback { from, to, restored, .. } => {
                let mut v = vec![*from];
                v.extend(to.iter().copied());
                v.extend(restored.iter().copied());
                v
            }
            Finding::MovedStones { from, to } => from.iter().chain(to.iter()).copied().collect(),
            _ => Vec::new(),
        })
        .collect();
    dfs(&mut st, ctx.game.clone(), &mut remaining, &mut path, base_cost, &skip);
    Plan { steps: st.best_steps, orders: st.ties.max(1), findings, void_removals: Vec::new(), cost: st.best_cost }
}

fn dfs(
    st: &mut SearchState<'_>,
    game: Game,
    remaining: &mut Vec<(Point, Color)>,
    path: &mut Vec<(Step, Vec<Point>)>,
    cost: u32,
    skip: &[Point],
) {
    st.nodes += 1;
    if cost > st.best_cost || st.nodes > MAX_NODES {
        return;
    }
    if remaining.is_empty() {
        let total = cost + residual_cost(st, &game, path, skip);
        if total < st.best_cost {
            st.best_cost = total;
            st.best_steps = path.iter().map(|(s, _)| s.clone()).collect();
            st.ties = 1;
        } else if total == st.best_cost {
            st.ties += 1;
        }
        return;
    }
    for i in 0..remaining.len() {
        let (p, c) = remaining[i];
        let first = path.is_empty();
        let in_turn = c == game.to_move() || (first && st.ctx.to_move_uncertain);
        let turn_cost = if in_turn { 0 } else { COST_OUT_OF_TURN };
        let mut next = game.clone();
        if first && st.ctx.to_move_uncertain {
            next.set_to_move(c);
        }
        let (step, captured, step_cost) = match next.play(c, Move::Place(p)) {
            Ok(outcome) => (Step { side: c, point: p, void: None }, outcome.captured, turn_cost),
            Err(illegal) => {
                next.void_move(&illegal);
                (Step { side: c, point: p, void: Some(illegal.reason) }, Vec::new(), turn_cost + COST_VOID)
            }
        };
        remaining.remove(i);
        path.push((step, captured));
        dfs(st, next, remaining, path, cost + step_cost, skip);
        path.pop();
        remaining.insert(i, (p, c));
    }
}

/// Cost of what the moves leave unexplained on the physical board.
fn residual_cost(st: &SearchState<'_>, game: &Game, path: &[(Step, Vec<Point>)], skip: &[Point]) -> u32 {
    let ctx = st.ctx;
    let mut cost = 0;
    for &(q, _) in st.removed {
        if skip.contains(&q) {
            continue;
        }
        if game.board().get(q) != Stone::Empty {
            cost += COST_UNEXPLAINED_REMOVAL;
        }
    }
    for &q in st.recoloured {
        if !skip.contains(&q) {
            cost += COST_RECOLOUR;
        }
    }
    // Captured stones still standing after the opponent of the capturer moved: missed capture.
    for (k, (step, captured)) in path.iter().enumerate() {
        let still = captured.iter().any(|&q| ctx.physical.get(q) != Stone::Empty);
        let opponent_moved_after = path[k + 1..].iter().any(|(s, _)| s.side != step.side);
        if still && opponent_moved_after {
            cost += COST_MISSED_CAPTURE;
        }
    }
    cost
}
