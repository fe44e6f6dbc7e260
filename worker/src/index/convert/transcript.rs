//! Transcripts with cue times: WebVTT (`.vtt`) and SubRip (`.srt`). One document whose
//! sections are stretches of about [`SECTION_SECONDS`], each headed by the time it starts
//! (`## 12:31`), so a passage found, cited or shown says where in the recording it is. A
//! cue's speaker (WebVTT's `<v Name>`) starts a line `Name: …`; other markup (`<i>`, `<c.x>`,
//! timestamps inside a cue) is dropped; header, `NOTE`, `STYLE` and `REGION` blocks are not
//! text. SRT's sequence numbers are not text either.

use super::{ConvertError, Converted};

/// A new section starts at the first cue this many seconds after the section's first.
const SECTION_SECONDS: f64 = 60.0;

#[derive(Debug, PartialEq)]
struct Cue {
    start: f64,
    speaker: Option<String>,
    text: String,
}

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let text = crate::index::ingest::decode_text(bytes).map_err(|e| ConvertError::Transcript(e.to_string()))?;
    let cues = cues(&text);
    if cues.is_empty() {
        return Err(ConvertError::Transcript("no cue with a time (`00:01:02.000 --> …`)".into()));
    }
    let mut out = String::new();
    let mut section_start: Option<f64> = None;
    let mut speaker: Option<&str> = None;
    for cue in &cues {
        if section_start.is_none_or(|s| cue.start >= s + SECTION_SECONDS) {
            if section_start.is_some() {
                out.push_str("\n\n");
            }
            out.push_str(&format!("## {}\n\n", clock(cue.start)));
            section_start = Some(cue.start);
            speaker = None;
        } else if cue.speaker.is_some() && cue.speaker.as_deref() != speaker {
            out.push_str("\n\n");
        } else {
            out.push(' ');
        }
        if let Some(name) = cue.speaker.as_deref().filter(|n| Some(*n) != speaker) {
            out.push_str(&format!("{name}: "));
            speaker = Some(name);
        }
        out.push_str(&cue.text);
    }
    out.push('\n');
    Ok(Converted { title: None, text: out })
}

/// The cues of a WebVTT or SRT file, in file order, with their text on one line.
fn cues(text: &str) -> Vec<Cue> {
    // Blocks are separated by blank lines; a line of spaces is blank too.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text: String = text.lines().map(|l| if l.trim().is_empty() { "" } else { l }).collect::<Vec<_>>().join("\n");
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut lines = block.lines().skip_while(|l| !l.contains("-->"));
        let Some(timing) = lines.next() else { continue };
        let Some(start) = timing.split("-->").next().and_then(seconds) else { continue };
        let mut speaker = None;
        let mut words = Vec::new();
        for line in lines {
            let (who, said) = strip_markup(line);
            speaker = speaker.or(who);
            if !said.is_empty() {
                words.push(said);
            }
        }
        if !words.is_empty() {
            out.push(Cue { start, speaker, text: words.join(" ") });
        }
    }
    out
}

/// `hh:mm:ss.mmm`, `mm:ss.mmm` (WebVTT) or `hh:mm:ss,mmm` (SRT) as seconds.
fn seconds(t: &str) -> Option<f64> {
    let t = t.trim().replace(',', ".");
    let mut total = 0.0;
    let parts: Vec<&str> = t.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    for part in &parts {
        let v: f64 = part.trim().parse().ok()?;
        if !v.is_finite() || v < 0.0 {
            return None;
        }
        total = total * 60.0 + v;
    }
    Some(total)
}

/// A time as a person reads it in a recording: `12:31`, `1:02:03` past the hour.
fn clock(s: f64) -> String {
    let s = s.max(0.0) as u64;
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// A cue line's speaker (`<v Name>` or `<v.loud Name>`) and its text without markup, the
/// character references `&amp;`, `&lt;`, `&gt;`, `&nbsp;` read. A `<` is markup only when a
/// letter, `/` or digit follows it and a `>` closes it (SRT writes `a < b` as it is).
fn strip_markup(line: &str) -> (Option<String>, String) {
    let mut speaker = None;
    let mut text = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('<') {
        let tag_like = rest[open + 1..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '/');
        let close = rest[open..].find('>');
        let Some(close) = close.filter(|_| tag_like) else {
            text.push_str(&rest[..=open]);
            rest = &rest[open + 1..];
            continue;
        };
        text.push_str(&rest[..open]);
        let tag = &rest[open + 1..open + close];
        if let Some(v) = tag.strip_prefix('v').filter(|v| v.starts_with([' ', '.'])) {
            let name = v.split_once(' ').map_or("", |(_, n)| n).trim();
            if !name.is_empty() {
                speaker = Some(name.to_string());
            }
        }
        rest = &rest[open + close + 1..];
    }
    text.push_str(rest);
    let text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&nbsp;", " ").replace("&amp;", "&");
    (speaker, crate::index::ingest::collapse_whitespace(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webvtt_sections_by_the_minute_with_speakers() {
        let vtt = "WEBVTT - a talk\n\nNOTE written by hand\n\nSTYLE\n::cue { color: red }\n\n\
1\n00:00:01.000 --> 00:00:04.000 align:start\n<v Ann>Welcome to the <i>search</i> talk.\n\n\
00:00:05.000 --> 00:00:08.000\n<v Ann>Today: tantivy &amp; BM25.\n\n\
00:00:09.500 --> 00:00:12.000\n<v.loud Bob>Questions at the end!\n\n\
12:31.000 --> 12:35.000\n<v Bob>The index is a <00:12:32.000>segment list.\n";
        let c = convert(vtt.as_bytes()).unwrap();
        assert_eq!(c.title, None);
        assert_eq!(
            c.text,
            "## 0:01\n\nAnn: Welcome to the search talk. Today: tantivy & BM25.\n\nBob: Questions at the end!\n\n\
## 12:31\n\nBob: The index is a segment list.\n"
        );
    }

    #[test]
    fn srt_with_comma_times_and_numbers() {
        let srt = "1\r\n00:00:00,500 --> 00:00:02,000\r\nHello there.\r\nSecond line.\r\n  \r\n\
7\r\n00:00:03,000 --> 00:00:04,000\r\nIf a < b and c > d.\r\n\r\n\
2\r\n01:02:03,000 --> 01:02:05,000\r\nLater on.\r\n";
        let c = convert(srt.as_bytes()).unwrap();
        assert_eq!(c.text, "## 0:00\n\nHello there. Second line. If a < b and c > d.\n\n## 1:02:03\n\nLater on.\n");
        assert!(convert(b"WEBVTT\n\nno cues here\n").is_err());
        assert_eq!(seconds("1:2:3:4"), None);
        assert_eq!(seconds("00:-1.0"), None);
    }
}
