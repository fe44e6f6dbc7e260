//! Outgoing links, backlinks and the link graph.

pub use crate::messages::LinkKind;
use serde::{Deserialize, Serialize};

/// An entry of `GET /api/doc/{id}/links`. The optional keys are absent, not `null`, when
/// the link has no such part or did not resolve.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutgoingLink {
    pub target_ref: String,
    pub target_ref_norm: String,
    pub link_type: LinkKind,
    /// `true` for an embed (`![[Note]]`, `![alt](pic.png)`); absent for a plain link.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub embed: bool,
    pub start_line: u32,
    pub start_col: u32,
    pub end_line: u32,
    pub end_col: u32,
    /// Where the link record comes from: always `parsed`.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_anchor: Option<String>,
    /// `true` when the link resolved to a note that has no heading or block of its
    /// `targetAnchor`; absent otherwise (no anchor, one that exists, or a target whose anchors
    /// are not read, such as a PDF's page).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub target_anchor_missing: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_text: Option<String>,
    /// The collection of a `[[coll:Target]]` link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_collection: Option<String>,
    pub resolved: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_docid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_title: Option<String>,
}

/// `meta` of `GET /api/doc/{id}/links`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinksMeta {
    pub docid: String,
    pub total_links: u64,
    pub resolved_count: u64,
    pub resolution_available: bool,
    /// The `type` filter of the request, `null` without one.
    pub type_filter: Option<LinkKind>,
}

/// `GET /api/doc/{id}/links`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct LinksResponse {
    pub links: Vec<OutgoingLink>,
    pub meta: LinksMeta,
}

/// An entry of `GET /api/doc/{id}/backlinks`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Backlink {
    pub source_docid: String,
    pub source_uri: String,
    pub source_title: String,
    /// The link's text, else its target as written.
    pub link_text: String,
    pub link_type: LinkKind,
    /// `true` for an embed; absent for a plain link.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub embed: bool,
    pub start_line: u32,
    pub start_col: u32,
}

/// `meta` of `GET /api/doc/{id}/backlinks`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BacklinksMeta {
    pub docid: String,
    pub total_backlinks: u64,
}

/// `GET /api/doc/{id}/backlinks`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct BacklinksResponse {
    pub backlinks: Vec<Backlink>,
    pub meta: BacklinksMeta,
}

/// A node of `GET /api/graph`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GraphNode {
    /// The docid.
    pub id: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
    pub rel_path: String,
    /// Distinct (source, target, type) edges over the whole index.
    pub degree: u64,
}

/// The `type` of a graph edge: a link kind, or `similar`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum GraphEdgeKind {
    Wiki,
    Markdown,
    Similar,
}

impl From<LinkKind> for GraphEdgeKind {
    fn from(k: LinkKind) -> Self {
        match k {
            LinkKind::Wiki => GraphEdgeKind::Wiki,
            LinkKind::Markdown => GraphEdgeKind::Markdown,
        }
    }
}

/// The `weight` of a graph edge: a link count (an integer on the wire) or a similarity
/// score (an `f32` score widened to `f64`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EdgeWeight {
    Count(u32),
    Score(f64),
}

/// An edge (`links` entry) of `GET /api/graph`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct GraphEdge {
    /// Source node id (docid).
    pub source: String,
    /// Target node id (docid).
    pub target: String,
    #[serde(rename = "type")]
    pub kind: GraphEdgeKind,
    /// A link count (an integer) or a similarity score: a JSON number either way.
    #[schema(value_type = f64)]
    pub weight: EdgeWeight,
    /// How many of a link edge's links are embeds; absent when none are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeds: Option<u32>,
}

/// `meta` of `GET /api/graph`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GraphMeta {
    /// `null` when unfiltered.
    pub collection: Option<String>,
    pub node_limit: u32,
    pub edge_limit: u32,
    pub total_nodes: u64,
    pub total_edges: u64,
    pub total_edges_unresolved: u64,
    pub returned_nodes: u64,
    pub returned_edges: u64,
    pub truncated: bool,
    pub linked_only: bool,
    pub included_similar: bool,
    pub similar_available: bool,
    pub similar_top_k: u32,
    pub similar_truncated_by_compute_budget: bool,
    pub warnings: Vec<String>,
}

/// `GET /api/graph`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct GraphResponse {
    pub nodes: Vec<GraphNode>,
    pub links: Vec<GraphEdge>,
    pub meta: GraphMeta,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_kinds_are_lowercase() {
        assert_eq!(serde_json::to_value(LinkKind::Wiki).unwrap(), "wiki");
        assert_eq!(serde_json::to_value(LinkKind::Markdown).unwrap(), LinkKind::Markdown.as_str());
        assert_eq!(serde_json::to_value(GraphEdgeKind::Similar).unwrap(), "similar");
        assert_eq!(LinkKind::parse("markdown"), Some(LinkKind::Markdown));
        assert_eq!(LinkKind::parse("similar"), None);
    }

    #[test]
    fn edge_weights_keep_integers_and_scores_apart() {
        assert_eq!(serde_json::to_string(&EdgeWeight::Count(3)).unwrap(), "3");
        let score = EdgeWeight::Score(f64::from(0.8_f32));
        let s = serde_json::to_string(&score).unwrap();
        assert_eq!(s, serde_json::json!(0.8_f32).to_string(), "the digits of the old json! literal");
        assert_eq!(serde_json::from_str::<EdgeWeight>(&s).unwrap(), score);
        assert_eq!(serde_json::from_str::<EdgeWeight>("3").unwrap(), EdgeWeight::Count(3));
    }
}
