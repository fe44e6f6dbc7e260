//! Finding text: PP-OCRv4's detector (DB, "differentiable binarization") gives each pixel a
//! probability of being text; the boxes are the rotated rectangles around the regions above a
//! threshold, kept when the region is confidently text and grown back to the text's full
//! extent. The constants are the reference pipeline's (rapidocr-onnxruntime 1.4.4's
//! `config.yaml`).

use super::geometry::{Point, Quad};
use image::{imageops, GrayImage, Luma, RgbImage};

/// The shorter side the detector sees at least (smaller images are scaled up) ...
const MIN_SIDE: u32 = 736;
/// ... unless that would make the longer side longer than this, which bounds a run's cost.
const MAX_SIDE: u32 = 2000;
/// A pixel above this probability is text.
const PIXEL_THRESHOLD: f32 = 0.3;
/// A region whose mean probability is below this is not kept.
const BOX_THRESHOLD: f32 = 0.5;
/// How far a box grows: its area times this over its perimeter.
const UNCLIP_RATIO: f32 = 1.6;
/// Regions considered at most.
const MAX_CANDIDATES: usize = 1000;
/// A region's shorter side must be at least this long (in the detector's pixels).
const MIN_SIZE: f32 = 3.0;

/// The detector's input for `image`: its size rounded to multiples of 32 (the shorter side at
/// least [`MIN_SIDE`], the longer at most [`MAX_SIDE`]), as BGR channels scaled to -1..1, and
/// that size `(width, height)`.
pub fn input(image: &RgbImage) -> (Vec<f32>, u32, u32) {
    let (w, h) = image.dimensions();
    let (short, long) = (w.min(h).max(1), w.max(h).max(1));
    let up = if short < MIN_SIDE { MIN_SIDE as f32 / short as f32 } else { 1.0 };
    let ratio = up.min(MAX_SIDE as f32 / long as f32);
    let round32 = |v: u32| ((((v as f32 * ratio) as u32) as f32 / 32.0).round() as u32 * 32).max(32);
    let (rw, rh) = (round32(w), round32(h));
    let resized = imageops::resize(image, rw, rh, imageops::FilterType::Triangle);
    (super::planes_bgr(&resized, rw), rw, rh)
}

/// The text boxes of a probability map `prob` (`width` × `height`, row by row), in the
/// coordinates of an image of `dest` = `(width, height)`.
pub fn boxes(prob: &[f32], width: u32, height: u32, dest: (u32, u32)) -> Vec<Quad> {
    let mut bitmap = GrayImage::new(width, height);
    for (i, p) in prob.iter().enumerate().take((width * height) as usize) {
        if *p > PIXEL_THRESHOLD {
            bitmap.put_pixel(i as u32 % width, i as u32 / width, Luma([255]));
        }
    }
    let bitmap = dilate(&bitmap);
    let (sx, sy) = (dest.0 as f32 / width as f32, dest.1 as f32 / height as f32);
    let mut out = Vec::new();
    let contours = imageproc::contours::find_contours::<i32>(&bitmap);
    for contour in contours.iter().take(MAX_CANDIDATES) {
        if contour.points.len() < 3 {
            continue;
        }
        let points: Vec<imageproc::point::Point<f32>> =
            contour.points.iter().map(|p| imageproc::point::Point::new(p.x as f32, p.y as f32)).collect();
        let corners = imageproc::geometry::min_area_rect(&points);
        let quad = Quad::ordered(corners.map(|p| Point::new(p.x, p.y)));
        if quad.short_side() < MIN_SIZE {
            continue;
        }
        if mean_inside(prob, width, height, &quad) < BOX_THRESHOLD {
            continue;
        }
        let (area, perimeter) = quad.area_and_perimeter();
        if perimeter <= 0.0 {
            continue;
        }
        let grown = quad.grown(area * UNCLIP_RATIO / perimeter);
        if grown.short_side() < MIN_SIZE + 2.0 {
            continue;
        }
        let placed = grown.scaled(sx, sy, dest.0.saturating_sub(1) as f32, dest.1.saturating_sub(1) as f32);
        if placed.width() as u32 <= 3 || placed.height() as u32 <= 3 {
            continue;
        }
        out.push(placed);
    }
    out
}

