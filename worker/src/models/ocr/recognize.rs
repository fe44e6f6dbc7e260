//! Reading a found line: the box is cut out straight (a perspective warp), turned upright when
//! it stands on its end or (by the angle classifier) on its head, scaled to the recognizer's
//! height of 48 pixels, and read by CTC decoding of the recognizer's per-column character
//! probabilities.

use super::geometry::Quad;
use image::{imageops, Rgb, RgbImage};
use imageproc::geometric_transformations::{warp_into, Interpolation, Projection};

/// The recognizer's input height.
pub const HEIGHT: u32 = 48;
/// The margin added around a cut before it is read, as a share of its height: the detector's
/// box hugs the text, and read that tight the recognizer drops the spaces between words
/// ("Thequartermasterkeeps"). The cut keeps its horizontal scale ([`line_input`]), so the
/// margin makes the text shorter, not narrower: narrower, its letters fall between the
/// recognizer's columns and are dropped. Chosen on the OCR yardstick's pages (docs/ocr.md):
/// the error rate falls up to 0.5 and rises again past it.
pub const MARGIN: f32 = 0.5;
/// The angle classifier's input size.
pub const CLS_WIDTH: u32 = 192;
/// A line the classifier reads as upside down with at least this probability is turned.
pub const CLS_THRESHOLD: f32 = 0.9;

/// The pixels of `quad` in `image`, straightened to its width and height; a cut much taller
/// than wide is text running down the page and is turned to read across.
pub fn crop(image: &RgbImage, quad: &Quad) -> Option<RgbImage> {
    let (w, h) = (quad.width().max(1.0) as u32, quad.height().max(1.0) as u32);
    let [tl, tr, br, bl] = quad.0;
    let from = [(tl.x, tl.y), (tr.x, tr.y), (br.x, br.y), (bl.x, bl.y)];
    let to = [(0.0, 0.0), (w as f32, 0.0), (w as f32, h as f32), (0.0, h as f32)];
    let projection = Projection::from_control_points(from, to)?;
    let mut out = RgbImage::new(w, h);
    warp_into(image, &projection, Interpolation::Bicubic, Rgb([255, 255, 255]), &mut out);
    if h as f32 / w as f32 >= 1.5 {
        out = imageops::rotate270(&out);
    }
    Some(out)
}

/// `cut` with a margin of [`MARGIN`] of its height on every side, its edge pixels repeated.
pub fn with_margin(cut: &RgbImage) -> RgbImage {
    let (w, h) = cut.dimensions();
    let m = (MARGIN * h as f32).round() as u32;
    RgbImage::from_fn(w + 2 * m, h + 2 * m, |x, y| {
        let sx = x.saturating_sub(m).min(w.saturating_sub(1));
        let sy = y.saturating_sub(m).min(h.saturating_sub(1));
        *cut.get_pixel(sx, sy)
    })
}

/// The recognizer's input for `cut`: with its margin ([`with_margin`]), scaled to [`HEIGHT`]
/// and to the width the cut alone would have at that height (so the text keeps its
/// horizontal scale), at least square; and that width.
pub fn line_input(cut: &RgbImage) -> (Vec<f32>, u32) {
    let line = with_margin(cut);
    let width = ((HEIGHT as f32 * line.width() as f32 / cut.height().max(1) as f32).ceil() as u32).max(HEIGHT);
    let resized = imageops::resize(&line, width, HEIGHT, imageops::FilterType::Triangle);
    (super::planes_bgr(&resized, width), width)
}

/// `line` scaled to `height` (its width in proportion, at most `width`) and padded to `width`,
/// as BGR planes scaled to -1..1 (the padding 0).
pub fn input(line: &RgbImage, height: u32, width: u32) -> Vec<f32> {
    let (w, h) = line.dimensions();
    let scaled_w = ((height as f32 * w as f32 / h.max(1) as f32).ceil() as u32).clamp(1, width);
    super::planes_bgr(&imageops::resize(line, scaled_w, height, imageops::FilterType::Triangle), width)
}

/// A gap between two characters is a space when the space's probability reaches this at one
/// of its blank columns, though the blank wins there: the recognizer hesitates over narrow
/// word gaps, more in blurred (JPEG) text. Chosen on the OCR yardstick (docs/ocr.md): from 0.15
/// to 0.25 the error rate on JPEG at quality 40 halves, the PNG and turned pages unchanged.
pub const SPACE_IN_GAP: f32 = 0.2;

