//! Heading-aware chunking of a body into search units.
//!
//! The body is split into sections at headings (the heading line starts its
//! section). Consecutive whole sections are merged while the merged chunk
//! stays within [`TARGET_CHARS`]. A longer section is split at blank-line
//! paragraph boundaries; a single paragraph longer than [`PARAGRAPH_MAX_CHARS`]
//! is split at line ends, and a single line longer than that at sentence
//! ends or spaces (the only case where a chunk starts mid-line). A fenced
//! code block is never split. A heading stays with the text that follows it.

use super::lines::{char_count, LineIndex};

/// Preferred maximum chunk size in chars.
pub(crate) const TARGET_CHARS: usize = 1200;
/// A single paragraph up to this size is kept whole.
pub(super) const PARAGRAPH_MAX_CHARS: usize = 2000;

const NONE: usize = usize::MAX;

struct Layout<'a> {
    body: &'a str,
    idx: &'a LineIndex,
    blank: Vec<bool>,
    /// prefix[i] = chars of lines 0..i, each counted with its '\n'.
    prefix: Vec<usize>,
    /// For a line inside a fenced block: the block's last line.
    atomic_end: Vec<usize>,
}

impl Layout<'_> {
    /// Chars of lines a..=b joined with '\n'.
    fn span(&self, a: usize, b: usize) -> usize {
        (self.prefix[b + 1] - self.prefix[a]).saturating_sub(1)
    }

    fn bytes(&self, a: usize, b: usize) -> (usize, usize) {
        (self.idx.line_start(a), self.idx.line_end(self.body, b))
    }
}

/// Accumulated output: first line and byte range.
#[derive(Debug, Clone, Copy)]
struct Piece {
    first: usize,
    start: usize,
    end: usize,
}

/// Returns byte ranges (start, end) of chunks of `body`, in order.
/// `headings` and `fences` are 0-based inclusive line ranges.
pub(super) fn chunk_spans(
    body: &str,
    idx: &LineIndex,
    headings: &[(usize, usize)],
    fences: &[(usize, usize)],
) -> Vec<(usize, usize)> {
    let n = idx.line_count();
    if n == 0 {
        return Vec::new();
    }
    let mut blank = Vec::with_capacity(n);
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0);
    for line in 0..n {
        let (s, e) = (idx.line_start(line), idx.line_end(body, line));
        let text = body.get(s..e).unwrap_or("");
        blank.push(text.trim().is_empty());
        let total = prefix.last().copied().unwrap_or(0);
        prefix.push(total + char_count(text.as_bytes()) + 1);
    }
    let mut atomic_end = vec![NONE; n];
    for &(a, b) in fences {
        let b = b.min(n - 1);
        for slot in atomic_end.iter_mut().take(b + 1).skip(a) {
            if *slot == NONE || *slot < b {
                *slot = b;
            }
        }
    }
    let lay = Layout { body, idx, blank, prefix, atomic_end };

    // Section boundaries: each heading starts a section.
    let mut starts: Vec<(usize, usize)> =
        headings.iter().filter(|&&(a, _)| a < n).map(|&(a, b)| (a, b.min(n - 1))).collect();
    starts.sort_unstable();
    starts.dedup_by_key(|h| h.0);
    let mut sections: Vec<(usize, usize, Option<usize>)> = Vec::new(); // (first, last, heading_end)
    let mut cur = 0usize;
    let mut cur_heading = None;
    for &(a, b) in &starts {
        if a > cur {
            sections.push((cur, a - 1, cur_heading));
        }
        cur = a;
        cur_heading = Some(b);
    }
    sections.push((cur, n - 1, cur_heading));

    let mut out: Vec<(usize, usize)> = Vec::new();
    // Accumulated whole small sections.
    let mut acc: Option<Piece> = None;
    for (first, last, heading_end) in sections {
        let Some(a) = (first..=last).find(|&l| !lay.blank[l]) else {
            continue;
        };
        let Some(b) = (a..=last).rev().find(|&l| !lay.blank[l]) else {
            continue;
        };
        if lay.span(a, b) <= TARGET_CHARS {
            let (s, e) = lay.bytes(a, b);
            let piece = Piece { first: a, start: s, end: e };
            acc = match acc {
                Some(p) if lay.span(p.first, b) <= TARGET_CHARS => Some(Piece { end: e, ..p }),
                Some(p) => {
                    out.push((p.start, p.end));
                    Some(piece)
                }
                None => Some(piece),
            };
            continue;
        }
        if let Some(p) = acc.take() {
            out.push((p.start, p.end));
        }
        split_section(&lay, a, b, heading_end, &mut out);
    }
    if let Some(p) = acc {
        out.push((p.start, p.end));
    }
    out
}

