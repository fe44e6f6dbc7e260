//! Read endpoints over the catalog: tags, document lists, one document, sections.

use crate::index::indexer::source_kind;
use crate::index::pictures::Readings;
use crate::shared::Shared;
use crate::stores::catalog::{self, DocRow};
use crate::stores::DocKey;
use crate::{index::ingest, time_fmt, uri};
use protocol::api::{
    AutocompleteDoc, AutocompleteResponse, CodeTokensResponse, DocResponse, DocSection, DocSource, DocSummary,
    DocsResponse, OcrSource, OcrState, SectionsMeta, SectionsResponse, TagCount, TagsMeta, TagsResponse,
};
use protocol::source_kind::SourceKind;
use protocol::{ApiError, CollectionName, DocRef, DocsQuery};
use std::path::Path;

pub(crate) fn abs_path(w: &Shared, row: &DocRow) -> Option<String> {
    let cfg = w.settings.config();
    let root = cfg.find(&row.collection)?;
    let p = Path::new(&root.path).join(row.file_rel());
    p.is_file().then(|| p.display().to_string())
}

pub fn tags(w: &Shared, collection: Option<CollectionName>, prefix: Option<String>) -> Result<TagsResponse, ApiError> {
    let all = catalog::tag_counts(&w.stores.catalog.reader(), collection.as_deref())?;
    let tags: Vec<TagCount> = all
        .into_iter()
        .filter(|(t, _)| match &prefix {
            Some(p) => t == p || t.strip_prefix(p.as_str()).is_some_and(|rest| rest.starts_with('/')),
            None => true,
        })
        .map(|(tag, count)| TagCount { tag, count })
        .collect();
    Ok(TagsResponse {
        meta: TagsMeta { total: tags.len() as u64, collection: collection.map(String::from), prefix },
        tags,
    })
}

pub fn docs(w: &Shared, q: &DocsQuery) -> Result<DocsResponse, ApiError> {
    let conn = w.stores.catalog.reader();
    let catalog::DocPage { total, date_fields, rows } = catalog::doc_page(&conn, q)?;
    let ids: Vec<DocKey> = rows.iter().map(|r| r.id).collect();
    let tags = catalog::tags_of(&conn, &ids)?;
    let documents: Vec<DocSummary> = rows
        .into_iter()
        .map(|r| DocSummary {
            uri: uri::doc_uri(&r.collection, &r.rel_path),
            updated_at: time_fmt::ms_to_iso(r.source_mtime_ns / 1_000_000),
            tags: tags.get(&r.id).cloned().unwrap_or_default(),
            docid: r.docid,
            title: r.title,
            collection: r.collection,
            rel_path: r.rel_path,
            source_ext: r.source_ext,
            source_mime: r.source_mime,
            document_date: r.fm_date,
            date_fields: r.date_fields,
        })
        .collect();
    Ok(DocsResponse {
        documents,
        total,
        limit: q.limit,
        offset: q.offset,
        available_date_fields: date_fields.into_iter().collect(),
        sort_field: q.sort_field.as_str().to_string(),
        sort_order: q.sort_order,
    })
}

pub fn doc(w: &Shared, readings: &Readings, r: &DocRef) -> Result<DocResponse, ApiError> {
    let row = w.resolve_doc(r)?;
    let conn = w.stores.catalog.reader();
    let content = catalog::content_text(&conn, &row.mirror_hash)?;
    let tags = catalog::tags_of(&conn, &[row.id])?.remove(&row.id).unwrap_or_default();
    drop(conn);
    let source = DocSource {
        mime: row.source_mime.clone(),
        ext: row.source_ext.clone(),
        modified_at: time_fmt::ms_to_iso(row.source_mtime_ns / 1_000_000),
        size_bytes: row.source_size,
        source_hash: row.source_hash.clone(),
        abs_path: abs_path(w, &row),
        part_of: row.part_of.clone(),
        ocr: picture_source(readings, &row.collection, &row.rel_path, &row.source_hash),
    };
    Ok(DocResponse {
        uri: uri::doc_uri(&row.collection, &row.rel_path),
        content_available: content.is_some(),
        content: content.unwrap_or_default(),
        tags,
        source,
        docid: row.docid,
        title: row.title,
        collection: row.collection,
        rel_path: row.rel_path,
        author: row.author,
        categories: row.categories,
        document_date: row.fm_date,
        date_fields: row.date_fields,
    })
}

