//! Spreadsheets (XLSX, XLSM, XLSB, XLS, ODS) through `calamine`: one section per sheet
//! (`## <sheet>`), its rows as a Markdown table whose first non-empty row is the header; a
//! formula shows its cached value; empty rows and columns are dropped; cells past a budget
//! are left out (the note says so), so a million-row sheet cannot exhaust the worker.

use super::{ConvertError, Converted};
use calamine::{open_workbook_auto_from_rs, Data, Reader};
use std::io::Cursor;

/// Cells read from a workbook at most (all sheets together).
pub const MAX_CELLS: usize = 200_000;
/// Characters of one cell at most.
const MAX_CELL_CHARS: usize = 500;

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut book = open_workbook_auto_from_rs(Cursor::new(bytes.to_vec()))
        .map_err(|e| ConvertError::Spreadsheet(e.to_string()))?;
    let mut text = String::new();
    let mut budget = MAX_CELLS;
    for name in book.sheet_names() {
        let range = book.worksheet_range(&name).map_err(|e| ConvertError::Spreadsheet(e.to_string()))?;
        let rows: Vec<&[Data]> = range.rows().collect();
        let width = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        // The columns with a value in some row, and the rows with a value in some column.
        let columns: Vec<usize> = (0..width).filter(|&c| rows.iter().any(|r| r.get(c).is_some_and(filled))).collect();
        let rows: Vec<&[Data]> = rows.into_iter().filter(|r| r.iter().any(filled)).collect();
        text.push_str(&format!("## {}\n\n", cell_text(&name)));
        if rows.is_empty() || columns.is_empty() {
            text.push_str("(empty sheet)\n\n");
            continue;
        }
        let mut cut = 0usize;
        for (i, row) in rows.iter().enumerate() {
            if budget < columns.len() {
                cut = rows.len() - i;
                break;
            }
            budget -= columns.len();
            let cells: Vec<String> =
                columns.iter().map(|&c| row.get(c).map(|d| cell_text(&d.to_string())).unwrap_or_default()).collect();
            text.push_str(&format!("| {} |\n", cells.join(" | ")));
            if i == 0 {
                text.push_str(&format!("|{}\n", " --- |".repeat(columns.len())));
            }
        }
        if cut > 0 {
            text.push_str(&format!("\n({cut} more rows not indexed: past {MAX_CELLS} cells)\n"));
        }
        text.push('\n');
    }
    Ok(Converted { title: None, text })
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
    fn not_a_workbook_is_an_error() {
        assert!(matches!(convert(b"plain text, not a workbook"), Err(ConvertError::Spreadsheet(_))));
    }
}
