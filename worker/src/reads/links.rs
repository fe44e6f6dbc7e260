//! Link resolution, outgoing links, backlinks and the link graph.
//!
//! Links are stored as written; they are resolved at read time against the active
//! documents, so renames and new notes are reflected without re-parsing the sources.

use super::anchors::AnchorBook;
use crate::paths::{dir_of, file_name, lexical_join};
use crate::retrieval::vector::VectorContext;
use crate::shared::Shared;
use crate::stores::catalog::{self, DocRow, LinkRow};
use crate::stores::vectors;
use crate::stores::DocKey;
use crate::uri;
use protocol::anchor::nfc;
use protocol::api::{
    Backlink, BacklinksMeta, BacklinksResponse, EdgeWeight, GraphEdge, GraphEdgeKind, GraphMeta, GraphNode,
    GraphResponse, LinksMeta, LinksResponse, OutgoingLink,
};
use protocol::{ApiError, DocRef, GraphQuery, LinkKind};
use rusqlite::Connection;
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Lookup tables over the active documents.
pub struct Resolver {
    docs: HashMap<DocKey, DocRow>,
    /// Titles of documents that are not pictures (a link may name a note by its title when no
    /// file has that name).
    by_title: HashMap<(String, String), DocKey>,
    by_path: HashMap<(String, String), DocKey>,
    /// Paths lowercased, in Unicode's composed form (NFC).
    by_path_lower: HashMap<(String, String), DocKey>,
    /// Markdown notes by their file name without `.md` (lowercased, NFC): every note of it,
    /// in [`root_order`].
    notes_by_name: HashMap<(String, String), Vec<DocKey>>,
    /// Every document by its file name with its extension (lowercased, NFC), in [`root_order`].
    files_by_name: HashMap<(String, String), Vec<DocKey>>,
}

/// The order in which a bare name picks among the documents that bear it when none is in the
/// linking note's folder: the shortest path (fewest folders, then fewest characters), else the
/// first by path; of `path` lowercased in NFC.
fn root_order(path: String) -> (usize, usize, String) {
    (path.split('/').count(), path.len(), path)
}

fn keep_lowest(map: &mut HashMap<(String, String), DocKey>, key: (String, String), id: DocKey) {
    map.entry(key).and_modify(|v| *v = (*v).min(id)).or_insert(id);
}

fn strip_md(s: &str) -> &str {
    s.strip_suffix(".md").unwrap_or(s)
}

