//! The text of a generation as it grows, handed out only where it is certain.

use super::repetition;

/// Why the text ended before the model ended its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// A stop sequence appeared (it is not part of the text).
    StopSequence,
    /// The text began repeating itself (the repetition is not part of the text).
    Repetition,
}

/// The decoding of all tokens so far, cut at the first stop sequence or repetition, of which
/// only the new end is handed out. Held back until it is certain: a decoding that ends in
/// U+FFFD (a character whose bytes are still arriving), an end that could begin a stop
/// sequence or grow into a repetition, and a decoding that rewrites earlier text (a tokenizer
/// that joins pieces differently) until it extends what was sent again.
#[derive(Debug)]
pub struct TextStream<'s> {
    stops: &'s [&'s str],
    sent: String,
    visible: String,
    /// Set once the text was cut: the generation is over.
    cut: Option<Cut>,
}

impl<'s> TextStream<'s> {
    pub fn new(stops: &'s [&'s str]) -> Self {
        TextStream { stops, sent: String::new(), visible: String::new(), cut: None }
    }

    #[cfg(test)]
    fn cut(&self) -> Option<Cut> {
        self.cut
    }

    /// Takes the decoding of every token so far; returns the new text that is certain now.
    pub fn advance(&mut self, decoded: String) -> Option<&str> {
        let stop = self.stops.iter().filter_map(|s| decoded.find(s)).min();
        let mut visible = match stop {
            Some(at) => decoded[..at].to_string(),
            None => decoded,
        };
        self.cut = stop.map(|_| Cut::StopSequence);
        if let Some(at) = repetition::repeat_start(&visible) {
            visible.truncate(at);
            self.cut = Some(Cut::Repetition);
        }
        self.visible = visible;
        let mut safe = self.visible.len();
        if self.cut.is_none() {
            // The longest end of the text that a stop sequence starts with.
            for stop in self.stops {
                for (i, _) in stop.char_indices().skip(1) {
                    if self.visible.ends_with(&stop[..i]) {
                        safe = safe.min(self.visible.len() - i);
                    }
                }
            }
            safe = safe.min(repetition::tentative_from(&self.visible));
        }
        let ready = &self.visible[..safe];
        if ready.ends_with('\u{FFFD}') || !ready.starts_with(self.sent.as_str()) || ready.len() == self.sent.len() {
            return None;
        }
        let from = self.sent.len();
        self.sent = ready.to_string();
        Some(&self.sent[from..])
    }

    /// One step of a generation: takes the decoding of every token so far, hands the text
    /// that became certain to `on_text`, and says why the generation must end now, if it must
    /// (the caller stopped reading, a stop sequence, a repetition).
    pub fn push(&mut self, decoded: String, on_text: &mut dyn FnMut(&str) -> super::Flow) -> Option<super::Finish> {
        if let Some(new) = self.advance(decoded) {
            if on_text(new) == super::Flow::Stop {
                return Some(super::Finish::Cancelled);
            }
        }
        self.cut.map(|cut| match cut {
            Cut::StopSequence => super::Finish::StopSequence,
            Cut::Repetition => super::Finish::Repetition,
        })
    }

    /// At the end: the held-back rest of the text, if any. Afterwards the text is exactly
    /// what was handed out (after a rewrite of earlier text, what was handed out stands).
    pub fn flush(&mut self) -> Option<&str> {
        if !self.visible.starts_with(self.sent.as_str()) || self.visible.len() == self.sent.len() {
            return None;
        }
        let from = self.sent.len();
        self.sent.clone_from(&self.visible);
        Some(&self.sent[from..])
    }

    pub fn into_text(self) -> String {
        self.sent
    }

    /// Ends the text of a generation that ended by `finish`: what was held back goes to
    /// `on_text` (unless the caller stopped reading), and the whole text is returned.
    pub fn close(mut self, finish: super::Finish, on_text: &mut dyn FnMut(&str) -> super::Flow) -> String {
        if finish != super::Finish::Cancelled {
            if let Some(rest) = self.flush() {
                on_text(rest);
            }
        }
        self.into_text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_a_stop_sequence_and_never_sends_part_of_one() {
        let mut t = TextStream::new(&["\nQuestion:"]);
        assert_eq!(t.advance("Paris.".into()), Some("Paris."));
        assert_eq!(t.advance("Paris.\nQue".into()), None, "might be a stop sequence");
        assert_eq!(t.advance("Paris.\nQuestion: why".into()), None);
        assert_eq!(t.cut(), Some(Cut::StopSequence));
        assert_eq!(t.flush(), None);
        assert_eq!(t.into_text(), "Paris.");
        let mut t = TextStream::new(&["\nQuestion:"]);
        assert_eq!(t.advance("Done.\n".into()), Some("Done."));
        assert_eq!(t.flush(), Some("\n"), "the end held back is sent when generation ends");
        assert_eq!(t.into_text(), "Done.\n");
        let mut t = TextStream::new(&["\nQuestion:"]);
        assert_eq!(t.advance("a\nQ".into()), Some("a"));
        assert_eq!(t.advance("a\nQuick".into()), Some("\nQuick"), "released once it is not one");
    }

    #[test]
    fn hands_out_each_new_end_once() {
        let mut t = TextStream::new(&[]);
        assert_eq!(t.advance("Par".into()), Some("Par"));
        assert_eq!(t.advance("Paris".into()), Some("is"));
        assert_eq!(t.advance("Paris \u{FFFD}".into()), None, "an unfinished character waits");
        assert_eq!(t.advance("Paris é".into()), Some(" é"));
        assert_eq!(t.advance("Paris é".into()), None);
        assert_eq!(t.flush(), None);
        assert_eq!(t.into_text(), "Paris é");
    }

    #[test]
    fn a_repetition_ends_the_text_and_is_never_sent() {
        let mut t = TextStream::new(&[]);
        let mut sent = String::new();
        let mut text = String::new();
        for piece in ["The answer is:", "\n", "The ", "answer ", "is:", "\n", "The answer"] {
            text.push_str(piece);
            if let Some(new) = t.advance(text.clone()) {
                sent.push_str(new);
            }
            if t.cut().is_some() {
                break;
            }
        }
        assert_eq!(t.cut(), Some(Cut::Repetition));
        if let Some(rest) = t.flush() {
            sent.push_str(rest);
        }
        assert_eq!(sent, "The answer is:\n");
        assert_eq!(t.into_text(), "The answer is:\n");
    }
}
