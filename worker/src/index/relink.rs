//! Links stored by an older parser, parsed again from the stored text when the worker opens
//! the catalog: a note whose file does not change is never read again, so without this it
//! would keep the links an older svc found in it (without its embeds, say) for good.

use crate::index::ingest;
use crate::stores::catalog::{self, Catalog, CatalogError};
use protocol::source_kind::source_kind;

/// What the stored links hold, by version: 2 adds embeds (`![[Note]]`, `![alt](pic.png)`)
/// and links to the note's own headings and blocks (`[[#Heading]]`).
pub const LINKS_VERSION: u32 = 2;

/// Parses again the links of every document whose text reads as Markdown, when they come
/// from an older parser; the number of documents whose links were replaced.
pub fn bring_up_to_date(catalog: &Catalog) -> Result<usize, CatalogError> {
    let conn = catalog.writer();
    if catalog::links_version(&conn)? >= LINKS_VERSION {
        return Ok(0);
    }
    let tx = catalog::snapshot(&conn)?;
    let mut replaced = 0;
    for (id, rel_path, mirror_hash) in catalog::link_sources(&tx)? {
        let Some(kind) = source_kind(&rel_path).filter(|k| ingest::reads_as_markdown(*k)) else { continue };
        let Some(text) = catalog::content_text(&tx, &mirror_hash)? else { continue };
        catalog::replace_links(&tx, id, &ingest::parse(&text, &rel_path, kind).links)?;
        replaced += 1;
    }
    catalog::set_links_version(&tx, LINKS_VERSION)?;
    tx.commit()?;
    Ok(replaced)
}
