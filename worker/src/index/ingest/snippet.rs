//! Query-dependent snippet windows.

use super::{to_u32, Snippet};

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A term occurrence, in char indices: [start, end).
#[derive(Debug, Clone, Copy)]
struct Hit {
    start: usize,
    end: usize,
    term: usize,
}

/// Finds the best window of `text` (at most `max_chars` chars, cut at word
/// boundaries) containing the most distinct `terms` (matched
/// case-insensitively on word prefixes: "socket" matches "sockets"). Ties
/// prefer more occurrences, then the earliest window. Without any match the
/// window is the start of the text.
pub fn snippet(text: &str, terms: &[String], max_chars: usize) -> Snippet {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    if max_chars == 0 || n == 0 {
        return Snippet { text: String::new(), line_offset: 0 };
    }

    let mut norm_terms: Vec<String> = terms.iter().map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty()).collect();
    norm_terms.sort();
    norm_terms.dedup();

    let hits = find_hits(text, &chars, &norm_terms);
    let (start, end) = match best_window(&hits, norm_terms.len(), max_chars) {
        Some((ms, me)) => place(&chars, ms, me, max_chars),
        None => {
            let start = chars.iter().position(|&(_, c)| !c.is_whitespace()).unwrap_or(n);
            let end = (start + max_chars).min(n);
            (start, snap_end(&chars, start, end, start))
        }
    };
    let byte = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let (bs, be) = (byte(start), byte(end));
    let window = text.get(bs..be).unwrap_or("");
    let trimmed = window.trim();
    let lead = window.len() - window.trim_start().len();
    let line_offset = text.get(..bs + lead).map_or(0, |s| s.bytes().filter(|&b| b == b'\n').count());
    Snippet { text: trimmed.to_string(), line_offset: to_u32(line_offset) }
}

fn find_hits(text: &str, chars: &[(usize, char)], terms: &[String]) -> Vec<Hit> {
    let mut hits = Vec::new();
    if terms.is_empty() {
        return hits;
    }
    let simple: Vec<bool> = terms.iter().map(|t| t.chars().all(is_word)).collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_word(chars[i].1) {
            i += 1;
            continue;
        }
        let ws = i;
        while i < chars.len() && is_word(chars[i].1) {
            i += 1;
        }
        let we = i;
        let bs = chars[ws].0;
        let be = chars.get(we).map_or(text.len(), |&(b, _)| b);
        let word = text.get(bs..be).unwrap_or("").to_lowercase();
        for (ti, term) in terms.iter().enumerate() {
            let end = if simple[ti] {
                word.starts_with(term.as_str()).then_some(we)
            } else {
                // Terms with punctuation ("c++", "foo-bar"): compare the text
                // from the word start over the term's length.
                let tl = term.chars().count();
                let end = (ws + tl).min(chars.len());
                let bend = chars.get(end).map_or(text.len(), |&(b, _)| b);
                let cand = text.get(bs..bend).unwrap_or("").to_lowercase();
                cand.starts_with(term.as_str()).then_some(end.max(we))
            };
            if let Some(end) = end {
                hits.push(Hit { start: ws, end, term: ti });
            }
        }
    }
    hits
}

/// Char range [first hit start, last hit end) of the best window.
fn best_window(hits: &[Hit], n_terms: usize, max_chars: usize) -> Option<(usize, usize)> {
    let mut counts = vec![0usize; n_terms];
    let mut distinct = 0usize;
    let mut best: Option<(usize, usize, usize, usize)> = None; // (distinct, hits, i, j)
    let mut i = 0;
    for j in 0..hits.len() {
        if counts[hits[j].term] == 0 {
            distinct += 1;
        }
        counts[hits[j].term] += 1;
        while i < j && hits[j].end.saturating_sub(hits[i].start) > max_chars {
            counts[hits[i].term] -= 1;
            if counts[hits[i].term] == 0 {
                distinct -= 1;
            }
            i += 1;
        }
        let cand = (distinct, j + 1 - i, i, j);
        let better = match best {
            None => true,
            Some((d, h, _, _)) => (cand.0, cand.1) > (d, h),
        };
        if better {
            best = Some(cand);
        }
    }
    let (_, _, i, j) = best?;
    let start = hits[i].start;
    let end = hits[i..=j].iter().map(|h| h.end).max().unwrap_or(hits[j].end);
    Some((start, end.min(start + max_chars)))
}