/// A 2×2 dilation (each pixel set when it or its left, upper or upper-left neighbour is): it
/// joins the strokes of a word the threshold left a pixel apart.
fn dilate(bitmap: &GrayImage) -> GrayImage {
    let (w, h) = bitmap.dimensions();
    let mut out = GrayImage::new(w, h);
    for y in 0..h {
        for x in 0..w {
            let set = |dx: u32, dy: u32| x >= dx && y >= dy && bitmap.get_pixel(x - dx, y - dy)[0] > 0;
            if set(0, 0) || set(1, 0) || set(0, 1) || set(1, 1) {
                out.put_pixel(x, y, Luma([255]));
            }
        }
    }
    out
}

/// The mean probability inside `quad` (the "fast" score: over the pixels of its bounding
/// box that lie in it).
fn mean_inside(prob: &[f32], width: u32, height: u32, quad: &Quad) -> f32 {
    let xs = quad.0.map(|p| p.x);
    let ys = quad.0.map(|p| p.y);
    let clamp = |v: f32, max: u32| (v.max(0.0) as u32).min(max.saturating_sub(1));
    let (x0, x1) = (
        clamp(xs.iter().copied().fold(f32::MAX, f32::min).floor(), width),
        clamp(xs.iter().copied().fold(f32::MIN, f32::max).ceil(), width),
    );
    let (y0, y1) = (
        clamp(ys.iter().copied().fold(f32::MAX, f32::min).floor(), height),
        clamp(ys.iter().copied().fold(f32::MIN, f32::max).ceil(), height),
    );
    let (mut sum, mut n) = (0.0f64, 0u32);
    for y in y0..=y1 {
        for x in x0..=x1 {
            if quad.contains(Point::new(x as f32, y as f32)) {
                sum += f64::from(prob[(y * width + x) as usize]);
                n += 1;
            }
        }
    }
    if n == 0 {
        0.0
    } else {
        (sum / f64::from(n)) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confident_region_becomes_a_box_grown_to_the_text() {
        // A 64×32 map with one 40×8 region of text at (10, 12).
        let (w, h) = (64u32, 32u32);
        let mut prob = vec![0.0f32; (w * h) as usize];
        for y in 12..20 {
            for x in 10..50 {
                prob[(y * w + x) as usize] = 0.9;
            }
        }
        let found = boxes(&prob, w, h, (128, 64));
        assert_eq!(found.len(), 1, "{found:?}");
        let b = found[0];
        // Grown by 40*8*1.6/96 ≈ 5 on each side of the region, then scaled ×2.
        assert!(b.width() > 2.0 * 40.0 && b.height() > 2.0 * 8.0, "{b:?}");
        assert!(b.top_left().x < 20.0 && b.top_left().y < 24.0, "{b:?}");
    }

    #[test]
    fn a_faint_region_is_not_text() {
        let (w, h) = (32u32, 32u32);
        let mut prob = vec![0.0f32; (w * h) as usize];
        for y in 10..20 {
            for x in 5..25 {
                prob[(y * w + x) as usize] = 0.35;
            }
        }
        assert!(boxes(&prob, w, h, (32, 32)).is_empty());
    }

    #[test]
    fn the_input_is_a_multiple_of_32_with_the_short_side_scaled_up() {
        let (data, w, h) = input(&RgbImage::new(1280, 600));
        assert_eq!((w, h), (1568, 736));
        assert_eq!(data.len(), (3 * w * h) as usize);
        // A wide strip is scaled up only as far as its longer side allows.
        let (data, w, h) = input(&RgbImage::new(1000, 100));
        assert_eq!((w, h), (2016, 192));
        assert_eq!(data.len(), (3 * w * h) as usize);
    }
}
