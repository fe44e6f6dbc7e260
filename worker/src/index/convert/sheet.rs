//! Spreadsheets (XLSX, XLSM, XLSB, XLS, ODS) through `calamine`: one section per sheet
//! (`## <sheet>`), its rows as Markdown tables whose first non-empty row is the header; a
//! formula shows its cached value; empty rows and columns are dropped; cells past a budget
//! are left out (the note says so), so a million-row sheet cannot exhaust the worker.
//!
//! A sheet longer than one block is cut into blocks of rows, each a table of its own under a
//! `### <sheet>!A41:D80` heading (the block's cell range in the sheet's own coordinates) and
//! starting with the header row again. A block stays under the chunker's target size, so
//! every chunk of a long sheet starts at a block: it carries the header that says what its
//! columns are, and a citation of it names (and the workspace jumps to) its cell range.

use super::{ConvertError, Converted};
use calamine::{open_workbook_auto_from_rs, Data, Reader};
use std::io::Cursor;

/// Cells read from a workbook at most (all sheets together).
pub const MAX_CELLS: usize = 200_000;
/// Characters of one cell at most.
const MAX_CELL_CHARS: usize = 500;
/// Characters of one block of rows (its heading, header row and rows) at most, unless one
/// row alone is longer: five sixths of the chunker's target (1,000 of 1,200), so a block
/// starts every chunk.
const BLOCK_CHARS: usize = crate::index::ingest::CHUNK_TARGET_CHARS * 5 / 6;

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut book = open_workbook_auto_from_rs(Cursor::new(bytes.to_vec()))
        .map_err(|e| ConvertError::Spreadsheet(e.to_string()))?;
    let mut text = String::new();
    let mut budget = MAX_CELLS;
    for name in book.sheet_names() {
        let range = book.worksheet_range(&name).map_err(|e| ConvertError::Spreadsheet(e.to_string()))?;
        let (first_row, first_col) = range.start().unwrap_or((0, 0));
        let rows: Vec<&[Data]> = range.rows().collect();
        let width = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        // The columns with a value in some row, and the rows (with their sheet row number,
        // from 1) with a value in some column.
        let columns: Vec<usize> = (0..width).filter(|&c| rows.iter().any(|r| r.get(c).is_some_and(filled))).collect();
        let rows: Vec<(u64, &[Data])> = rows
            .into_iter()
            .enumerate()
            .filter(|(_, r)| r.iter().any(filled))
            .map(|(i, r)| (u64::from(first_row) + i as u64 + 1, r))
            .collect();
        text.push_str(&format!("## {}\n\n", cell_text(&name)));
        let (Some(&(_, header)), Some(&first), Some(&last)) = (rows.first(), columns.first(), columns.last()) else {
            text.push_str("(empty sheet)\n\n");
            continue;
        };
        let line = |row: &[Data]| {
            let cells: Vec<String> =
                columns.iter().map(|&c| row.get(c).map(|d| cell_text(&d.to_string())).unwrap_or_default()).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let header = format!("{}|{}\n", line(header), " --- |".repeat(columns.len()));
        let span = Columns { sheet: &name, first: first_col as usize + first, last: first_col as usize + last };
        // The header row, then each row's line, within the cell budget.
        budget = budget.saturating_sub(columns.len());
        let mut lines: Vec<(u64, String)> = Vec::new();
        let mut cut = 0usize;
        for (i, &(number, row)) in rows.iter().enumerate().skip(1) {
            if budget < columns.len() {
                cut = rows.len() - i;
                break;
            }
            budget -= columns.len();
            lines.push((number, line(row)));
        }
        // What each block repeats: its heading (at its longest) and the header row.
        let last_row = lines.last().map_or(0, |(n, _)| *n);
        let overhead = header.chars().count() + span.range(last_row, last_row).chars().count() + 6;
        match blocks(overhead, &lines).as_slice() {
            [_] => {
                text.push_str(&header);
                lines.iter().for_each(|(_, l)| text.push_str(l));
            }
            blocks => {
                for block in blocks {
                    let (top, bottom) = (lines[block.start].0, lines[block.end - 1].0);
                    text.push_str(&format!("### {}\n\n{header}", span.range(top, bottom)));
                    lines[block.clone()].iter().for_each(|(_, l)| text.push_str(l));
                    text.push('\n');
                }
            }
        }
        if cut > 0 {
            text.push_str(&format!("\n({cut} more rows not indexed: past {MAX_CELLS} cells)\n"));
        }
        text.push('\n');
    }
    Ok(Converted { title: None, text })
}

/// The rows of each block (index ranges into `lines`): as many as fit in [`BLOCK_CHARS`]
/// beside what every block repeats (`overhead`: its heading and the header row), at least one.
/// One block (no cut) when there are no rows, or when the repeated part would take more than
/// half of every block: a wide sheet's header copied every few rows would swell the text and
/// still not make chunks that carry it.
fn blocks(overhead: usize, lines: &[(u64, String)]) -> Vec<std::ops::Range<usize>> {
    if overhead > BLOCK_CHARS / 2 {
        return std::iter::once(0..lines.len()).collect();
    }
    let room = BLOCK_CHARS - overhead;
    let mut out = vec![];
    let mut start = 0;
    let mut size = 0;
    for (i, (_, l)) in lines.iter().enumerate() {
        let n = l.chars().count();
        if i > start && size + n > room {
            out.push(start..i);
            (start, size) = (i, 0);
        }
        size += n;
    }
    out.push(start..lines.len());
    out
}

/// The sheet and the first and last column (0-based, in the sheet's coordinates) a block's
/// cell range spans.
struct Columns<'a> {
    sheet: &'a str,
    first: usize,
    last: usize,
}

