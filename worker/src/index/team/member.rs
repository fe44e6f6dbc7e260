//! This member: its name in the team, and the heartbeat that tells the others it is there.

use super::Team;
use crate::index::Indexing;
use std::path::Path;
use std::sync::Arc;

/// The host's name and a suffix kept in the data dir (`<index>/team-member`), so two data
/// dirs on one machine are two members and a restart is the same one.
pub fn default_name(index_dir: &Path) -> String {
    let file = index_dir.join("team-member");
    if let Ok(name) = std::fs::read_to_string(&file) {
        let name = name.trim();
        if !name.is_empty() {
            return super::subject::member_token(name);
        }
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "svc".to_string());
    let suffix: String = uuid::Uuid::new_v4().simple().to_string().chars().take(6).collect();
    let name = super::subject::member_token(&format!("{host}-{suffix}"));
    if let Err(e) = protocol::write_atomic(&file, name.as_bytes()) {
        tracing::warn!("team: cannot keep this member's name in {}: {e}", file.display());
    }
    name
}

/// Publishes this member's heartbeat every few seconds (to the stream, so a member that
/// starts later sees who was there), and the status when the connection changed.
pub async fn heartbeat(ix: Arc<Indexing>, team: Arc<Team>) {
    let subject = team.settings.team.member_subject(&team.settings.member);
    let mut was_connected = None;
    let mut tick: u64 = 0;
    loop {
        let connected = team.connected();
        if connected && tick.is_multiple_of(super::HEARTBEAT_TICKS) {
            if let Some((_, js)) = team.conn.get() {
                let body = format!("{{\"name\":\"{}\"}}", team.settings.member);
                match js.publish(subject.clone(), body.into()).await {
                    Ok(ack) => {
                        if let Err(e) = ack.await {
                            tracing::debug!("team: heartbeat not acknowledged: {e}");
                        }
                    }
                    Err(e) => tracing::debug!("team: heartbeat not sent: {e}"),
                }
            }
        }
        if was_connected != Some(connected) {
            was_connected = Some(connected);
            super::publish_status(&ix).await;
        }
        tick += 1;
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}
