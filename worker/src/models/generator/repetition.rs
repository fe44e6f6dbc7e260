//! The loop guard: where a generation starts repeating itself.
//!
//! Small models under greedy decoding fall into loops: the same line or sentence again ("The
//! answer is:" twenty times), or a short run over and over (`_M_M_M_M…`). [`repeat_start`]
//! finds the byte where such a repetition begins, so the text is cut there and the generation
//! ends; [`tentative_from`] says from where the text could still turn into one, so a stream
//! holds that end back until it is certain.

/// A unit (line or sentence) shorter than this may repeat freely: "}" or "```" or "Yes." are
/// not loops.
const MIN_UNIT_CHARS: usize = 12;

/// Longest period of a short run.
const MAX_PERIOD: usize = 16;

/// A periodic end this long (in bytes, at least [`MIN_RUN_REPEATS`] periods) is a loop.
const MIN_RUN_BYTES: usize = 32;
const MIN_RUN_REPEATS: usize = 4;

/// Byte offset where `text` starts repeating itself, if it does: the start of a complete
/// line or sentence equal to an earlier one, or of the second period of a run that repeats a
/// short unit holding a letter or digit.
pub fn repeat_start(text: &str) -> Option<usize> {
    let units = repeated_unit(text);
    let run = periodic_run(text).map(|(start, period)| start + period);
    match (units, run) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// From where the end of `text` may still grow into a repetition: the start of an unfinished
/// unit that an earlier unit begins with, or of a periodic end. `text.len()` when neither.
pub fn tentative_from(text: &str) -> usize {
    let mut from = text.len();
    let spans = units(text);
    if let Some((start, end)) = spans.last().copied() {
        if !ends_unit(text) {
            let open = normalize(&text[start..end]);
            if !open.is_empty()
                && spans[..spans.len() - 1].iter().any(|&(s, e)| normalize(&text[s..e]).starts_with(&open))
            {
                from = start;
            }
        }
    }
    if let Some((start, period)) = periodic_tail(text, 2) {
        from = from.min(start + period);
    }
    from
}

/// The spans of the lines and sentences of `text` (each without its ending whitespace).
fn units(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        let boundary =
            c == '\n' || (matches!(c, '.' | '!' | '?') && bytes.get(end).is_some_and(|b| b.is_ascii_whitespace()));
        if boundary {
            push_unit(text, start, end, &mut out);
            start = end;
        }
    }
    push_unit(text, start, text.len(), &mut out);
    out
}

fn push_unit(text: &str, start: usize, end: usize, out: &mut Vec<(usize, usize)>) {
    let piece = &text[start..end];
    let lead = piece.len() - piece.trim_start().len();
    let trimmed = piece.trim();
    if !trimmed.is_empty() {
        out.push((start + lead, start + lead + trimmed.len()));
    }
}

/// Whether the last unit of `text` is complete (the text ends at a boundary).
fn ends_unit(text: &str) -> bool {
    text.ends_with('\n') || text.trim_end().len() < text.len() && text.trim_end().ends_with(['.', '!', '?'])
}

/// A unit compared case- and space-insensitively, without its list marker or citation marks.
fn normalize(unit: &str) -> String {
    let unit = unit.trim_start_matches(['-', '*', '>', ' ', '\t']);
    let mut out = String::with_capacity(unit.len());
    for word in unit.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// The start of the first complete unit equal to an earlier one (and long enough to count).
fn repeated_unit(text: &str) -> Option<usize> {
    let spans = units(text);
    let complete = if ends_unit(text) { spans.len() } else { spans.len().saturating_sub(1) };
    let mut seen: Vec<String> = Vec::new();
    for &(start, end) in &spans[..complete] {
        let unit = normalize(&text[start..end]);
        let letters = unit.chars().filter(|c| c.is_alphanumeric()).count();
        if unit.chars().count() >= MIN_UNIT_CHARS && letters >= 3 {
            if seen.contains(&unit) {
                return Some(start);
            }
            seen.push(unit);
        }
    }
    None
}

/// A loop of a short unit at the end of `text`: (start of the run, period in bytes).
fn periodic_run(text: &str) -> Option<(usize, usize)> {
    periodic_tail(text, MIN_RUN_REPEATS).filter(|&(start, _)| text.len() - start >= MIN_RUN_BYTES)
}

/// The longest run at the end of `text` of at least `repeats` copies of a unit of at most
/// [`MAX_PERIOD`] bytes holding a letter or digit: (start of the run, period).
fn periodic_tail(text: &str, repeats: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut best: Option<(usize, usize)> = None;
    for period in 1..=MAX_PERIOD.min(bytes.len() / repeats.max(1)) {
        let mut start = bytes.len() - period;
        while start >= period && bytes[start - period..start] == bytes[start..start + period] {
            start -= period;
        }
        let copies = (bytes.len() - start) / period;
        let unit = &bytes[bytes.len() - period..];
        if copies >= repeats
            && unit.iter().any(u8::is_ascii_alphanumeric)
            && text.is_char_boundary(start)
            && text.is_char_boundary(start + period)
            && best.is_none_or(|(s, _)| start < s)
        {
            best = Some((start, period));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_line_is_cut_at_its_second_copy() {
        let text = "The answer is:\nThe answer is:\nThe answer is:\n";
        assert_eq!(repeat_start(text), Some("The answer is:\n".len()));
        let text = "Paris is the capital [1]. Paris is the capital [1]. ";
        assert_eq!(repeat_start(text), Some("Paris is the capital [1]. ".len()));
    }

    #[test]
    fn a_short_run_is_cut_after_its_first_period() {
        let text = "Use the model Q4_K_M_M_M_M_M_M_M_M_M_M_M_M_M_M_M_M_M_M_M";
        let at = repeat_start(text).expect("a loop");
        assert!(text[..at].starts_with("Use the model Q4_K_M") && at < text.len());
    }

    #[test]
    fn ordinary_text_is_not_a_loop() {
        for text in [
            "Water boils at 100 degrees [1]. Ice melts at 0 degrees [2].",
            "```\n}\n}\n```\nYes.\nYes.\n",
            "| a | b | c |\n|---|---|---|---|---|---|---|---|---|---|\n",
            "It costs 1000000000000 dollars.",
            "",
        ] {
            assert_eq!(repeat_start(text), None, "{text:?}");
        }
    }

    #[test]
    fn an_unfinished_unit_that_may_become_a_repeat_is_tentative() {
        let text = "The port is 3000 [1].\nThe port is";
        assert_eq!(tentative_from(text), "The port is 3000 [1].\n".len());
        let text = "The port is 3000 [1].\nIt listens";
        assert_eq!(tentative_from(text), text.len());
        assert_eq!(tentative_from("abc"), 3);
    }
}