/// Paragraph blocks (inclusive line ranges) of lines a..=b: runs of
/// non-blank lines, fenced blocks (with their blank lines) kept whole.
fn blocks(lay: &Layout<'_>, a: usize, b: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = a;
    while i <= b {
        if lay.blank[i] && lay.atomic_end[i] == NONE {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i;
        loop {
            if lay.atomic_end[j] != NONE && lay.atomic_end[j] > j {
                j = lay.atomic_end[j].min(b);
            }
            if j < b && (!lay.blank[j + 1] || lay.atomic_end[j + 1] != NONE) {
                j += 1;
            } else {
                break;
            }
        }
        while j > start && lay.blank[j] {
            j -= 1;
        }
        out.push((start, j));
        i = j + 1;
    }
    out
}

fn split_section(lay: &Layout<'_>, a: usize, b: usize, heading_end: Option<usize>, out: &mut Vec<(usize, usize)>) {
    let mut blks = blocks(lay, a, b);
    // A heading-only first block is glued to the next block.
    if let Some(he) = heading_end {
        if blks.len() >= 2 && blks[0].0 == a && blks[0].1 <= he {
            let end = blks[1].1;
            blks.remove(0);
            blks[0] = (a, end);
        }
    }
    let mut cur: Option<(usize, usize)> = None;
    for (s, e) in blks {
        let size = lay.span(s, e);
        if size > TARGET_CHARS {
            if let Some((cs, ce)) = cur.take() {
                let (bs, be) = lay.bytes(cs, ce);
                out.push((bs, be));
            }
            let heading = heading_end.filter(|_| s == a);
            split_block(lay, s, e, heading, out);
            continue;
        }
        cur = match cur {
            Some((cs, _)) if lay.span(cs, e) <= TARGET_CHARS => Some((cs, e)),
            Some((cs, ce)) => {
                out.push(lay.bytes(cs, ce));
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = cur {
        out.push(lay.bytes(cs, ce));
    }
}

/// Splits one oversized block. Blocks up to PARAGRAPH_MAX_CHARS and whole
/// fenced blocks are kept; otherwise lines (fences atomic) are packed.
/// `heading_end` is set when the block starts with the section heading,
/// which then stays attached to the following unit.
fn split_block(lay: &Layout<'_>, s: usize, e: usize, heading_end: Option<usize>, out: &mut Vec<(usize, usize)>) {
    let whole_fence = lay.atomic_end[s] != NONE && lay.atomic_end[s] >= e;
    if lay.span(s, e) <= PARAGRAPH_MAX_CHARS || whole_fence {
        out.push(lay.bytes(s, e));
        return;
    }
    let mut units = Vec::new();
    let mut i = s;
    while i <= e {
        let end = if lay.atomic_end[i] != NONE { lay.atomic_end[i].clamp(i, e) } else { i };
        if !(end == i && lay.blank[i]) {
            units.push((i, end));
        }
        i = end + 1;
    }
    let mut cur: Option<(usize, usize)> = None;
    for (us, ue) in units {
        let size = lay.span(us, ue);
        let is_fence = lay.atomic_end[us] != NONE;
        if size > TARGET_CHARS {
            // A pending heading-only unit is glued to this one (unless the
            // "heading" is itself huge, e.g. a long setext paragraph).
            let splits = !is_fence && size > PARAGRAPH_MAX_CHARS;
            let glue_fits = |cs: usize| {
                if is_fence {
                    true
                } else if splits {
                    lay.span(cs, us).saturating_sub(size) <= TARGET_CHARS / 2
                } else {
                    lay.span(cs, ue) <= PARAGRAPH_MAX_CHARS
                }
            };
            let glue = match cur.take() {
                Some((cs, ce)) if cs == s && heading_end.is_some_and(|he| ce <= he) && glue_fits(cs) => Some((cs, ce)),
                Some((cs, ce)) => {
                    out.push(lay.bytes(cs, ce));
                    None
                }
                None => None,
            };
            let (bs, be) = lay.bytes(us, ue);
            let first_start = glue.map_or(bs, |(cs, _)| lay.idx.line_start(cs));
            if splits {
                // chars of the glued heading plus the joining blank lines
                let carried = glue.map_or(0, |(cs, _)| lay.span(cs, us).saturating_sub(size));
                split_line(lay.body, bs, be, first_start, carried, out);
            } else {
                out.push((first_start, be));
            }
            continue;
        }
        cur = match cur {
            Some((cs, _)) if lay.span(cs, ue) <= TARGET_CHARS => Some((cs, ue)),
            Some((cs, ce)) => {
                out.push(lay.bytes(cs, ce));
                Some((us, ue))
            }
            None => Some((us, ue)),
        };
    }
    if let Some((cs, ce)) = cur {
        out.push(lay.bytes(cs, ce));
    }
}

/// Splits one long line (bytes start..end) into pieces of at most
/// TARGET_CHARS chars, preferring sentence ends, then spaces. The first
/// piece starts at `first_start` (<= start, to carry a heading) and has
/// `carried` fewer chars of budget.
fn split_line(body: &str, start: usize, end: usize, first_start: usize, carried: usize, out: &mut Vec<(usize, usize)>) {
    let Some(line) = body.get(start..end) else {
        return;
    };
    let mut pos = 0usize; // byte offset in `line`
    let mut first = true;
    while pos < line.len() {
        let budget = if first { TARGET_CHARS.saturating_sub(carried).max(TARGET_CHARS / 4) } else { TARGET_CHARS };
        let piece_start = |pos: usize, first: bool| if first { first_start } else { start + pos };
        let rest = &line[pos..];
        let trimmed = rest.trim_start();
        pos += rest.len() - trimmed.len();
        if trimmed.is_empty() {
            break;
        }
        // byte offset (in `trimmed`) just past TARGET_CHARS chars
        let limit = trimmed.char_indices().nth(budget).map_or(trimmed.len(), |(i, _)| i);
        if limit == trimmed.len() {
            out.push((piece_start(pos, first), start + line.len()));
            break;
        }
        let window = &trimmed[..limit];
        let min_cut = window.len() / 2;
        let sentence = window
            .char_indices()
            .rev()
            .take_while(|&(i, _)| i >= min_cut)
            .find(|&(i, c)| {
                matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | ';')
                    && trimmed.get(i + c.len_utf8()..).and_then(|r| r.chars().next()).is_some_and(char::is_whitespace)
            })
            .map(|(i, c)| i + c.len_utf8());
        let space = || {
            window
                .char_indices()
                .rev()
                .take_while(|&(i, _)| i >= min_cut)
                .find(|&(_, c)| c.is_whitespace())
                .map(|(i, _)| i)
        };
        let cut = sentence.or_else(space).unwrap_or(limit);
        let piece = trimmed[..cut].trim_end();
        if !piece.is_empty() {
            out.push((piece_start(pos, first), start + pos + piece.len()));
            first = false;
        }
        pos += cut.max(1).min(trimmed.len());
        // keep on a char boundary
        while pos < line.len() && !line.is_char_boundary(pos) {
            pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the chunker with structure found by a tiny line scanner:
    /// lines starting with '#' are headings, ``` toggles fences.
    fn chunks(body: &str) -> Vec<(String, usize, usize)> {
        let idx = LineIndex::new(body);
        let mut headings = Vec::new();
        let mut fences = Vec::new();
        let mut open = None;
        for (i, line) in body.lines().enumerate() {
            if line.starts_with("```") {
                match open.take() {
                    Some(s) => fences.push((s, i)),
                    None => open = Some(i),
                }
            } else if open.is_none() && line.starts_with('#') {
                headings.push((i, i));
            }
        }
        if let Some(s) = open {
            fences.push((s, idx.line_count() - 1));
        }
        chunk_spans(body, &idx, &headings, &fences)
            .into_iter()
            .map(|(s, e)| (body[s..e].to_string(), idx.line_of(s), idx.line_of(e.saturating_sub(1).max(s))))
            .collect()
    }

    fn para(words: usize, tag: &str) -> String {
        let mut s = String::new();
        for i in 0..words {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(tag);
        }
        s
    }

    fn covers_all_non_blank(body: &str, cs: &[(String, usize, usize)]) {
        let mut covered = vec![false; body.lines().count()];
        let mut prev_end: Option<usize> = None;
        for (_, s, e) in cs {
            if let Some(p) = prev_end {
                assert!(*s >= p, "overlap/out of order");
            }
            for c in covered.iter_mut().take(e + 1).skip(*s) {
                *c = true;
            }
            prev_end = Some(*e);
        }
        for (i, line) in body.lines().enumerate() {
            if !line.trim().is_empty() {
                assert!(covered[i], "line {i} not covered");
            }
        }
    }

    #[test]
    fn empty() {
        assert!(chunks("").is_empty());
        assert!(chunks("\n\n").is_empty());
    }

    #[test]
    fn small_sections_merge() {
        let body = "# A\n\none\n\n## B\n\ntwo\n";
        let cs = chunks(body);
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0], ("# A\n\none\n\n## B\n\ntwo".to_string(), 0, 6));
    }

    #[test]
    fn leading_blank_lines_skipped() {
        let cs = chunks("\n\ntext\n");
        assert_eq!(cs, vec![("text".to_string(), 2, 2)]);
    }

    #[test]
    fn sections_split_when_too_big() {
        let p = para(150, "word"); // 749 chars
        let body = format!("# A\n\n{p}\n\n# B\n\n{p}\n");
        let cs = chunks(&body);
        assert_eq!(cs.len(), 2);
        assert!(cs[0].0.starts_with("# A"));
        assert!(cs[1].0.starts_with("# B"));
        assert_eq!((cs[1].1, cs[1].2), (4, 6));
        covers_all_non_blank(&body, &cs);
    }

    #[test]
    fn long_section_split_at_paragraphs_with_heading_glued() {
        let p = para(100, "abcd"); // 499 chars
        let body = format!("# Big\n\n{p}\n\n{p}\n\n{p}\n\n{p}\n");
        let cs = chunks(&body);
        assert_eq!(cs.len(), 2);
        assert!(cs[0].0.starts_with("# Big\n\nabcd"));
        for c in &cs {
            assert!(c.0.chars().count() <= TARGET_CHARS, "{}", c.0.len());
        }
        covers_all_non_blank(&body, &cs);
    }

    #[test]
    fn fence_never_split() {
        let mut code = String::from("```rust\n");
        for i in 0..200 {
            code.push_str(&format!("let x{i} = {i};\n"));
            if i % 20 == 0 {
                code.push('\n');
            }
        }
        code.push_str("```");
        let body = format!("# Code\n\nintro\n\n{code}\n\nafter\n");
        let cs = chunks(&body);
        let fence_chunks: Vec<_> = cs.iter().filter(|c| c.0.contains("```rust")).collect();
        assert_eq!(fence_chunks.len(), 1);
        assert!(fence_chunks[0].0.contains(&code));
        for c in &cs {
            assert_eq!(c.0.matches("```").count() % 2, 0, "fence split: {}", c.0);
        }
        covers_all_non_blank(&body, &cs);
    }

    #[test]
    fn unclosed_fence_to_end() {
        let body = format!("{}\n\n```\n{}\n\n{}\n", para(200, "aaaaa"), para(200, "bbbbb"), para(200, "ccccc"));
        let cs = chunks(&body);
        assert_eq!(cs.len(), 2);
        assert!(cs[1].0.starts_with("```") && cs[1].0.ends_with("ccccc"));
    }

    #[test]
    fn medium_paragraph_kept_whole() {
        let p = para(300, "word"); // 1499 chars, single line
        let cs = chunks(&format!("{p}\n"));
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].0, p);
    }

    #[test]
    fn long_multiline_paragraph_split_at_lines() {
        let line = para(40, "word"); // 199 chars
        let body = vec![line.as_str(); 15].join("\n"); // ~3000 chars, one paragraph
        let cs = chunks(&format!("{body}\n"));
        assert!(cs.len() >= 3);
        for c in &cs {
            assert!(c.0.chars().count() <= TARGET_CHARS);
            assert!(c.0.starts_with("word") && c.0.ends_with("word"));
        }
        covers_all_non_blank(&body, &cs);
    }

    #[test]
    fn very_long_line_split_at_sentences() {
        let sentence = "Ünïcode sentence with words. "; // 29 chars
        let line = sentence.repeat(120); // ~3480 chars
        let body = format!("# T\n\n{}\n", line.trim_end());
        let cs = chunks(&body);
        assert!(cs.len() >= 3);
        let mut joined = String::new();
        for c in &cs {
            assert!(c.0.chars().count() <= TARGET_CHARS);
            if !joined.is_empty() {
                joined.push(' ');
            }
            joined.push_str(&c.0);
        }
        assert!(cs[1].0.starts_with("Ünïcode"));
        assert!(cs[0].0.ends_with('.'));
        assert_eq!(joined, format!("# T\n\n{}", line.trim_end()));
    }

    #[test]
    fn line_without_spaces_hard_cut() {
        let line = "é".repeat(3000);
        let cs = chunks(&line);
        assert_eq!(cs.len(), 3);
        assert_eq!(cs[0].0.chars().count(), TARGET_CHARS);
        assert_eq!(cs.iter().map(|c| c.0.chars().count()).sum::<usize>(), 3000);
    }

    #[test]
    fn big_section_then_small_sections() {
        let p = para(100, "abcd");
        let body = format!("# A\n\n{p}\n\n{p}\n\n{p}\n\n# B\n\nb\n\n# C\n\nc\n");
        let cs = chunks(&body);
        assert!(cs.last().unwrap().0.starts_with("# B\n\nb\n\n# C"));
        covers_all_non_blank(&body, &cs);
    }
}
