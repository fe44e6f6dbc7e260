//! Link resolution, outgoing links, backlinks and the link graph.
//!
//! Links are stored as written; they are resolved at read time against the active
//! documents, so renames and new notes are reflected without re-parsing the sources.

use crate::retrieval::vector::VectorContext;
use crate::shared::Shared;
use crate::stores::catalog::{self, DocRow, LinkRow};
use crate::stores::vectors;
use crate::stores::DocKey;
use crate::uri;
use protocol::api::{
    Backlink, BacklinksMeta, BacklinksResponse, EdgeWeight, GraphEdge, GraphEdgeKind, GraphMeta, GraphNode,
    GraphResponse, LinksMeta, LinksResponse, OutgoingLink,
};
use protocol::{ApiError, DocRef, GraphQuery, LinkKind};
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Lookup tables over the active documents.
pub struct Resolver {
    docs: HashMap<DocKey, DocRow>,
    by_title: HashMap<(String, String), DocKey>,
    by_path: HashMap<(String, String), DocKey>,
    by_path_lower: HashMap<(String, String), DocKey>,
    by_stem: HashMap<(String, String), DocKey>,
}

fn keep_lowest(map: &mut HashMap<(String, String), DocKey>, key: (String, String), id: DocKey) {
    map.entry(key).and_modify(|v| *v = (*v).min(id)).or_insert(id);
}

fn strip_md(s: &str) -> &str {
    s.strip_suffix(".md").unwrap_or(s)
}

impl Resolver {
    pub fn new(rows: Vec<DocRow>) -> Self {
        let mut r = Resolver {
            docs: HashMap::new(),
            by_title: HashMap::new(),
            by_path: HashMap::new(),
            by_path_lower: HashMap::new(),
            by_stem: HashMap::new(),
        };
        for d in rows {
            let c = d.collection.clone();
            keep_lowest(&mut r.by_title, (c.clone(), d.title.trim().to_lowercase()), d.id);
            keep_lowest(&mut r.by_path, (c.clone(), d.rel_path.clone()), d.id);
            let lower = d.rel_path.to_lowercase();
            let stem = strip_md(lower.rsplit('/').next().unwrap_or(&lower)).to_string();
            keep_lowest(&mut r.by_path_lower, (c.clone(), lower), d.id);
            keep_lowest(&mut r.by_stem, (c, stem), d.id);
            r.docs.insert(d.id, d);
        }
        r
    }

    pub fn doc(&self, id: DocKey) -> Option<&DocRow> {
        self.docs.get(&id)
    }

    /// The document a link points to. Wiki links match, in order: title, title without
    /// `.md`, path, path + `.md`, file name (for a bare name) or path suffix (with `/`).
    /// Markdown links match the resolved path exactly, then case-insensitively.
    pub fn resolve(&self, source_collection: &str, link: &LinkRow) -> Option<DocKey> {
        let coll = link.target_collection.clone().unwrap_or_else(|| source_collection.to_string());
        if link.link_type == LinkKind::Markdown {
            return self
                .by_path
                .get(&(coll.clone(), link.target_ref_norm.clone()))
                .or_else(|| self.by_path_lower.get(&(coll, link.target_ref_norm.to_lowercase())))
                .copied();
        }
        let r = link.target_ref_norm.trim().trim_start_matches('/').to_lowercase();
        if r.is_empty() {
            return None;
        }
        let key = |s: &str| (coll.clone(), s.to_string());
        let bare = strip_md(&r);
        if let Some(id) = self.by_title.get(&key(&r)).or_else(|| self.by_title.get(&key(bare))) {
            return Some(*id);
        }
        if let Some(id) =
            self.by_path_lower.get(&key(&r)).or_else(|| self.by_path_lower.get(&key(&format!("{bare}.md"))))
        {
            return Some(*id);
        }
        if !bare.contains('/') {
            return self.by_stem.get(&key(bare)).copied();
        }
        let suffix = format!("/{bare}.md");
        self.docs
            .values()
            .filter(|d| d.collection == coll && d.rel_path.to_lowercase().ends_with(&suffix))
            .map(|d| d.id)
            .min()
    }
}

pub(crate) fn resolver(w: &Shared) -> Result<Resolver, ApiError> {
    Ok(Resolver::new(catalog::active_docs(&w.stores.catalog.reader(), None)?))
}

pub fn links(w: &Shared, r: &DocRef, kind: Option<LinkKind>) -> Result<LinksResponse, ApiError> {
    let doc = w.resolve_doc(r)?;
    let rows = catalog::links_of(&w.stores.catalog.reader(), doc.id)?;
    let res = resolver(w)?;
    let links: Vec<OutgoingLink> = rows
        .iter()
        .filter(|l| kind.is_none_or(|k| l.link_type == k))
        .map(|l| {
            let target = res.resolve(&doc.collection, l).and_then(|id| res.doc(id));
            Ok(OutgoingLink {
                target_ref: l.target_ref.clone(),
                target_ref_norm: l.target_ref_norm.clone(),
                link_type: l.link_type,
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
    let all = catalog::active_links(&w.stores.catalog.reader())?;
    let backlinks: Vec<Backlink> = all
        .iter()
        .filter(|l| l.doc_id != doc.id)
        .filter_map(|l| {
            let src = res.doc(l.doc_id)?;
            (res.resolve(&src.collection, l) == Some(doc.id)).then(|| {
                Ok(Backlink {
                    source_docid: src.docid.clone(),
                    source_uri: uri::doc_uri(&src.collection, &src.rel_path),
                    source_title: src.title.clone(),
                    link_text: l.link_text.clone().unwrap_or_else(|| l.target_ref.clone()),
                    link_type: l.link_type,
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

pub fn graph(w: &Shared, q: &GraphQuery) -> Result<GraphResponse, ApiError> {
    let res = resolver(w)?;
    let all = catalog::active_links(&w.stores.catalog.reader())?;
    // Edges over the whole index: (source, target, type) -> count. The type is keyed in
    // reverse, so that ties order as the types' names do ("markdown" before "wiki"), as the
    // reply's edges always have.
    let mut edges: BTreeMap<EdgeKey, u32> = BTreeMap::new();
    let mut unresolved = 0u64;
    for l in &all {
        let Some(src) = res.doc(l.doc_id) else { continue };
        match res.resolve(&src.collection, l) {
            Some(t) if t != l.doc_id => *edges.entry((l.doc_id, t, Reverse(l.link_type))).or_default() += 1,
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
    let view_edges: Vec<(&EdgeKey, &u32)> = edges
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
    let mut out_edges: Vec<(&EdgeKey, &u32)> =
        view_edges.iter().copied().filter(|((s, t, _), _)| kept.contains(s) && kept.contains(t)).collect();
    let total_edges = view_edges.len();
    out_edges.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
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
            weight: EdgeWeight::Count(**n),
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
        })
        .collect();
    Ok((out, truncated))
}
