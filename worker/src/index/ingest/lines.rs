//! Byte offset <-> line/column mapping for a text.

/// Line starts of a text. Lines are 0-based here; callers add offsets.
#[derive(Debug, Clone)]
pub(super) struct LineIndex {
    /// Byte offset of the start of every line. A trailing '\n' does not
    /// start a new (empty) line.
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub(super) fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = Vec::with_capacity(bytes.len() / 40 + 1);
        if !bytes.is_empty() {
            starts.push(0);
        }
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' && i + 1 < bytes.len() {
                starts.push(i + 1);
            }
        }
        LineIndex { starts, len: bytes.len() }
    }

    /// Number of lines (0 for an empty text).
    pub(super) fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line containing byte `pos` (clamped to the last line).
    pub(super) fn line_of(&self, pos: usize) -> usize {
        self.starts.partition_point(|&s| s <= pos).saturating_sub(1)
    }

    /// Byte offset where `line` starts (text length if out of range).
    pub(super) fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.len)
    }

    /// Byte offset of the end of `line`, excluding its '\n'.
    pub(super) fn line_end(&self, text: &str, line: usize) -> usize {
        let next = self.starts.get(line + 1).copied().unwrap_or(self.len);
        let bytes = text.as_bytes();
        if next > 0 && next <= bytes.len() && bytes[next - 1] == b'\n' {
            next - 1
        } else {
            next.min(bytes.len())
        }
    }

    /// 1-based column (in chars) of byte `pos` on its line.
    #[cfg(test)]
    pub(super) fn col_of(&self, text: &str, pos: usize) -> usize {
        let line = self.line_of(pos);
        let start = self.line_start(line);
        char_count(text.as_bytes().get(start..pos).unwrap_or(&[])) + 1
    }
}

/// Incremental (line, column) lookup for increasing byte offsets: avoids
/// recounting a long line from its start for every position on it.
#[derive(Debug, Clone)]
pub(super) struct ColCursor {
    line: usize,
    byte: usize,
    col: usize,
}

impl ColCursor {
    pub(super) fn new() -> Self {
        ColCursor { line: usize::MAX, byte: 0, col: 1 }
    }

    /// 0-based line and 1-based char column of byte `pos`.
    pub(super) fn locate(&mut self, idx: &LineIndex, text: &str, pos: usize) -> (usize, usize) {
        let line = idx.line_of(pos);
        let bytes = text.as_bytes();
        if line == self.line && pos >= self.byte {
            self.col += char_count(bytes.get(self.byte..pos).unwrap_or(&[]));
        } else {
            let start = idx.line_start(line);
            self.col = char_count(bytes.get(start..pos).unwrap_or(&[])) + 1;
        }
        self.line = line;
        self.byte = pos;
        (line, self.col)
    }
}

/// Number of chars in a UTF-8 byte slice (counts non-continuation bytes).
pub(super) fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic() {
        let t = "ab\nçd\n\nx";
        let i = LineIndex::new(t);
        assert_eq!(i.line_count(), 4);
        assert_eq!(i.line_of(0), 0);
        assert_eq!(i.line_of(2), 0);
        assert_eq!(i.line_of(3), 1);
        assert_eq!(i.line_of(100), 3);
        assert_eq!(i.col_of(t, 5), 2); // 'd' after 'ç' (2 bytes)
        assert_eq!(i.line_end(t, 1), 6);
        assert_eq!(i.line_start(2), 7);
        assert_eq!(i.line_end(t, 2), 7);
        assert_eq!(i.line_end(t, 3), t.len());
    }

    #[test]
    fn trailing_newline_and_empty() {
        let i = LineIndex::new("a\n");
        assert_eq!(i.line_count(), 1);
        assert_eq!(i.line_end("a\n", 0), 1);
        let e = LineIndex::new("");
        assert_eq!(e.line_count(), 0);
        assert_eq!(e.line_of(0), 0);
        assert_eq!(e.col_of("", 0), 1);
    }

    #[test]
    fn cursor_matches_col_of() {
        let t = "aé日x\nb日c\n";
        let i = LineIndex::new(t);
        let mut c = ColCursor::new();
        for pos in [0, 1, 3, 6, 7, 8, 9, 3, 12, 0] {
            assert_eq!(c.locate(&i, t, pos), (i.line_of(pos), i.col_of(t, pos)), "{pos}");
        }
    }

    #[test]
    fn chars() {
        assert_eq!(char_count("héllo✓".as_bytes()), 6);
    }
}