/// The extension a wiki link's name is written with (`diagram.png` → `png`): 1 to 8 letters
/// or digits after the last dot of its last segment, with a name before the dot.
fn extension(name: &str) -> Option<&str> {
    let (stem, ext) = file_name(name).rsplit_once('.')?;
    (!stem.is_empty() && (1..=8).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(ext)
}

impl Resolver {
    pub fn new(rows: Vec<DocRow>) -> Self {
        let mut r = Resolver {
            docs: HashMap::new(),
            by_title: HashMap::new(),
            by_path: HashMap::new(),
            by_path_lower: HashMap::new(),
            notes_by_name: HashMap::new(),
            files_by_name: HashMap::new(),
        };
        for d in rows {
            let c = d.collection.clone();
            if !d.source_mime.starts_with("image/") {
                keep_lowest(&mut r.by_title, (c.clone(), nfc(d.title.trim()).to_lowercase()), d.id);
            }
            keep_lowest(&mut r.by_path, (c.clone(), d.rel_path.clone()), d.id);
            let lower = nfc(&d.rel_path).to_lowercase();
            let name = file_name(&lower).to_string();
            if let Some(note) = name.strip_suffix(".md") {
                r.notes_by_name.entry((c.clone(), note.to_string())).or_default().push(d.id);
            }
            r.files_by_name.entry((c.clone(), name)).or_default().push(d.id);
            keep_lowest(&mut r.by_path_lower, (c, lower), d.id);
            r.docs.insert(d.id, d);
        }
        let lower_path = |id: &DocKey| r.docs.get(id).map(|d| nfc(&d.rel_path).to_lowercase()).unwrap_or_default();
        for same_name in r.notes_by_name.values_mut().chain(r.files_by_name.values_mut()) {
            same_name.sort_by_cached_key(|id| root_order(lower_path(id)));
        }
        r
    }

    pub fn doc(&self, id: DocKey) -> Option<&DocRow> {
        self.docs.get(&id)
    }

    /// The document a link of note `source` points to.
    ///
    /// Wiki links follow Obsidian's rules (names compared lowercased, in NFC, `%20` as a
    /// space): a name written with an extension other than `.md` (`diagram.png`) reaches
    /// that file; any other reaches a Markdown note: by its path from the collection's root,
    /// then relative to the linking note's folder, then by its file name anywhere (a name
    /// with `/` by the end of the path). Of several notes of that name: the one in the
    /// linking note's folder, else the shortest path, else the first by path. A name no
    /// file has reaches the document of that title (pictures aside).
    /// Markdown links match the resolved path exactly, then case-insensitively.
    pub fn resolve(&self, source: &DocRow, link: &LinkRow) -> Option<DocKey> {
        let coll = link.target_collection.clone().unwrap_or_else(|| source.collection.clone());
        if link.link_type == LinkKind::Markdown {
            return self
                .by_path
                .get(&(coll.clone(), link.target_ref_norm.clone()))
                .or_else(|| self.by_path_lower.get(&(coll, nfc(&link.target_ref_norm).to_lowercase())))
                .copied();
        }
        let r = nfc(link.target_ref_norm.trim().trim_start_matches('/')).to_lowercase().replace("%20", " ");
        if r.is_empty() {
            // `[[#Heading]]`: the note itself.
            return (link.target_anchor.is_some() && link.target_collection.is_none()).then_some(source.id);
        }
        // Relative to the linking note only within its own collection.
        let source_dir = nfc(dir_of(&source.rel_path)).to_lowercase();
        let here = if coll == source.collection { source_dir.as_str() } else { "" };
        if extension(&r).is_some_and(|ext| ext != "md") {
            let file = self.at_path(&coll, here, &r).or_else(|| self.named(&self.files_by_name, &coll, here, &r, ""));
            if file.is_some() {
                return file;
            }
        }
        let name = strip_md(&r);
        self.at_path(&coll, here, &format!("{name}.md"))
            .or_else(|| self.named(&self.notes_by_name, &coll, here, name, ".md"))
            .or_else(|| {
                let title = |t: &str| self.by_title.get(&(coll.clone(), t.to_string())).copied();
                title(&r).or_else(|| title(name))
            })
    }

    /// The notes that bear the name a bare wiki link gives (no folder, no extension but
    /// `.md`), when more than one does, in [`root_order`]: the link reaches one of them by rule.
    /// Empty when one or none does, or the link is not a bare name.
    pub fn namesakes(&self, source: &DocRow, link: &LinkRow) -> &[DocKey] {
        if link.link_type != LinkKind::Wiki {
            return &[];
        }
        let r = nfc(link.target_ref_norm.trim()).to_lowercase().replace("%20", " ");
        if r.is_empty() || r.contains('/') || extension(&r).is_some_and(|ext| ext != "md") {
            return &[];
        }
        let coll = link.target_collection.clone().unwrap_or_else(|| source.collection.clone());
        match self.notes_by_name.get(&(coll, strip_md(&r).to_string())) {
            Some(notes) if notes.len() > 1 => notes,
            _ => &[],
        }
    }

    /// The document at `path` from the collection's root, else relative to folder `here`.
    fn at_path(&self, coll: &str, here: &str, path: &str) -> Option<DocKey> {
        let at = |p: String| self.by_path_lower.get(&(coll.to_string(), p)).copied();
        at(path.to_string()).or_else(|| lexical_join(here, path).filter(|_| !here.is_empty()).and_then(at))
    }

    /// The document `name` (a file name, or a path's end) names in `map`, whose keys are file
    /// names with `ext` taken off: in folder `here` first, else the first in [`root_order`].
    fn named(
        &self,
        map: &HashMap<(String, String), Vec<DocKey>>,
        coll: &str,
        here: &str,
        name: &str,
        ext: &str,
    ) -> Option<DocKey> {
        let candidates = map.get(&(coll.to_string(), file_name(name).to_string()))?;
        let tail = format!("/{name}{ext}");
        let found: Vec<(String, DocKey)> = candidates
            .iter()
            .filter_map(|id| Some((nfc(&self.docs.get(id)?.rel_path).to_lowercase(), *id)))
            .filter(|(path, _)| !name.contains('/') || path.ends_with(&tail) || *path == tail[1..])
            .collect();
        found.iter().find(|(path, _)| dir_of(path) == here).or(found.first()).map(|(_, id)| *id)
    }
}

/// The resolver over the active documents as the catalog's generation now has them: built
/// once per generation and shared by the requests until the next change (building it reads
/// every active document: a second at a million notes, for each links, backlinks, impact or
/// capsule request before).
pub(crate) fn resolver(w: &Shared) -> Result<Arc<Resolver>, ApiError> {
    let current = catalog::current_generation(&w.stores.catalog.reader())?;
    resolver_at(w, current, None)
}

/// The resolver of the generation `generation`, built from `snapshot` (a read of that
/// generation, in a transaction) or from a new read when none is given.
fn resolver_at(w: &Shared, generation: i64, snapshot: Option<&Connection>) -> Result<Arc<Resolver>, ApiError> {
    w.generation_caches.get(generation, || match snapshot {
        Some(read) => Ok((generation, Resolver::new(catalog::active_docs(read, None)?))),
        None => {
            let conn = w.stores.catalog.reader();
            // The generation and the rows it names, read in one snapshot.
            let snapshot = catalog::snapshot(&conn)?;
            let generation = catalog::current_generation(&snapshot)?;
            Ok((generation, Resolver::new(catalog::active_docs(&snapshot, None)?)))
        }
    })
}

/// Each document's dependents: the documents whose links resolve to it (not itself), each once
/// with its link's kind (a wiki link wins over a markdown one), in the order of their URIs.
#[derive(Debug, Default)]
pub struct Dependents(HashMap<DocKey, Vec<(DocKey, LinkKind)>>);

impl Dependents {
    /// The dependents of `doc`.
    pub fn of(&self, doc: DocKey) -> &[(DocKey, LinkKind)] {
        self.0.get(&doc).map(Vec::as_slice).unwrap_or_default()
    }
}

/// The [`Dependents`] of the catalog's generation now: built once per generation from every
/// active link (for backlinks and impact, which read each link of the catalog per request
/// before: 1.3 s a backlinks request at 200,000 notes).
pub(crate) fn dependents(w: &Shared) -> Result<Arc<Dependents>, ApiError> {
    let current = catalog::current_generation(&w.stores.catalog.reader())?;
    w.generation_caches.get(current, || {
        let conn = w.stores.catalog.reader();
        let snapshot = catalog::snapshot(&conn)?;
        let generation = catalog::current_generation(&snapshot)?;
        let links = catalog::active_links(&snapshot)?;
        let res = resolver_at(w, generation, Some(&snapshot))?;
        Ok((generation, dependents_of(&res, &links)))
    })
}

fn dependents_of(res: &Resolver, links: &[LinkRow]) -> Dependents {
    let mut edges: BTreeMap<(DocKey, String, DocKey), LinkKind> = BTreeMap::new();
    for l in links {
        let Some(src) = res.doc(l.doc_id) else { continue };
        if let Some(target) = res.resolve(src, l).filter(|t| *t != l.doc_id) {
            let key = (target, uri::doc_uri(&src.collection, &src.rel_path), l.doc_id);
            // One edge per pair: a wiki link wins over a markdown one.
            let kind = l.link_type;
            edges.entry(key).and_modify(|k| *k = (*k).min(kind)).or_insert(kind);
        }
    }
    let mut out = Dependents::default();
    for ((target, _, source), kind) in edges {
        out.0.entry(target).or_default().push((source, kind));
    }
    out
}

pub fn links(w: &Shared, r: &DocRef, kind: Option<LinkKind>) -> Result<LinksResponse, ApiError> {
    let doc = w.resolve_doc(r)?;
    let rows = catalog::links_of(&w.stores.catalog.reader(), doc.id)?;
    let res = resolver(w)?;
    let mut anchors = AnchorBook::new(w);
    let links: Vec<OutgoingLink> = rows
        .iter()
        .filter(|l| kind.is_none_or(|k| l.link_type == k))
        .map(|l| {
            let mut target = res.resolve(&doc, l).and_then(|id| res.doc(id));
            let anchor_found = match (target, l.target_anchor.as_deref()) {
                (Some(t), Some(a)) => anchors.has(t, a)?,
                _ => None,
            };
            // A link to the note's own heading resolves when the heading is there.
            if target.is_some_and(|t| t.id == doc.id) && anchor_found == Some(false) {
                target = None;
            }
            Ok(OutgoingLink {
                target_ref: l.target_ref.clone(),
                target_ref_norm: l.target_ref_norm.clone(),
                link_type: l.link_type,
                embed: l.embed,
                target_anchor_missing: target.is_some() && anchor_found == Some(false),
                start_line: l.start_line,
                start_col: l.start_col,
                end_line: l.end_line,
                end_col: l.end_col,
                source: "parsed".to_string(),
                target_anchor: l.target_anchor.clone(),
                link_text: l.link_text.clone(),
                target_collection: l.target_collection.clone(),
                resolved: target.is_some(),
                resolved_docid: target.map(|t| t.docid.clone()),
                resolved_uri: target.map(|t| uri::doc_uri(&t.collection, &t.rel_path)),
                resolved_title: target.map(|t| t.title.clone()),
            })
        })
        .collect::<Result<_, ApiError>>()?;
    let resolved_count = links.iter().filter(|l| l.resolved).count() as u64;
    Ok(LinksResponse {
        meta: LinksMeta {
            docid: doc.docid.clone(),
            total_links: links.len() as u64,
            resolved_count,
            resolution_available: true,
            type_filter: kind,
        },
        links,
    })
}

pub fn backlinks(w: &Shared, r: &DocRef) -> Result<BacklinksResponse, ApiError> {
    let doc = w.resolve_doc(r)?;
    let res = resolver(w)?;
    // The links of the documents that link to it, in row order as before.
    let mut sources: Vec<DocKey> = dependents(w)?.of(doc.id).iter().map(|(s, _)| *s).collect();
    sources.sort_unstable();
    sources.dedup();
    let mut all = Vec::new();
    {
        let conn = w.stores.catalog.reader();
        for source in sources {
            all.extend(catalog::links_of(&conn, source)?);
        }
    }
    let backlinks: Vec<Backlink> = all
        .iter()
        .filter(|l| l.doc_id != doc.id)
        .filter_map(|l| {
            let src = res.doc(l.doc_id)?;
            (res.resolve(src, l) == Some(doc.id)).then(|| {
                Ok(Backlink {
                    source_docid: src.docid.clone(),
                    source_uri: uri::doc_uri(&src.collection, &src.rel_path),
                    source_title: src.title.clone(),
                    link_text: l.link_text.clone().unwrap_or_else(|| l.target_ref.clone()),
                    link_type: l.link_type,
                    embed: l.embed,
                    start_line: l.start_line,
                    start_col: l.start_col,
                })
            })
        })
        .collect::<Result<_, ApiError>>()?;
    Ok(BacklinksResponse {
        meta: BacklinksMeta { docid: doc.docid.clone(), total_backlinks: backlinks.len() as u64 },
        backlinks,
    })
}

/// An edge of the graph: source, target and link kind (keyed in reverse: see [`graph`]).
type EdgeKey = (DocKey, DocKey, Reverse<LinkKind>);

/// The links an edge stands for, and how many of them are embeds.
#[derive(Debug, Default, Clone, Copy)]
struct EdgeCount {
    links: u32,
    embeds: u32,
}

pub fn graph(w: &Shared, q: &GraphQuery) -> Result<GraphResponse, ApiError> {
    let res = resolver(w)?;
    let all = catalog::active_links(&w.stores.catalog.reader())?;
    // Edges over the whole index: (source, target, type) -> count. The type is keyed in
    // reverse, so that ties order as the types' names do ("markdown" before "wiki"), as the
    // reply's edges always have.
    // Each edge counts its links, and of them its embeds.
    let mut edges: BTreeMap<EdgeKey, EdgeCount> = BTreeMap::new();
    let mut unresolved = 0u64;
    for l in &all {
        let Some(src) = res.doc(l.doc_id) else { continue };
        match res.resolve(src, l) {
            Some(t) if t != l.doc_id => {
                let count = edges.entry((l.doc_id, t, Reverse(l.link_type))).or_default();
                count.links += 1;
                count.embeds += u32::from(l.embed);
            }
            Some(_) => {}
            None => unresolved += 1,
        }
    }
    let mut degree: HashMap<DocKey, u64> = HashMap::new();
    for (s, t, _) in edges.keys() {
        *degree.entry(*s).or_default() += 1;
        *degree.entry(*t).or_default() += 1;
    }
    let in_view = |d: &DocRow| q.collection.as_deref().is_none_or(|c| d.collection == c);
    let view_edges: Vec<(&EdgeKey, &EdgeCount)> = edges
        .iter()
        .filter(|((s, t, _), _)| res.doc(*s).is_some_and(in_view) && res.doc(*t).is_some_and(in_view))
        .collect();
    let linked: HashSet<DocKey> = view_edges.iter().flat_map(|((s, t, _), _)| [*s, *t]).collect();
    let mut nodes: Vec<&DocRow> =
        res.docs.values().filter(|d| in_view(d) && (!q.linked_only || linked.contains(&d.id))).collect();
    let total_nodes = nodes.len();
    nodes.sort_by(|a, b| degree.get(&b.id).unwrap_or(&0).cmp(degree.get(&a.id).unwrap_or(&0)).then(a.id.cmp(&b.id)));
    nodes.truncate(q.limit as usize);
    let kept: HashSet<DocKey> = nodes.iter().map(|d| d.id).collect();
    let mut out_edges: Vec<(&EdgeKey, &EdgeCount)> =
        view_edges.iter().copied().filter(|((s, t, _), _)| kept.contains(s) && kept.contains(t)).collect();
    let total_edges = view_edges.len();
    out_edges.sort_by(|a, b| b.1.links.cmp(&a.1.links).then(a.0.cmp(b.0)));
    let edges_cut = out_edges.len() > q.edge_limit as usize;
    out_edges.truncate(q.edge_limit as usize);
    let graph_nodes: Vec<GraphNode> = nodes
        .iter()
        .map(|d| GraphNode {
            id: d.docid.clone(),
            uri: uri::doc_uri(&d.collection, &d.rel_path),
            title: d.title.clone(),
            collection: d.collection.clone(),
            rel_path: d.rel_path.clone(),
            degree: degree.get(&d.id).copied().unwrap_or(0),
        })
        .collect();
    let mut graph_edges: Vec<GraphEdge> = Vec::with_capacity(out_edges.len());
    for ((s, t, kind), n) in &out_edges {
        let (Some(source), Some(target)) = (res.doc(*s), res.doc(*t)) else { continue };
        graph_edges.push(GraphEdge {
            source: source.docid.clone(),
            target: target.docid.clone(),
            kind: kind.0.into(),
            weight: EdgeWeight::Count(n.links),
            embeds: (n.embeds > 0).then_some(n.embeds),
        });
    }
    let mut warnings: Vec<String> = Vec::new();
    let (mut similar_available, mut similar_truncated) = (false, false);
    if q.include_similar {
        match VectorContext::available(w) {
            Some(ctx) => {
                similar_available = true;
                let (edges, truncated) = similarity_edges(&ctx, &nodes, q)?;
                similar_truncated = truncated;
                let room = (q.edge_limit as usize).saturating_sub(graph_edges.len());
                if edges.len() > room {
                    warnings.push(format!("{} similarity edges left out by edgeLimit", edges.len() - room));
                }
                graph_edges.extend(edges.into_iter().take(room));
            }
            None => warnings.push("Similarity edges need embeddings, and none are available yet.".into()),
        }
    }
    let meta = GraphMeta {
        collection: q.collection.as_ref().map(ToString::to_string),
        node_limit: q.limit,
        edge_limit: q.edge_limit,
        total_nodes: total_nodes as u64,
        total_edges: total_edges as u64,
        total_edges_unresolved: unresolved,
        returned_nodes: graph_nodes.len() as u64,
        returned_edges: graph_edges.len() as u64,
        truncated: total_nodes > q.limit as usize || edges_cut,
        linked_only: q.linked_only,
        included_similar: q.include_similar && similar_available,
        similar_available,
        similar_top_k: q.similar_top_k,
        similar_truncated_by_compute_budget: similar_truncated,
        warnings,
    };
    Ok(GraphResponse { nodes: graph_nodes, links: graph_edges, meta })
}

/// Nodes whose pairwise similarity is computed at most (the compute budget).
const MAX_SIMILARITY_NODES: usize = 1500;

/// `similar` edges between the nodes: each node's `similarTopK` nearest others by their
/// `seq = 0` vectors (no fallback), above `threshold`, each pair once.
fn similarity_edges(
    ctx: &VectorContext<'_>,
    nodes: &[&DocRow],
    q: &GraphQuery,
) -> Result<(Vec<GraphEdge>, bool), ApiError> {
    let hashes: Vec<String> = nodes.iter().map(|d| d.mirror_hash.clone()).collect();
    let by_hash = ctx.store.first_vectors(&ctx.key, &hashes)?;
    let with: Vec<(&DocRow, &Vec<f32>)> =
        nodes.iter().filter_map(|d| by_hash.get(&d.mirror_hash).map(|v| (*d, v))).collect();
    let truncated = with.len() > MAX_SIMILARITY_NODES;
    let with = &with[..with.len().min(MAX_SIMILARITY_NODES)];
    let mut pairs: BTreeMap<(usize, usize), f32> = BTreeMap::new();
    for (i, (_, a)) in with.iter().enumerate() {
        let mut near: Vec<(usize, f32)> = with
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(j, (_, b))| (j, vectors::distance_to_score(1.0 - vectors::similarity(a, b) as f32)))
            .filter(|(_, s)| f64::from(*s) >= q.threshold)
            .collect();
        near.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        for (j, score) in near.into_iter().take(q.similar_top_k as usize) {
            pairs.insert((i.min(j), i.max(j)), score);
        }
    }
    let mut edges: Vec<((usize, usize), f32)> = pairs.into_iter().collect();
    edges.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let out = edges
        .into_iter()
        .map(|((i, j), score)| GraphEdge {
            source: with[i].0.docid.clone(),
            target: with[j].0.docid.clone(),
            kind: GraphEdgeKind::Similar,
            weight: EdgeWeight::Score(f64::from(score)),
            embeds: None,
        })
        .collect();
    Ok((out, truncated))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::stores::catalog::Link;

    #[test]
    fn dependents_read_before_the_resolver_are_read_in_one_snapshot_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let notes = [("a.md", "# A\n\nSee [[b]].\n"), ("b.md", "# B\n"), ("c.md", "# C\n\n[[b]] and [[a]]\n")];
        let w = crate::test_worker_with_notes(dir.path(), &notes);
        let id = |rel: &str| {
            let docs = catalog::active_docs(&w.shared.stores.catalog.reader(), None).unwrap();
            docs.iter().find(|d| d.rel_path == rel).map(|d| d.id).unwrap()
        };
        // Nothing kept yet: the dependents build the resolver inside their own snapshot.
        let deps = dependents(&w.shared).unwrap();
        let of_b: Vec<DocKey> = deps.of(id("b.md")).iter().map(|(s, _)| *s).collect();
        assert_eq!(of_b, [id("a.md"), id("c.md")], "in URI order");
        assert_eq!(deps.of(id("c.md")), []);
        assert!(Arc::ptr_eq(&deps, &dependents(&w.shared).unwrap()), "kept for the generation");
        assert!(Arc::ptr_eq(&resolver(&w.shared).unwrap(), &resolver(&w.shared).unwrap()));
        let links = backlinks(&w.shared, &DocRef::Uri("svc://n/b.md".into())).unwrap();
        assert_eq!(links.meta.total_backlinks, 2);
    }

    fn doc(id: i64, rel_path: &str, title: &str, mime: &str) -> DocRow {
        DocRow {
            id: DocKey(id),
            collection: "v".into(),
            rel_path: rel_path.into(),
            docid: format!("#{id}"),
            source_hash: String::new(),
            mirror_hash: String::new(),
            source_mime: mime.into(),
            source_ext: rel_path.rsplit('.').next().unwrap().into(),
            source_size: 0,
            source_mtime_ns: 0,
            title: title.into(),
            author: None,
            categories: Vec::new(),
            fm_date: None,
            date_fields: BTreeMap::new(),
            body_start_line: 1,
            active: true,
            gen: 0,
            bm25_gen: 0,
            fm_type: None,
            part_of: None,
        }
    }

    fn wiki(target: &str) -> LinkRow {
        LinkRow {
            doc_id: DocKey(0),
            link: Link {
                link_type: LinkKind::Wiki,
                target_ref: target.into(),
                target_ref_norm: nfc(target).to_lowercase(),
                target_anchor: None,
                target_collection: None,
                link_text: None,
                start_line: 1,
                start_col: 1,
                end_line: 1,
                end_col: 1,
                embed: false,
            },
        }
    }

    fn vault() -> (Resolver, DocRow, DocRow) {
        let md = "text/markdown";
        let from_root = doc(100, "Home.md", "Home", md);
        let from_deep = doc(101, "Deep/Down/Reader.md", "Reader", md);
        let rows = vec![
            doc(1, "Attachments/Search.png", "Search", "image/png"),
            doc(2, "Plugins/Search.md", "Search", md),
            doc(3, "Deep/Down/Search.md", "Search here", md),
            doc(4, "a/b/c/Search.md", "Search deep", md),
            doc(5, "Ideas/Café.md", "A title of its own", md),
            doc(6, "Ideas/Meeting Notes.md", "Meetings", md),
            doc(7, "Pictures/Only.png", "Only", "image/png"),
            doc(8, "Reports/Q3 review.pdf", "Third quarter", "application/pdf"),
            from_root.clone(),
            from_deep.clone(),
        ];
        (Resolver::new(rows), from_root, from_deep)
    }

    #[test]
    fn a_name_without_an_extension_reaches_a_note_before_a_picture_of_that_name() {
        let (r, root, _) = vault();
        assert_eq!(r.resolve(&root, &wiki("Search")), Some(DocKey(2)), "the shortest path of the notes");
        assert_eq!(r.resolve(&root, &wiki("Search.png")), Some(DocKey(1)), "the picture when written with it");
        assert_eq!(r.resolve(&root, &wiki("Attachments/Search.png")), Some(DocKey(1)));
        assert_eq!(r.resolve(&root, &wiki("Only")), None, "a picture is not reached by its name or title");
        assert_eq!(r.resolve(&root, &wiki("Only.png")), Some(DocKey(7)));
        assert_eq!(r.resolve(&root, &wiki("Q3 review.pdf")), Some(DocKey(8)));
    }

    #[test]
    fn of_several_notes_of_a_name_the_one_beside_the_linking_note_wins() {
        let (r, root, deep) = vault();
        assert_eq!(r.resolve(&deep, &wiki("Search")), Some(DocKey(3)), "same folder");
        assert_eq!(r.resolve(&root, &wiki("c/Search")), Some(DocKey(4)), "a path by its end");
        assert_eq!(r.resolve(&deep, &wiki("Plugins/Search")), Some(DocKey(2)), "a path from the root");
        assert_eq!(r.resolve(&deep, &wiki("../Down/Search.md")), Some(DocKey(3)), "relative to the note");
    }

    #[test]
    fn case_unicode_form_and_escaped_spaces_agree_and_titles_come_last() {
        let (r, root, _) = vault();
        assert_eq!(r.resolve(&root, &wiki("meeting%20notes")), Some(DocKey(6)));
        assert_eq!(r.resolve(&root, &wiki("MEETING NOTES")), Some(DocKey(6)));
        assert_eq!(r.resolve(&root, &wiki("Cafe\u{301}")), Some(DocKey(5)), "decomposed é");
        assert_eq!(r.resolve(&root, &wiki("A title of its own")), Some(DocKey(5)), "a title when no file has the name");
        assert_eq!(r.resolve(&root, &wiki("Third quarter")), Some(DocKey(8)));
        assert_eq!(r.resolve(&root, &wiki("nowhere")), None);
    }

    #[test]
    fn a_link_to_a_heading_of_the_note_itself_reaches_the_note() {
        let (r, root, _) = vault();
        let mut own = wiki("");
        own.link.target_anchor = Some("Part".into());
        assert_eq!(r.resolve(&root, &own), Some(root.id));
        own.link.target_anchor = None;
        assert_eq!(r.resolve(&root, &own), None, "no target and no anchor is no link");
    }
}