/// The text and mean confidence of one line's output (`steps` × `classes` probabilities):
/// the most likely class at each step, repeats merged, the blank (class 0) dropped, and a space
/// put in a gap the space nearly won ([`SPACE_IN_GAP`]) between two characters of scripts
/// that separate words. Class `i` (from 1) is `charset[i - 1]`; the last is the space.
pub fn ctc_decode(probs: &[f32], classes: usize, charset: &[String]) -> (String, f32) {
    let mut text = String::new();
    let mut confidences: Vec<f32> = Vec::new();
    let mut previous = usize::MAX;
    let mut gap_space = 0.0f32;
    for step in probs.chunks_exact(classes) {
        let (best, p) =
            step.iter().enumerate().fold((0, f32::MIN), |acc, (i, &p)| if p > acc.1 { (i, p) } else { acc });
        if best == 0 {
            gap_space = gap_space.max(step[classes - 1]);
        } else if best != previous {
            if let Some(c) = charset.get(best - 1) {
                let spaced = |ch: Option<char>| ch.is_some_and(|ch| !ch.is_whitespace() && separates_words(ch));
                if gap_space >= SPACE_IN_GAP && spaced(text.chars().last()) && spaced(c.chars().next()) {
                    text.push(' ');
                }
                text.push_str(c);
                confidences.push(p);
            }
            gap_space = 0.0;
        }
        previous = best;
    }
    let mean = if confidences.is_empty() { 0.0 } else { confidences.iter().sum::<f32>() / confidences.len() as f32 };
    (text, mean)
}

/// Whether `c` belongs to a script that puts spaces between words (not Chinese, Japanese).
fn separates_words(c: char) -> bool {
    !matches!(c, '\u{2E80}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{FF00}'..='\u{FFEF}')
}

/// The characters of a recognizer, from its model's `character` metadata (one per line), with
/// the space the reference pipeline appends.
pub fn charset(metadata: &str) -> Vec<String> {
    let mut chars: Vec<String> = metadata.lines().map(str::to_string).collect();
    chars.push(" ".to_string());
    chars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctc_merges_repeats_and_drops_blanks() {
        let charset: Vec<String> = ["a", "b"].map(String::from).to_vec();
        // steps: a a blank a b b → "aab"
        let probs =
            [[0.1, 0.8, 0.1], [0.1, 0.6, 0.3], [0.9, 0.05, 0.05], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0.1, 0.2, 0.7]]
                .concat();
        let (text, conf) = ctc_decode(&probs, 3, &charset);
        assert_eq!(text, "aab");
        assert!((conf - (0.8 + 0.7 + 0.8) / 3.0).abs() < 1e-6);
        assert_eq!(ctc_decode(&[1.0, 0.0, 0.0], 3, &charset), (String::new(), 0.0));
    }

    #[test]
    fn a_gap_the_space_nearly_won_is_a_space_between_words_only() {
        let charset: Vec<String> = ["a", "图", " "].map(String::from).to_vec();
        // a, a gap where the space reaches 0.3, a; then the same gap between two Chinese
        // characters; a gap of 0.1 stays closed.
        let step = |c: usize, space: f32| {
            let mut v = vec![0.0f32; 4];
            v[3] = space;
            v[c] = 1.0 - space;
            v
        };
        let probs = [step(1, 0.0), step(0, 0.3), step(1, 0.0), step(0, 0.1), step(1, 0.0)].concat();
        assert_eq!(ctc_decode(&probs, 4, &charset).0, "a aa");
        let probs = [step(2, 0.0), step(0, 0.3), step(2, 0.0)].concat();
        assert_eq!(ctc_decode(&probs, 4, &charset).0, "图图");
    }

    #[test]
    fn a_line_is_scaled_to_the_height_and_padded() {
        let line = RgbImage::from_pixel(100, 24, Rgb([255, 0, 0]));
        let data = input(&line, HEIGHT, 320);
        let plane = (HEIGHT * 320) as usize;
        assert_eq!(data.len(), 3 * plane);
        // Red is the third of the BGR planes; the line is 200 wide, then padding.
        assert_eq!((data[2 * plane], data[0]), (1.0, -1.0));
        assert_eq!(data[2 * plane + 250], 0.0);
    }

    #[test]
    fn a_margin_repeats_the_edges() {
        let mut cut = RgbImage::from_pixel(40, 20, Rgb([255, 255, 255]));
        cut.put_pixel(0, 0, Rgb([0, 0, 0]));
        let wide = with_margin(&cut);
        assert_eq!(wide.dimensions(), (60, 40));
        assert_eq!(wide.get_pixel(0, 0), &Rgb([0, 0, 0]));
        assert_eq!(
            (wide.get_pixel(9, 9), wide.get_pixel(10, 10), wide.get_pixel(11, 11)),
            (&Rgb([0, 0, 0]), &Rgb([0, 0, 0]), &Rgb([255, 255, 255]))
        );
        // 60 × 40 read at 48 high keeps the cut's horizontal scale (48 / 20): 144 wide.
        let (data, width) = line_input(&cut);
        assert_eq!((width, data.len()), (144, 3 * 48 * 144));
    }

    #[test]
    fn a_tall_cut_is_turned_to_read_across() {
        use super::super::geometry::Point;
        let img = RgbImage::from_pixel(50, 200, Rgb([0, 0, 0]));
        let quad = Quad([Point::new(0.0, 0.0), Point::new(20.0, 0.0), Point::new(20.0, 100.0), Point::new(0.0, 100.0)]);
        let cut = crop(&img, &quad).expect("a projection");
        assert_eq!(cut.dimensions(), (100, 20));
    }
}
