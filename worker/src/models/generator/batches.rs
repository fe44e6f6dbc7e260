//! How a prompt is cut into llama.cpp batches, so that the same prompt always gives the same
//! answer.
//!
//! llama.cpp's numbers for a token depend on the size of the batch it was decoded in (another
//! matrix kernel, another order of sums), and greedy decoding turns a difference in the last
//! digit into another answer. Reusing whatever the KV cache shared with the previous prompt
//! made a question's answer depend on the question asked before it (measured: the same
//! question answered in other words after another question). So a prompt is cut the same way
//! whatever came before — from its start in steps of [`Layout::step`] up to the end of its
//! fixed head (the instruction and worked examples every question shares), then from there in
//! the same steps — and the cache is reused only up to a cut both prompts share.

/// The cuts of one prompt: `head` tokens of fixed head, `len` tokens in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub head: usize,
    pub len: usize,
    pub step: usize,
}

impl Layout {
    /// A prompt of `len` tokens whose first `head` are its fixed head (0: none known).
    pub fn new(head: usize, len: usize, step: usize) -> Self {
        let head = if head < len { head } else { 0 };
        Layout { head, len, step: step.max(1) }
    }

    /// Where each batch starts, in order (the first is 0; the last batch ends at `len`).
    pub fn starts(&self) -> Vec<usize> {
        let mut starts: Vec<usize> = (0..self.head).step_by(self.step).collect();
        starts.extend((self.head..self.len).step_by(self.step));
        starts
    }

    /// The batches from `from` (one of [`Self::starts`]) to the end, as ranges.
    pub fn batches_from(&self, from: usize) -> Vec<std::ops::Range<usize>> {
        let starts = self.starts();
        let ends = starts.iter().skip(1).copied().chain(std::iter::once(self.len));
        starts.iter().zip(ends).filter(|(s, _)| **s >= from).map(|(&s, e)| s..e).collect()
    }

    /// How many tokens of a cache that holds `previous` may be kept for this prompt, when the
    /// two prompts' tokens agree on their first `common`: the last cut of this prompt at or
    /// below `common` before which both prompts were cut alike, so every kept token was
    /// decoded in the batch a fresh run would decode it in. The last token is always decoded
    /// again (its logits start the answer).
    pub fn reusable(&self, previous: Option<&Layout>, common: usize) -> usize {
        let Some(previous) = previous.filter(|p| p.step == self.step) else { return 0 };
        let limit = common.min(previous.len).min(self.len.saturating_sub(1));
        // The cuts both prompts share from the first on, up to `limit`: the last of them.
        self.starts()
            .into_iter()
            .zip(previous.starts())
            .take_while(|&(mine, theirs)| mine == theirs && mine <= limit)
            .last()
            .map_or(0, |(s, _)| s)
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn a_prompt_is_cut_in_steps_to_its_head_then_in_steps_from_it() {
        let l = Layout::new(10, 25, 4);
        assert_eq!(l.starts(), [0, 4, 8, 10, 14, 18, 22]);
        assert_eq!(l.batches_from(10), [10..14, 14..18, 18..22, 22..25]);
        assert_eq!(Layout::new(0, 5, 4).starts(), [0, 4]);
        // A head as long as the prompt is no head: the last token is the question's.
        assert_eq!(Layout::new(5, 5, 4).starts(), [0, 4]);
    }

    #[test]
    fn the_shared_head_is_kept_and_nothing_cut_otherwise() {
        let next = Layout::new(10, 30, 4);
        // The same head, and more shared after it: kept to the last cut both share.
        assert_eq!(next.reusable(Some(&Layout::new(10, 25, 4)), 17), 14);
        // Shared only partly into the head: to the last cut below the shared part.
        assert_eq!(next.reusable(Some(&Layout::new(10, 25, 4)), 7), 4);
        // Another head (cut at 12 before): the cuts part at 10, so only up to 8.
        assert_eq!(next.reusable(Some(&Layout::new(12, 40, 4)), 20), 8);
        // The previous prompt's tokens end at 11; what followed it was generated one by one.
        assert_eq!(next.reusable(Some(&Layout::new(10, 11, 4)), 20), 10);
        assert_eq!(next.reusable(None, 20), 0);
        assert_eq!(next.reusable(Some(&Layout::new(10, 25, 8)), 20), 0);
    }

    #[test]
    fn the_last_token_is_always_decoded_again() {
        let same = Layout::new(10, 14, 4);
        assert_eq!(same.reusable(Some(&same), 14), 10);
        let short = Layout::new(0, 9, 4);
        assert_eq!(short.reusable(Some(&short), 9), 8);
        let one = Layout::new(0, 8, 4);
        assert_eq!(one.reusable(Some(&one), 8), 4);
    }
}