impl Columns<'_> {
    /// `Budget!A41:D80`, the sheet name quoted as spreadsheets do when it is not one word.
    fn range(&self, top: u64, bottom: u64) -> String {
        let plain = self.sheet.chars().all(|c| c.is_alphanumeric() || c == '_');
        let sheet =
            if plain { cell_text(self.sheet) } else { format!("'{}'", cell_text(self.sheet).replace('\'', "''")) };
        format!("{sheet}!{}{top}:{}{bottom}", column_letters(self.first), column_letters(self.last))
    }
}

/// A column's letters: 0 → `A`, 25 → `Z`, 26 → `AA`.
fn column_letters(index: usize) -> String {
    let mut n = index + 1;
    let mut letters = Vec::new();
    while n > 0 {
        let rem = (n - 1) % 26;
        letters.push(b'A' + rem as u8);
        n = (n - 1) / 26;
    }
    letters.iter().rev().map(|&b| b as char).collect()
}

fn filled(d: &Data) -> bool {
    !matches!(d, Data::Empty) && !d.to_string().trim().is_empty()
}

/// One cell as table text: one line, pipes escaped, cut to [`MAX_CELL_CHARS`].
fn cell_text(raw: &str) -> String {
    let one_line = crate::index::ingest::collapse_whitespace(raw).replace('|', "\\|");
    match one_line.char_indices().nth(MAX_CELL_CHARS) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workbook_becomes_one_table_per_sheet_without_empty_rows_or_columns() {
        let bytes = testkit::xlsx(&[
            ("Budget", &[&["Item", "", "Cost"], &["", "", ""], &["Rent | flat", "", "900"], &["Food", "", "120"]]),
            ("Empty", &[]),
        ]);
        let c = convert(&bytes).unwrap();
        assert_eq!(c.title, None);
        let text = c.text;
        assert!(text.contains("## Budget\n\n| Item | Cost |\n| --- | --- |\n| Rent \\| flat | 900 |\n"), "{text}");
        assert!(text.contains("## Empty\n\n(empty sheet)"), "{text}");
        assert!(!text.contains("|  |"), "no empty column: {text}");
    }

    #[test]
    fn a_long_sheet_is_cut_into_blocks_that_repeat_the_header_under_their_cell_range() {
        // Column A empty: the range starts at B, and the sheet's own letters are kept.
        let numbers: Vec<String> = (1..=300).map(|i| i.to_string()).collect();
        let mut rows: Vec<Vec<&str>> = vec![vec!["", "Sample", "Reading"]];
        rows.extend(numbers.iter().map(|n| vec!["", "probe", n.as_str()]));
        let rows: Vec<&[&str]> = rows.iter().map(Vec::as_slice).collect();
        let text = convert(&testkit::xlsx(&[("Lab data", &rows)])).unwrap().text;
        let header = "| Sample | Reading |\n| --- | --- |\n";
        let blocks: Vec<&str> = text.split("### ").skip(1).collect();
        assert!(blocks.len() > 3, "{text}");
        assert!(blocks[0].starts_with("'Lab data'!B2:C"), "{}", blocks[0]);
        assert!(blocks.last().unwrap().starts_with("'Lab data'!B") && blocks.last().unwrap().contains(":C301\n"));
        for b in &blocks {
            assert!(b.contains(&format!("\n\n{header}")), "every block starts with the header: {b}");
            assert!(b.chars().count() + 4 <= BLOCK_CHARS, "{}", b.len());
        }
        assert_eq!(text.matches("| probe |").count(), 300, "every row once");
        // Every chunk the index makes of it starts at a block, so it carries the header.
        let doc = crate::index::ingest::parse_markdown(&text, "lab.xlsx");
        assert!(doc.chunks.len() > 1);
        for c in &doc.chunks {
            assert!(c.text.contains(header), "a chunk without the header: {}", c.text);
        }
    }

    #[test]
    fn a_sheet_whose_header_fills_half_a_block_stays_one_table() {
        let names: Vec<String> = (0..30).map(|c| format!("Measurement column {c}")).collect();
        let values: Vec<String> = (0..30).map(|c| c.to_string()).collect();
        let mut rows: Vec<Vec<&str>> = vec![names.iter().map(String::as_str).collect()];
        rows.extend((0..40).map(|_| values.iter().map(String::as_str).collect::<Vec<_>>()));
        let rows: Vec<&[&str]> = rows.iter().map(Vec::as_slice).collect();
        let text = convert(&testkit::xlsx(&[("Wide", &rows)])).unwrap().text;
        assert!(!text.contains("### "), "no blocks: {text}");
        assert_eq!(text.matches("| Measurement column 0 |").count(), 1, "the header once");
    }

    #[test]
    fn a_block_range_names_the_sheet_as_spreadsheets_do() {
        let span = |sheet, first, last| Columns { sheet, first, last };
        assert_eq!(span("Budget", 0, 3).range(2, 41), "Budget!A2:D41");
        assert_eq!(span("Q1 plan", 26, 27).range(5, 9), "'Q1 plan'!AA5:AB9");
        assert_eq!(span("Bob's", 0, 0).range(1, 1), "'Bob''s'!A1:A1");
        assert_eq!(column_letters(25), "Z");
        assert_eq!(column_letters(701), "ZZ");
        assert_eq!(column_letters(702), "AAA");
    }

    #[test]
    fn not_a_workbook_is_an_error() {
        assert!(matches!(convert(b"plain text, not a workbook"), Err(ConvertError::Spreadsheet(_))));
    }
}
