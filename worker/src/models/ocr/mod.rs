//! Text in pictures: PaddleOCR's PP-OCRv4 models (Chinese and English) on ONNX Runtime, in
//! the pipeline of their reference implementation (rapidocr-onnxruntime): detection
//! ([`detect`]) → boxes in reading order ([`layout`]) → each box cut straight, turned upright
//! by the angle classifier and read by the recognizer ([`recognize`]) → lines of text with
//! their confidence.

mod detect;
pub mod geometry;
mod layout;
mod recognize;

use super::runtime::{self, infer, ModelError, Result};
use geometry::Quad;
use image::RgbImage;
use ort::session::Session;
use ort::value::Tensor;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A recognized line below this confidence is left out (the reference's `text_score`).
const MIN_CONFIDENCE: f32 = 0.5;
/// Lines per classifier run (the reference's batch).
const BATCH: usize = 6;

/// The OCR models' files, relative to the model cache (`<cache>/models`).
pub const DETECTOR: &str = "SWHL/RapidOCR/PP-OCRv4/ch_PP-OCRv4_det_infer.onnx";
pub const RECOGNIZER: &str = "SWHL/RapidOCR/PP-OCRv4/ch_PP-OCRv4_rec_infer.onnx";
pub const CLASSIFIER: &str = "SWHL/RapidOCR/PP-OCRv4/ch_ppocr_mobile_v2.0_cls_infer.onnx";

/// One recognized line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub text: String,
    /// The recognizer's mean probability of the line's characters.
    pub confidence: f32,
    pub quad: Quad,
}

/// What a picture says: its lines in reading order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recognized {
    pub lines: Vec<Line>,
}

impl Recognized {
    /// The text: the lines of a row joined by a space, rows by newlines.
    pub fn text(&self) -> String {
        layout::rows(&self.lines).iter().map(|row| row.join(" ")).collect::<Vec<_>>().join("\n")
    }

    /// The mean confidence of the lines (0 when there are none).
    pub fn confidence(&self) -> f32 {
        if self.lines.is_empty() {
            return 0.0;
        }
        self.lines.iter().map(|l| l.confidence).sum::<f32>() / self.lines.len() as f32
    }
}

/// A cut's text and the recognizer's confidence in it.
type LineRead = (String, f32);
/// What one lane read: each cut's place among the picture's cuts and its reading.
type LaneRead = Result<Vec<(usize, LineRead)>>;

/// The three models' sessions and the recognizer's characters.
pub struct OcrEngine {
    detector: Mutex<Session>,
    /// The recognizer once per lane, each on one thread: a picture's lines are read a lane
    /// each, at once. A line is too small a run for ONNX Runtime to share its work among
    /// threads well: two lines at once on a thread each read 1.25-1.5 times as many lines per
    /// second as one line at a time on two threads (docs/ocr.md).
    recognizers: Vec<Mutex<Session>>,
    classifier: Mutex<Session>,
    charset: Vec<String>,
}

impl OcrEngine {
    /// Loads the models from `models_dir`: the detector and the classifier with `threads`
    /// intra-op threads, the recognizer as `threads` lanes of one thread.
    pub fn load(cache_dir: &Path, models_dir: &Path, threads: usize) -> Result<OcrEngine> {
        // Pictures and lines differ in size by orders of magnitude: without an arena, the
        // memory of a large picture's run is given back (docs/ocr.md).
        let detector = runtime::session_without_arena(cache_dir, &models_dir.join(DETECTOR), threads)?;
        let recognizers = (0..threads.max(1))
            .map(|_| runtime::session_without_arena(cache_dir, &models_dir.join(RECOGNIZER), 1))
            .collect::<Result<Vec<_>>>()?;
        let classifier = runtime::session_without_arena(cache_dir, &models_dir.join(CLASSIFIER), threads)?;
        let metadata = recognizers[0].metadata().map_err(infer)?;
        let characters = metadata
            .custom("character")
            .ok_or_else(|| ModelError::Shape("the recognizer has no `character` metadata".into()))?;
        let charset = recognize::charset(&characters);
        drop(metadata);
        Ok(OcrEngine {
            detector: Mutex::new(detector),
            recognizers: recognizers.into_iter().map(Mutex::new).collect(),
            classifier: Mutex::new(classifier),
            charset,
        })
    }

    /// The lines of `image`, read by `deadline` (past it the run stops and this is an error).
    pub fn read(&self, image: &RgbImage, deadline: Instant) -> Result<Recognized> {
        runtime::guarded("ocr", || {
            let started = Instant::now();
            let boxes = layout::reading_order(self.detect(image, deadline)?);
            let detected = started.elapsed();
            let cuts: Vec<(Quad, RgbImage)> =
                boxes.into_iter().filter_map(|q| recognize::crop(image, &q).map(|c| (q, c))).collect();
            let cut = started.elapsed();
            let upside_down = self.upside_down(&cuts, deadline)?;
            let classified = started.elapsed();
            let read = self.read_lines(&cuts, &upside_down, deadline)?;
            tracing::debug!(
                "ocr: {}x{} picture, {} lines ({} columns): detection {detected:.2?}, cutting {:.2?}, angles {:.2?}, reading {:.2?}",
                image.width(),
                image.height(),
                cuts.len(),
                cuts.iter().map(|(_, c)| c.width()).sum::<u32>(),
                cut - detected,
                classified - cut,
                started.elapsed() - classified
            );
            let lines = cuts
                .into_iter()
                .zip(read)
                .filter(|(_, (text, confidence))| *confidence >= MIN_CONFIDENCE && !text.trim().is_empty())
                .map(|((quad, _), (text, confidence))| Line { text: text.trim().to_string(), confidence, quad })
                .collect();
            Ok(Recognized { lines })
        })
    }

