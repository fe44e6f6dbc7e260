//! Pictures' text, found in the background. A picture is indexed at once by its name; its
//! words follow when OCR has read it: the sync asks for a reading ([`Readings::request`]), the
//! OCR thread ([`spawn`]) reads the picture on the models' threads, keeps the result by the
//! file's SHA-256 (so a rescan, a rename or a copy is never read twice) and syncs the file
//! again, which then finds its text ([`Readings::get`]). Until that sync has ended, the
//! document is still waiting ([`Readings::is_waiting`]): a reader is never told that OCR has
//! read it beside the text from before.
//!
//! A picture that cannot be read (corrupt, too large, a decompression bomb) is that file's
//! error: its reading records why, and the document stays indexed by its name.
//!
//! Documents that show pictures (DOCX, PPTX, ODP) are read the same way, by the document's
//! hash: their text is their own at once, with the text of their pictures after it once OCR
//! has read them ([`read_embedded`]).

use crate::index::convert::{self, Format, PictureData};
use crate::index::Indexing;
use crate::models::ocr::OcrEngine;
use image::{ImageReader, Limits, RgbImage};
use protocol::source_kind::{source_kind, SourceKind};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// The engine a reading names.
pub const ENGINE: &str = "PP-OCRv4";
/// The version of the reading pipeline (`models::ocr` and [`read`], [`read_scan`]): bumped when
/// a change there changes what a picture reads as. A kept reading of another version is not
/// used: the picture is read again, as a new one would be.
pub const PIPELINE: u32 = 1;
/// A picture with a side longer than this is not read (a 20,000 × 20,000 image is refused).
pub const MAX_SIDE_PX: u32 = 12_000;
/// Nor one with more pixels than this.
pub const MAX_PIXELS: u64 = 40_000_000;
/// Memory a picture's decoding may take at most.
const MAX_DECODE_BYTES: u64 = 512 << 20;
/// A picture in a document narrower or lower than this holds no word (an icon, a rule).
const MIN_EMBEDDED_SIDE_PX: u32 = 16;
/// The longest one picture's OCR may take.
const READ_TIMEOUT: Duration = Duration::from_secs(120);

/// What OCR found in a picture (or why it found nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reading {
    /// The recognized lines, rows joined by newlines.
    pub text: String,
    /// The mean confidence of the lines (0 to 1).
    pub confidence: f32,
    pub lines: u32,
    pub engine: String,
    /// The [`PIPELINE`] that made it (0 in readings kept before it was recorded).
    #[serde(default)]
    pub pipeline: u32,
    /// Why the picture could not be read; the text is then empty.
    pub error: Option<String>,
}

impl Reading {
    /// The reading of a document that shows no picture.
    fn of_nothing() -> Reading {
        Reading {
            text: String::new(),
            confidence: 0.0,
            lines: 0,
            engine: ENGINE.into(),
            pipeline: PIPELINE,
            error: None,
        }
    }

    fn failed(error: String) -> Reading {
        Reading { error: Some(error), ..Reading::of_nothing() }
    }
}

/// A picture waiting for OCR.
#[derive(Debug, Clone, PartialEq)]
struct Pending {
    collection: String,
    rel: String,
    hash: String,
}

/// The pictures waiting for a reading: those queued, and the one being read and synced.
#[derive(Debug, Default)]
struct Queue {
    waiting: VecDeque<Pending>,
    /// Taken from the queue by [`Readings::next`] and held until [`Readings::finished`]:
    /// read, kept, and its document synced with the text.
    current: Option<Pending>,
}

/// The readings kept on disk (one JSON file per picture's SHA-256) and the queue of pictures
/// waiting for one.
pub struct Readings {
    dir: PathBuf,
    queue: Mutex<Queue>,
    wake: Condvar,
}

