//! `impact@1.0`: who depends on a note. A breadth-first walk against the direction of the
//! links (from a note to the notes that link to it, then to theirs), bounded in depth,
//! dependents, edges, frontier and visits; each dependent comes with one shortest path of
//! links back to the root.

use crate::reads::links::{dependents, resolver};
use crate::shared::Shared;
use crate::stores::catalog::DocRow;
use crate::stores::DocKey;
use crate::uri;
use protocol::api::{DocIdentity, EvidenceEdge, ImpactMeta, ImpactResponse, ImpactedDoc, PathNode};
use protocol::{ApiError, DocRef, ImpactBounds, LinkKind};
use std::collections::{HashMap, HashSet};

fn identity(d: &DocRow) -> DocIdentity {
    DocIdentity {
        id: d.docid.clone(),
        uri: uri::doc_uri(&d.collection, &d.rel_path),
        title: d.title.clone(),
        collection: d.collection.clone(),
        rel_path: d.rel_path.clone(),
    }
}

fn node(d: &DocRow) -> PathNode {
    PathNode { id: d.docid.clone(), uri: uri::doc_uri(&d.collection, &d.rel_path) }
}

/// What stopped the walk early.
#[derive(Default)]
struct Cuts {
    depth: bool,
    nodes: bool,
    edges: bool,
    frontier: bool,
    visited: bool,
}

impl Cuts {
    fn any(&self) -> bool {
        self.depth || self.nodes || self.edges || self.frontier || self.visited
    }

    fn warnings(&self, b: &ImpactBounds) -> Vec<String> {
        [
            (self.depth, format!("Dependents more than maxDepth={} links away were not followed.", b.max_depth)),
            (self.nodes, format!("Stopped at maxNodes={} dependents.", b.max_nodes)),
            (self.edges, format!("Stopped at maxEdges={} evidence edges.", b.max_edges)),
            (
                self.frontier,
                format!(
                    "A level had more than frontierLimit={} documents; the rest were not expanded.",
                    b.frontier_limit
                ),
            ),
            (self.visited, format!("Stopped after visitedLimit={} documents.", b.visited_limit)),
        ]
        .into_iter()
        .filter_map(|(hit, w)| hit.then_some(w))
        .collect()
    }
}

pub fn impact(w: &Shared, r: &DocRef, b: &ImpactBounds) -> Result<ImpactResponse, ApiError> {
    let root = w.resolve_any_doc(r)?;
    let res = resolver(w)?;
    let deps = dependents(w)?;
    // child -> (the document it links to on its path, the link's kind)
    let mut parent: HashMap<DocKey, (DocKey, LinkKind)> = HashMap::new();
    let mut visited: HashSet<DocKey> = HashSet::from([root.id]);
    let mut found: Vec<(DocKey, u32)> = Vec::new();
    let mut edge_count: u64 = 0;
    let mut cuts = Cuts::default();
    let mut frontier = vec![root.id];
    let mut depth = 0u32;
    'walk: while !frontier.is_empty() {
        if depth == b.max_depth {
            cuts.depth = frontier.iter().any(|n| deps.of(*n).iter().any(|(s, _)| !visited.contains(s)));
            break;
        }
        depth += 1;
        if frontier.len() > b.frontier_limit as usize {
            let dropped = frontier.split_off(b.frontier_limit as usize);
            cuts.frontier |= dropped.iter().any(|n| deps.of(*n).iter().any(|(s, _)| !visited.contains(s)));
        }
        let mut next = Vec::new();
        for n in &frontier {
            for (src, kind) in deps.of(*n) {
                if visited.contains(src) {
                    continue;
                }
                if visited.len() >= b.visited_limit as usize {
                    cuts.visited = true;
                    break 'walk;
                }
                if found.len() >= b.max_nodes as usize {
                    cuts.nodes = true;
                    break 'walk;
                }
                if edge_count + u64::from(depth) > u64::from(b.max_edges) {
                    cuts.edges = true;
                    break 'walk;
                }
                visited.insert(*src);
                parent.insert(*src, (*n, *kind));
                found.push((*src, depth));
                edge_count += u64::from(depth);
                next.push(*src);
            }
        }
        // Each level in URI order, as the dependents of one document are.
        next.sort_by_cached_key(|id| res.doc(*id).map(|d| uri::doc_uri(&d.collection, &d.rel_path)));
        frontier = next;
    }
    // Nearest first, URI order within a depth.
    found.sort_by_cached_key(|(id, depth)| (*depth, res.doc(*id).map(|d| uri::doc_uri(&d.collection, &d.rel_path))));
    let mut impacted = Vec::with_capacity(found.len());
    for (id, depth) in found {
        let Some(doc) = res.doc(id) else { continue };
        let mut path = Vec::with_capacity(depth as usize);
        let mut at = id;
        while let Some((to, kind)) = parent.get(&at) {
            let (Some(from_doc), Some(to_doc)) = (res.doc(at), res.doc(*to).or((*to == root.id).then_some(&root)))
            else {
                break;
            };
            path.push(EvidenceEdge {
                source: node(from_doc),
                target: node(to_doc),
                edge_type: *kind,
                relation_type: "links_to".into(),
                confidence: 1.0,
                edge_source: "parsed".into(),
            });
            at = *to;
        }
        impacted.push(ImpactedDoc { document: identity(doc), depth, evidence_path: path });
    }
    let meta = ImpactMeta {
        max_depth: b.max_depth,
        max_nodes: b.max_nodes,
        max_edges: b.max_edges,
        frontier_limit: b.frontier_limit,
        visited_limit: b.visited_limit,
        returned_nodes: impacted.len() as u64,
        returned_edges: impacted.iter().map(|d| d.evidence_path.len() as u64).sum(),
        truncated: cuts.any(),
        warnings: cuts.warnings(b),
    };
    Ok(ImpactResponse { schema_version: "1.0".into(), root: identity(&root), impacted, meta })
}