    fn detect(&self, image: &RgbImage, deadline: Instant) -> Result<Vec<Quad>> {
        let (data, w, h) = detect::input(image);
        let tensor = Tensor::from_array((vec![1i64, 3, i64::from(h), i64::from(w)], data)).map_err(infer)?;
        let prob = run(&self.detector, tensor, deadline)?.1;
        Ok(detect::boxes(&prob, w, h, image.dimensions()))
    }

    /// Which cuts the classifier reads as upside down.
    fn upside_down(&self, cuts: &[(Quad, RgbImage)], deadline: Instant) -> Result<Vec<bool>> {
        let mut out = Vec::with_capacity(cuts.len());
        for batch in cuts.chunks(BATCH) {
            let mut data = Vec::new();
            for (_, cut) in batch {
                data.extend(recognize::input(cut, recognize::HEIGHT, recognize::CLS_WIDTH));
            }
            let shape = vec![batch.len() as i64, 3, i64::from(recognize::HEIGHT), i64::from(recognize::CLS_WIDTH)];
            let tensor = Tensor::from_array((shape, data)).map_err(infer)?;
            let (_, probs) = run(&self.classifier, tensor, deadline)?;
            out.extend(probs.chunks_exact(2).map(|p| p[1] > p[0] && p[1] >= recognize::CLS_THRESHOLD));
        }
        out.resize(cuts.len(), false);
        Ok(out)
    }

    /// Each cut's text and confidence, in the cuts' order: the lanes take the next unread cut
    /// until none is left (lines differ in width, so a fixed share would leave a lane idle).
    fn read_lines(&self, cuts: &[(Quad, RgbImage)], upside_down: &[bool], deadline: Instant) -> Result<Vec<LineRead>> {
        let next = AtomicUsize::new(0);
        let lanes = self.recognizers.len().min(cuts.len());
        let lane_results: Vec<LaneRead> = std::thread::scope(|scope| {
            let lane = |session: &Mutex<Session>| {
                let mut read = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((_, cut)) = cuts.get(i) else { return Ok(read) };
                    let turned = upside_down.get(i).copied().unwrap_or(false);
                    match self.read_line(session, cut, turned, deadline) {
                        Ok(line) => read.push((i, line)),
                        Err(e) => {
                            // The other lanes stop after their current line.
                            next.store(cuts.len(), Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                }
            };
            let handles: Vec<_> =
                self.recognizers[..lanes].iter().map(|session| scope.spawn(move || lane(session))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(ModelError::Inference("an OCR lane panicked".into()))))
                .collect()
        });
        let mut read = vec![(String::new(), 0.0); cuts.len()];
        for lane in lane_results {
            for (i, line) in lane? {
                read[i] = line;
            }
        }
        Ok(read)
    }

    /// A cut's text and confidence on `session`; a cut the classifier reads as upside down
    /// (`turned`) is read both ways and the more confident reading kept: the classifier is a
    /// second opinion, as on a long line (squeezed into its 192 × 48 input) it often reads
    /// upright text as upside down.
    fn read_line(&self, session: &Mutex<Session>, cut: &RgbImage, turned: bool, deadline: Instant) -> Result<LineRead> {
        let mut best = self.recognize(session, cut, deadline)?;
        if turned {
            let other = self.recognize(session, &image::imageops::rotate180(cut), deadline)?;
            if other.1 > best.1 {
                best = other;
            }
        }
        Ok(best)
    }

    /// A cut's text and confidence, read alone at its own width (padded into a batch of wider
    /// lines, the recognizer drops spaces), with a margin around it.
    fn recognize(&self, session: &Mutex<Session>, cut: &RgbImage, deadline: Instant) -> Result<LineRead> {
        let (data, width) = recognize::line_input(cut);
        let tensor =
            Tensor::from_array((vec![1i64, 3, i64::from(recognize::HEIGHT), i64::from(width)], data)).map_err(infer)?;
        let (shape, probs) = run(session, tensor, deadline)?;
        match shape.as_slice() {
            [1, _, classes] if *classes == self.charset.len() + 1 => {
                Ok(recognize::ctc_decode(&probs, *classes, &self.charset))
            }
            other => Err(ModelError::Shape(format!("recognizer output of shape {other:?}"))),
        }
    }
}

/// Runs `session` on one input by `deadline`; its first output as (shape, data).
fn run(session: &Mutex<Session>, input: Tensor<f32>, deadline: Instant) -> Result<(Vec<usize>, Vec<f32>)> {
    let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
    runtime::with_deadline(deadline, |options| {
        let outputs = session.run_with_options(ort::inputs![input], options).map_err(infer)?;
        let (shape, data) = outputs[0].try_extract_tensor::<f32>().map_err(infer)?;
        Ok((shape.iter().map(|&d| d.max(0) as usize).collect(), data.to_vec()))
    })
}

/// `image`'s pixels as three planes in BGR order (the models' training order), scaled to
/// -1..1, each plane `width` columns wide (at least the image's: the columns right of it are 0).
fn planes_bgr(image: &RgbImage, width: u32) -> Vec<f32> {
    let width = width.max(image.width()) as usize;
    let plane = image.height() as usize * width;
    let mut out = vec![0.0f32; 3 * plane];
    for (x, y, p) in image.enumerate_pixels() {
        let at = y as usize * width + x as usize;
        for (c, v) in [p[2], p[1], p[0]].into_iter().enumerate() {
            out[c * plane + at] = f32::from(v) / 127.5 - 1.0;
        }
    }
    out
}