impl Readings {
    pub fn open(dir: PathBuf) -> Readings {
        Readings { dir, queue: Mutex::new(Queue::default()), wake: Condvar::new() }
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn path(&self, hash: &str) -> PathBuf {
        self.dir.join(format!("{hash}.json"))
    }

    /// The reading of the picture with this SHA-256, once this [`PIPELINE`] has made it.
    pub fn get(&self, hash: &str) -> Option<Reading> {
        let bytes = std::fs::read(self.path(hash)).ok()?;
        serde_json::from_slice::<Reading>(&bytes).ok().filter(|r| r.pipeline == PIPELINE)
    }

    fn put(&self, hash: &str, reading: &Reading) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let bytes = serde_json::to_vec(reading).map_err(std::io::Error::other)?;
        let tmp = self.dir.join(format!(".{hash}.tmp"));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(tmp, self.path(hash))
    }

    /// Asks for the picture at `rel` of `collection` (its bytes hashing to `hash`) to be read.
    pub fn request(&self, collection: &str, rel: &str, hash: &str) {
        let job = Pending { collection: collection.into(), rel: rel.into(), hash: hash.into() };
        let mut queue = self.queue();
        if !queue.waiting.contains(&job) {
            queue.waiting.push_back(job);
            self.wake.notify_one();
        }
    }

    /// Pictures waiting for OCR, the one being read included.
    pub fn pending(&self) -> usize {
        let queue = self.queue();
        queue.waiting.len() + usize::from(queue.current.is_some())
    }

    /// Whether the document at `rel` of `collection` waits for OCR: queued, or being read, or
    /// its text being synced. A reading kept under its hash is not yet in its text then (nor
    /// in a copy's, whose own sync is still queued).
    pub fn is_waiting(&self, collection: &str, rel: &str) -> bool {
        let queue = self.queue();
        let is = |p: &Pending| p.collection == collection && p.rel == rel;
        queue.current.as_ref().is_some_and(is) || queue.waiting.iter().any(is)
    }

    /// The next picture to read, which stays the current one until [`Readings::finished`].
    fn next(&self, wait: Duration) -> Option<Pending> {
        let mut queue = self.queue();
        if queue.waiting.is_empty() {
            queue = self.wake.wait_timeout(queue, wait).unwrap_or_else(|p| p.into_inner()).0;
        }
        let job = queue.waiting.pop_front();
        queue.current.clone_from(&job);
        job
    }

    /// The current picture is read and its document synced.
    fn finished(&self) {
        self.queue().current = None;
    }
}

/// Why a picture of these bytes is not read, when its size says so (read from its header
/// alone): an unknown format, or more pixels than svc reads.
pub fn refusal(bytes: &[u8]) -> Option<String> {
    let reader = match ImageReader::new(Cursor::new(bytes)).with_guessed_format() {
        Ok(r) => r,
        Err(e) => return Some(format!("not a readable picture: {e}")),
    };
    match reader.into_dimensions() {
        Err(e) => Some(format!("not a readable picture: {e}")),
        Ok((w, h)) => too_large(w, h),
    }
}

fn too_large(w: u32, h: u32) -> Option<String> {
    (w > MAX_SIDE_PX || h > MAX_SIDE_PX || u64::from(w) * u64::from(h) > MAX_PIXELS).then(|| {
        format!("the picture is {w} × {h} pixels, over svc's limit of {MAX_SIDE_PX} a side and {MAX_PIXELS} pixels")
    })
}

/// The picture in `bytes` (the first frame of an animation) as RGB, within the limits.
pub fn decode(bytes: &[u8]) -> Result<RgbImage, String> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("not a readable picture: {e}"))?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE_PX);
    limits.max_image_height = Some(MAX_SIDE_PX);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    let image = reader.decode().map_err(|e| format!("not a readable picture: {e}"))?;
    if let Some(why) = too_large(image.width(), image.height()) {
        return Err(why);
    }
    Ok(image.to_rgb8())
}