/// How a picture's text was made: its OCR reading, or that one is still to come; a scanned
/// PDF's reading once there is one; a document's, once OCR has found text in its pictures
/// (or failed to read them). A reading counts once the document's text holds it: not while
/// the document still waits for OCR ([`Readings::is_waiting`]).
fn picture_source(readings: &Readings, collection: &str, rel: &str, source_hash: &str) -> Option<OcrSource> {
    let kept = || if readings.is_waiting(collection, rel) { None } else { readings.get(source_hash) };
    let reading = match source_kind(rel) {
        Some(SourceKind::Image) => kept(),
        Some(SourceKind::Pdf) => Some(kept()?),
        Some(SourceKind::Docx | SourceKind::Slides) => Some(kept().filter(|r| r.lines > 0 || r.error.is_some())?),
        _ => return None,
    };
    Some(match reading {
        None => OcrSource {
            state: OcrState::Pending,
            engine: crate::index::pictures::ENGINE.into(),
            confidence: 0.0,
            lines: 0,
            error: None,
        },
        Some(r) => OcrSource {
            state: if r.error.is_some() { OcrState::Failed } else { OcrState::Read },
            engine: r.engine,
            confidence: r.confidence,
            lines: r.lines,
            error: r.error,
        },
    })
}

pub fn sections(w: &Shared, r: &DocRef) -> Result<SectionsResponse, ApiError> {
    let row = w.resolve_doc(r)?;
    let content = catalog::content_text(&w.stores.catalog.reader(), &row.mirror_hash)?;
    let sections: Vec<DocSection> = match content.as_deref().zip(source_kind(&row.rel_path)) {
        Some((text, kind)) => ingest::parse(text, &row.rel_path, kind)
            .sections
            .into_iter()
            .map(|s| DocSection { anchor: s.anchor, level: s.level, line: s.line, title: s.title })
            .collect(),
        None => Vec::new(),
    };
    Ok(SectionsResponse {
        meta: SectionsMeta { uri: uri::doc_uri(&row.collection, &row.rel_path), docid: row.docid },
        sections,
    })
}

/// A code file's colouring for the workspace's code view; no tokens for other files.
pub fn code_tokens(w: &Shared, r: &DocRef) -> Result<CodeTokensResponse, ApiError> {
    let row = w.resolve_doc(r)?;
    let tokens = match source_kind(&row.rel_path) {
        Some(SourceKind::Code(lang)) => catalog::content_text(&w.stores.catalog.reader(), &row.mirror_hash)?
            .map(|text| ingest::code_tokens(&text, lang))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    Ok(CodeTokensResponse { tokens })
}

/// Titles for a quick switcher: titles starting with `query` first, then titles with a word
/// starting with it; each group in title order (case-insensitive), at most `limit`.
pub fn autocomplete(
    w: &Shared,
    query: &str,
    collection: Option<&str>,
    limit: u32,
) -> Result<AutocompleteResponse, ApiError> {
    if let Some(c) = collection.filter(|c| w.settings.config().find(c).is_none()) {
        return Err(ApiError::not_found(format!("Collection not found: {c}")));
    }
    let docs = catalog::title_matches(&w.stores.catalog.reader(), query, collection, limit)?
        .into_iter()
        .map(|m| AutocompleteDoc {
            uri: uri::doc_uri(&m.collection, &m.rel_path),
            docid: m.docid,
            title: m.title,
            collection: m.collection,
        })
        .collect();
    Ok(AutocompleteResponse { docs })
}
