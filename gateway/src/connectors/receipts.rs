//! Saved connector verifications: the newest per connector and collection, kept in
//! `<data>/<index>/connectors.json` by the gateway, which also projects them into
//! `/api/status` (`connectorProjection`).

use super::clients::write_atomically;
use protocol::api::{ConnectorProjection, ConnectorReceipt};
use std::path::Path;

/// Receipts kept in the file.
const MAX_KEPT: usize = 256;
/// Receipts shown in `/api/status` (`truncated` when there are more).
pub const MAX_PROJECTED: usize = 32;

fn load(path: &Path) -> Vec<ConnectorReceipt> {
    std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

/// Saves `receipt`, replacing the earlier one of the same connector and collection.
pub fn save(path: &Path, receipt: ConnectorReceipt) -> Result<(), super::ConfigError> {
    let mut all = load(path);
    all.retain(|r| !(r.connector_id == receipt.connector_id && r.collection == receipt.collection));
    all.insert(0, receipt);
    all.truncate(MAX_KEPT);
    let text = serde_json::to_string(&all).unwrap_or_else(|_| "[]".into());
    write_atomically(path, &text)
}

/// The newest receipts, newest first, at most [`MAX_PROJECTED`].
pub fn projection(path: &Path) -> ConnectorProjection {
    let mut all = load(path);
    let truncated = all.len() > MAX_PROJECTED;
    all.truncate(MAX_PROJECTED);
    ConnectorProjection { targets: all, truncated }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::api::ConnectorStageStatus;

    fn receipt(id: &str, collection: &str, at: &str) -> ConnectorReceipt {
        ConnectorReceipt {
            connector_id: id.into(),
            collection: collection.into(),
            status: ConnectorStageStatus::Passed,
            code: None,
            verified_at: at.into(),
        }
    }

    #[test]
    fn one_receipt_per_pair_newest_first_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("connectors.json");
        assert_eq!(projection(&path), ConnectorProjection::default());
        save(&path, receipt("cursor-mcp", "a", "1")).unwrap();
        save(&path, receipt("cursor-mcp", "b", "2")).unwrap();
        save(&path, receipt("cursor-mcp", "a", "3")).unwrap();
        let p = projection(&path);
        let got: Vec<_> = p.targets.iter().map(|r| (r.collection.as_str(), r.verified_at.as_str())).collect();
        assert_eq!(got, [("a", "3"), ("b", "2")]);
        for i in 0..40 {
            save(&path, receipt("codex-mcp", &format!("c{i}"), "4")).unwrap();
        }
        let p = projection(&path);
        assert!(p.truncated);
        assert_eq!(p.targets.len(), MAX_PROJECTED);
    }
}