/// Reads the picture in `bytes` with `engine`.
pub fn read(engine: &OcrEngine, bytes: &[u8]) -> Reading {
    match decode(bytes) {
        Ok(image) => read_image(engine, &image),
        Err(why) => Reading::failed(why),
    }
}

fn read_image(engine: &OcrEngine, image: &RgbImage) -> Reading {
    match engine.read(image, Instant::now() + READ_TIMEOUT) {
        Ok(found) => Reading {
            text: found.text(),
            confidence: (found.confidence() * 1000.0).round() / 1000.0,
            lines: found.lines.len() as u32,
            engine: ENGINE.into(),
            pipeline: PIPELINE,
            error: None,
        },
        Err(e) => Reading::failed(format!("OCR failed: {e}")),
    }
}

/// Asks again for the readings of indexed pictures and scans that have none (the queue is not
/// kept across a restart of the worker): active pictures, and PDFs indexed without text.
fn request_missing(w: &Indexing) {
    let collections: Vec<String> = w.core.settings.config().collections.iter().map(|c| c.name.clone()).collect();
    let empty = crate::index::ingest::mirror_of("");
    let conn = w.core.stores.catalog.reader();
    for name in collections {
        let Ok(states) = crate::stores::catalog::file_states(&conn, &name) else { continue };
        for (rel, state) in states {
            let wanted = match source_kind(&rel) {
                Some(SourceKind::Image) => true,
                Some(SourceKind::Pdf) => state.mirror_hash == empty && state.part_of.is_none(),
                // Whether it shows pictures is found when it is read: one without any is kept
                // as an empty reading, and not asked for again.
                Some(SourceKind::Docx | SourceKind::Slides) => true,
                _ => false,
            };
            if wanted && state.active && w.pictures.get(&state.source_hash).is_none() {
                w.pictures.request(&name, &rel, &state.source_hash);
            }
        }
    }
}

/// Reads, in this thread, every picture that waits for a reading (the CLI's in-process mode,
/// where no OCR thread runs: `svc collection add` and `svc update` end with it). How many
/// were read.
pub fn read_now(w: &Indexing) -> usize {
    request_missing(w);
    let mut read = 0;
    while let Some(job) = w.pictures.next(Duration::ZERO) {
        if w.cancel.load(Ordering::SeqCst) {
            break;
        }
        read_and_resync(w, &job);
        w.pictures.finished();
        read += 1;
    }
    read
}

/// Starts the OCR thread; it ends when the worker is dropped or shuts down.
pub fn spawn(worker: &Arc<Indexing>) {
    let weak: Weak<Indexing> = Arc::downgrade(worker);
    // What waits for a reading is asked for on the thread: it walks every file's state (a
    // third of a second at 200,000 notes), which the worker's start need not wait for.
    let started = std::thread::Builder::new().name("ocr".into()).spawn(move || {
        if let Some(w) = weak.upgrade() {
            request_missing(&w);
        }
        read_forever(&weak);
    });
    if let Err(e) = started {
        tracing::error!("could not start the OCR thread: {e}");
    }
}

/// The OCR thread's loop: reads each requested picture until the worker is cancelled or gone.
fn read_forever(weak: &Weak<Indexing>) {
    loop {
        let Some(w) = weak.upgrade() else { return };
        if w.cancel.load(Ordering::SeqCst) {
            return;
        }
        let Some(job) = w.pictures.next(Duration::from_secs(1)) else { continue };
        read_and_resync(&w, &job);
        w.pictures.finished();
        w.core.hooks.publish_status_soon();
        if w.pictures.pending() == 0 {
            give_back_freed_memory();
        }
    }
}