/// Places a window of at most `max_chars` around [ms, me), snapped to word
/// boundaries.
fn place(chars: &[(usize, char)], ms: usize, me: usize, max_chars: usize) -> (usize, usize) {
    let n = chars.len();
    let slack = max_chars.saturating_sub(me - ms);
    let mut start = ms - (slack / 2).min(ms);
    let mut end = (start + max_chars).min(n);
    if end - start < max_chars {
        start = end.saturating_sub(max_chars).min(ms);
    }
    end = end.max(me);
    // Start: prefer just after whitespace, else a word start, else ms.
    if start > 0 && !chars[start - 1].1.is_whitespace() {
        start = (start..=ms)
            .find(|&p| chars[p - 1].1.is_whitespace())
            .or_else(|| (start..=ms).find(|&p| !is_word(chars[p - 1].1) && is_word(chars[p].1)))
            .unwrap_or(ms);
    }
    while start < ms && chars[start].1.is_whitespace() {
        start += 1;
    }
    (start, snap_end(chars, start, end, me))
}

/// Moves `end` back so the window does not cut a word, but not below `min`.
fn snap_end(chars: &[(usize, char)], start: usize, end: usize, min: usize) -> usize {
    let n = chars.len();
    if end >= n || chars[end].1.is_whitespace() || end == 0 || chars[end - 1].1.is_whitespace() {
        return end;
    }
    let floor = min.max(start + 1);
    (floor..end)
        .rev()
        .find(|&q| chars[q].1.is_whitespace())
        .or_else(|| (floor..end).rev().find(|&q| is_word(chars[q - 1].1) && !is_word(chars[q].1)))
        .unwrap_or(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn no_terms_gives_start() {
        let s = snippet("  alpha beta gamma delta", &[], 12);
        assert_eq!(s.text, "alpha beta");
        assert_eq!(s.line_offset, 0);
        let s = snippet("\n\nalpha beta", &t(&["zzz"]), 100);
        assert_eq!(s.text, "alpha beta");
        assert_eq!(s.line_offset, 2);
    }

    #[test]
    fn empty_and_zero() {
        assert_eq!(snippet("", &t(&["a"]), 10).text, "");
        assert_eq!(snippet("abc", &t(&["a"]), 0).text, "");
    }

    #[test]
    fn finds_term_later_with_line_offset() {
        let text = "line one here\nline two here\nthe sockets are open\nline four";
        let s = snippet(text, &t(&["socket"]), 20);
        assert!(s.text.contains("sockets"), "{:?}", s.text);
        assert!(s.text.chars().count() <= 20);
        let start = text.find(&s.text).unwrap();
        assert_eq!(s.line_offset as usize, text[..start].matches('\n').count());
    }

    #[test]
    fn prefers_more_distinct_terms() {
        let filler = "lorem ipsum dolor sit amet ".repeat(10);
        let text = format!("alpha alpha alpha {filler} alpha and beta together {filler}");
        let s = snippet(&text, &t(&["alpha", "beta"]), 40);
        assert!(s.text.contains("alpha") && s.text.contains("beta"), "{:?}", s.text);
        assert!(s.text.chars().count() <= 40);
    }

    #[test]
    fn case_insensitive_and_unicode() {
        let text = "Прежде всего. Über die ÜBERSETZUNG von Texten spricht man.";
        let s = snippet(text, &t(&["übersetz"]), 25);
        assert!(s.text.contains("ÜBERSETZUNG"), "{:?}", s.text);
        assert!(s.text.chars().count() <= 25);
    }

    #[test]
    fn word_boundaries() {
        let text = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj";
        let s = snippet(text, &t(&["eeee"]), 16);
        assert!(s.text.contains("eeee"));
        for w in s.text.split(' ') {
            assert_eq!(w.len(), 4, "{:?}", s.text);
        }
        assert!(s.text.chars().count() <= 16);
    }

    #[test]
    fn punctuation_terms() {
        let s = snippet("we like c++ a lot and rust too", &t(&["c++"]), 12);
        assert!(s.text.contains("c++"), "{:?}", s.text);
    }

    #[test]
    fn long_word_is_cut() {
        let text = format!("x {}", "a".repeat(50));
        let s = snippet(&text, &t(&["aaa"]), 10);
        assert_eq!(s.text, "a".repeat(10));
    }

    #[test]
    fn whole_text_when_small() {
        let s = snippet("short text", &t(&["text"]), 100);
        assert_eq!(s.text, "short text");
        assert_eq!(s.line_offset, 0);
    }
}
