//! Development aid: times each stage of the reader on a rendered 1920×1080 frame.

use std::time::Instant;

use tengen_rules::Stone;

use tengen_synth::{render, Position, Scene};
use tengen_vision::stages::classify;
use tengen_vision::stages::{cells_under_stones, detect_occlusion, OcclusionConfig};
use tengen_vision::stages::{measure_points, BoardColour};
use tengen_vision::stages::{CameraFoot, RectifiedBoard};
use tengen_vision::{GridGeometry, LensDistortion};

fn main() {
    let mut position = Position::empty();
    for k in 0..100usize {
        position.set((k * 7) % 19, (k * 11) % 19, if k % 2 == 0 { Stone::BLACK } else { Stone::WHITE });
    }
    let scene = Scene::preset("phone").unwrap_or_default().with_size(1920, 1080);
    let Ok(frame) = render(&position, &scene) else { return };
    let t = &frame.truth;
    let g = GridGeometry {
        homography: t.homography,
        lens: LensDistortion { k1: t.lens.k1, centre: t.lens.centre, scale: t.lens.scale },
    };
    for _ in 0..3 {
        let tp = Instant::now();
        let mut acc = 0.0;
        for j in 0..161 {
            for i in 0..161 {
                let p = g.project(-1.0 + i as f64 / 8.0, -1.0 + j as f64 / 8.0);
                acc += p[0];
            }
        }
        println!("26k projections {:?} ({acc:.0})", tp.elapsed());
        for spc in [2usize, 4, 6, 8] {
            let mut best = std::time::Duration::MAX;
            let mut n = 0;
            for _ in 0..15 {
                let ts = Instant::now();
                let b = RectifiedBoard::new(&frame.image, &g, spc);
                best = best.min(ts.elapsed());
                n = b.rgb.len();
            }
            println!("  rectify spc {spc}: min {:?} ({n} samples)", best);
        }
        let mut best = std::time::Duration::MAX;
        for _ in 0..15 {
            let ts = Instant::now();
            let _ = tengen_vision::decode_rgb(&frame.jpeg());
            best = best.min(ts.elapsed());
        }
        println!("  (encode+)decode min {:?}", best);
        let jpeg = frame.jpeg();
        let mut best = std::time::Duration::MAX;
        let mut best_read = std::time::Duration::MAX;
        for _ in 0..15 {
            let ts = Instant::now();
            let _ = tengen_vision::decode_rgb(&jpeg);
            best = best.min(ts.elapsed());
            let ts = Instant::now();
            let _ = tengen_vision::read_board(&frame.image, &g, &tengen_vision::ReaderConfig::default());
            best_read = best_read.min(ts.elapsed());
        }
        println!("  decode min {:?} read_board min {:?}", best, best_read);
        let t0 = Instant::now();
        let board = RectifiedBoard::new(&frame.image, &g, 8);
        let t1 = Instant::now();
        let colour = BoardColour::measure(&board);
        let t2 = Instant::now();
        let cam = CameraFoot::estimate(&g);
        let feats = measure_points(&board, &colour, cam.as_ref(), 0.3);
        let t3 = Instant::now();
        let cls = classify(&feats, &tengen_vision::ReaderModel::embedded().classes, colour.global, 1.0);
        let t4 = Instant::now();
        let stones: Vec<[bool; 19]> =
            cls.posteriors.iter().map(|row| std::array::from_fn(|c| row[c][1].max(row[c][2]) > row[c][0])).collect();
        let under = cells_under_stones(cam.as_ref(), &stones);
        let mask = detect_occlusion(&colour, &under, &OcclusionConfig::default());
        let t5 = Instant::now();
        println!(
            "rectify {:?} colour {:?} features {:?} classify {:?} occlusion {:?} (px/cell {:.1}) {}",
            t1 - t0,
            t2 - t1,
            t3 - t2,
            t4 - t3,
            t5 - t4,
            board.pixels_per_cell,
            cls.margin.len() + usize::from(mask.occluded)
        );
    }
}