/// Returns the heap memory OCR freed to the system once the queue is empty. A picture's runs
/// allocate hundreds of megabytes (a page's detection, a wide line's recognition) and glibc
/// keeps what they free for the next allocation: after 50 pictures the worker held 350-370 MB
/// more than before them, all of it free. Between pictures it stays (their runs reuse it);
/// when the queue is empty it goes back (docs/ocr.md).
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)] // see the SAFETY comment inside
    {
        // SAFETY: malloc_trim only returns free heap pages to the kernel; it takes the
        // allocator's own locks and may be called from any thread at any time.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// Reads a queued picture unless its reading is kept already, keeps the reading, and syncs
/// the file again, so that its document takes the text. A picture whose bytes changed since it
/// was queued is not read for the old hash: the sync asks again for the new bytes. Nothing is
/// kept when the OCR models cannot be loaded (they may be put in place later): the picture
/// stays pending and is asked for again when the worker next starts.
fn read_and_resync(w: &Indexing, job: &Pending) {
    let Some(coll) = w.core.settings.config().find(&job.collection).cloned() else { return };
    let root = Path::new(&coll.path);
    if w.pictures.get(&job.hash).is_none() {
        let reading = match std::fs::read(root.join(&job.rel)) {
            Ok(bytes) if crate::digest::sha256_hex(&bytes) != job.hash => None,
            Ok(bytes) if embeds(&job.rel).is_some_and(|format| !convert::has_pictures(format, &bytes)) => {
                Some(Reading::of_nothing())
            }
            Ok(bytes) => match w.core.models.ocr() {
                Ok(engine) => Some(match (source_kind(&job.rel), embeds(&job.rel)) {
                    (_, Some(format)) => read_embedded(&engine, format, bytes),
                    (Some(SourceKind::Pdf), _) => read_scan(&engine, bytes),
                    _ => read(&engine, &bytes),
                }),
                Err(e) => {
                    tracing::warn!("{}: not read: the OCR models are not available: {e}", job.rel);
                    return;
                }
            },
            Err(e) => Some(Reading::failed(format!("cannot be read: {e}"))),
        };
        if let Some(reading) = reading {
            if let Err(e) = w.pictures.put(&job.hash, &reading) {
                // Not synced again: the sync would ask for the same reading, round and round.
                tracing::warn!("{}: the OCR result could not be kept: {e}", job.rel);
                return;
            }
        }
    }
    let _scan = w.scan_lock();
    if let Err(e) = w.indexer().sync_file(&coll, root, &job.rel, crate::stores::catalog::Origin::Sync) {
        tracing::warn!("{}: {}: {e}", job.collection, job.rel);
    }
}

/// The format of a document whose embedded pictures OCR reads (DOCX, PPTX, ODP), if `rel` is one.
pub fn embeds(rel: &str) -> Option<Format> {
    match source_kind(rel)? {
        kind @ (SourceKind::Docx | SourceKind::Slides) => Format::of(kind),
        _ => None,
    }
}

/// A document's own text with what OCR read in its pictures ([`read_embedded`]) after it.
pub fn with_text_in_pictures(text: String, reading: Option<&Reading>) -> String {
    match reading.map(|r| r.text.trim()).filter(|t| !t.is_empty()) {
        Some(found) => format!("{}\n\n{found}\n", text.trim_end()),
        None => text,
    }
}

/// The heading of the text found in a document's `n`th picture (1-based), on `slide` if any.
fn picture_heading(n: usize, slide: Option<u32>) -> String {
    match slide {
        Some(slide) => format!("## Picture {n} (slide {slide})"),
        None => format!("## Picture {n}"),
    }
}

/// Reads the pictures a document shows: the text of each picture that has some, after a
/// heading naming the picture ([`picture_heading`]). A picture that cannot be decoded (a
/// vector drawing, a broken file) or that is too small to hold a word is passed over: the
/// document keeps its own text whatever its pictures hold.
pub fn read_embedded(engine: &OcrEngine, format: Format, bytes: Vec<u8>) -> Reading {
    let pictures = match convert::embedded_pictures(format, bytes) {
        Ok(pictures) => pictures,
        Err(e) => return Reading::failed(e.to_string()),
    };
    let mut parts = Vec::new();
    let (mut lines, mut weighted) = (0u32, 0.0f32);
    for (i, picture) in pictures.iter().enumerate() {
        let image = match decode(&picture.bytes) {
            Ok(image) if image.width().min(image.height()) >= MIN_EMBEDDED_SIDE_PX => image,
            Ok(_) => continue,
            Err(why) => {
                tracing::debug!("{}: not read: {why}", picture.part);
                continue;
            }
        };
        let reading = read_image(engine, &image);
        if reading.error.is_some() || reading.text.trim().is_empty() {
            continue;
        }
        lines += reading.lines;
        weighted += reading.confidence * reading.lines as f32;
        parts.push(format!("{}\n\n{}", picture_heading(i + 1, picture.slide), reading.text));
    }
    let confidence = if lines == 0 { 0.0 } else { (weighted / lines as f32 * 1000.0).round() / 1000.0 };
    Reading { text: parts.join("\n\n"), confidence, lines, engine: ENGINE.into(), pipeline: PIPELINE, error: None }
}

/// The line that names a scanned page in its reading ([`read_scan`]).
fn page_line(page: u32) -> String {
    format!("# Page {page}")
}

/// The page of a scan's reading that line `line` (1-based) is on: `Page N` from the last page
/// line at or above it; `None` for a text that has none (a PDF with its own text).
pub fn page_at(text: &str, line: u32) -> Option<String> {
    text.lines()
        .take(line as usize)
        .filter_map(|l| l.strip_prefix("# Page ").filter(|n| n.parse::<u32>().is_ok()))
        .last()
        .map(|n| format!("Page {n}"))
}

/// Reads the page pictures of a scanned PDF: the pages' texts in order, each after a line
/// naming its page.
pub fn read_scan(engine: &OcrEngine, bytes: Vec<u8>) -> Reading {
    let pages = match convert::scanned_pages(bytes) {
        Ok(pages) => pages,
        Err(e) => return Reading::failed(e.to_string()),
    };
    if pages.is_empty() {
        return Reading::failed("the PDF has neither text nor page pictures".into());
    }
    let mut parts = Vec::new();
    let (mut lines, mut weighted) = (0u32, 0.0f32);
    for page in pages {
        let image = match page.data {
            PictureData::Encoded(encoded) => decode(&encoded),
            PictureData::Pixels { width, height, channels, samples } => pixels(width, height, channels, samples),
        };
        let reading = match image {
            Ok(image) => read_image(engine, &image),
            Err(why) => Reading::failed(why),
        };
        if let Some(why) = reading.error {
            return Reading::failed(format!("page {}: {why}", page.page));
        }
        lines += reading.lines;
        weighted += reading.confidence * reading.lines as f32;
        parts.push(format!("{}\n\n{}", page_line(page.page), reading.text));
    }
    let confidence = if lines == 0 { 0.0 } else { (weighted / lines as f32 * 1000.0).round() / 1000.0 };
    Reading { text: parts.join("\n\n"), confidence, lines, engine: ENGINE.into(), pipeline: PIPELINE, error: None }
}

/// An RGB picture of 8-bit gray or RGB samples, within the limits.
fn pixels(width: u32, height: u32, channels: u8, samples: Vec<u8>) -> Result<RgbImage, String> {
    if let Some(why) = too_large(width, height) {
        return Err(why);
    }
    let n = width as usize * height as usize;
    let rgb: Vec<u8> = match channels {
        1 => samples.iter().take(n).flat_map(|&v| [v, v, v]).collect(),
        _ => samples.into_iter().take(3 * n).collect(),
    };
    RgbImage::from_raw(width, height, rgb).ok_or_else(|| "the page picture is shorter than its size".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_of_a_scan_is_on_the_page_named_above_it() {
        let text = format!("{}\n\nfirst page\n\n{}\n\nsecond page", page_line(1), page_line(2));
        assert_eq!(page_at(&text, 3).as_deref(), Some("Page 1"));
        assert_eq!(page_at(&text, 5).as_deref(), Some("Page 2"));
        assert_eq!(page_at(&text, 7).as_deref(), Some("Page 2"));
        assert_eq!(page_at("# Page one\ntext", 2), None);
        assert_eq!(page_at("a PDF's own text", 1), None);
    }

    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut out = Vec::new();
        RgbImage::new(w, h).write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png).expect("png");
        out
    }

    #[test]
    fn a_huge_or_broken_picture_is_refused_from_its_header() {
        assert_eq!(refusal(&png(40, 30)), None);
        assert!(decode(&png(40, 30)).is_ok());
        let junk = b"\x89PNG\r\n\x1a\nthis is not a png".to_vec();
        assert!(refusal(&junk).is_some() && decode(&junk).is_err());
        // A 20,000 × 20,000 PNG header: refused before a pixel is decoded.
        let mut huge = png(1, 1);
        huge[16..20].copy_from_slice(&20_000u32.to_be_bytes());
        huge[20..24].copy_from_slice(&20_000u32.to_be_bytes());
        assert!(refusal(&huge).is_some() && decode(&huge).is_err());
        assert!(too_large(20_000, 20_000).is_some_and(|why| why.contains("20000 × 20000")));
        assert_eq!(too_large(4000, 3000), None);
    }

    #[test]
    fn readings_are_kept_by_hash_and_requests_queue_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let readings = Readings::open(dir.path().join("ocr"));
        assert_eq!(readings.get("abc"), None);
        let r = Reading {
            text: "hello".into(),
            confidence: 0.9,
            lines: 1,
            engine: ENGINE.into(),
            pipeline: PIPELINE,
            error: None,
        };
        readings.put("abc", &r).expect("put");
        assert_eq!(readings.get("abc"), Some(r));
        readings.request("notes", "a.png", "abc");
        readings.request("notes", "a.png", "abc");
        assert_eq!(readings.pending(), 1);
        assert_eq!(readings.next(Duration::ZERO).map(|p| p.rel), Some("a.png".into()));
        assert_eq!(readings.pending(), 1, "the picture being read still counts");
        readings.finished();
        assert_eq!(readings.pending(), 0);
    }

    #[test]
    fn a_picture_waits_until_its_document_has_taken_the_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let readings = Readings::open(dir.path().join("ocr"));
        readings.request("notes", "a.png", "abc");
        readings.request("notes", "copy of a.png", "abc");
        assert!(readings.is_waiting("notes", "a.png"));
        assert!(!readings.is_waiting("other", "a.png"));
        assert!(!readings.is_waiting("notes", "b.png"));
        // Read and kept: its document is being synced, the copy's sync is still queued.
        readings.next(Duration::ZERO);
        assert!(readings.is_waiting("notes", "a.png"));
        readings.finished();
        assert!(!readings.is_waiting("notes", "a.png"));
        assert!(readings.is_waiting("notes", "copy of a.png"));
    }

    #[test]
    fn a_reading_of_another_pipeline_is_read_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let readings = Readings::open(dir.path().join("ocr"));
        let old = Reading {
            text: "he1lo".into(),
            confidence: 0.5,
            lines: 1,
            engine: ENGINE.into(),
            pipeline: PIPELINE - 1,
            error: None,
        };
        readings.put("abc", &old).expect("put");
        assert_eq!(readings.get("abc"), None, "an older pipeline's reading is not used");
        // One kept before the version was recorded has none: it is not used either.
        std::fs::write(
            dir.path().join("ocr/def.json"),
            br#"{"text":"x","confidence":1.0,"lines":1,"engine":"PP-OCRv4","error":null}"#,
        )
        .expect("write");
        assert_eq!(readings.get("def"), None);
    }
}
