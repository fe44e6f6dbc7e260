//! The team's object store (`SVC_<team>_files`, JetStream's object store on the same
//! cluster): the bytes of a version too large for one message (`max_payload`, 1 MB by
//! default), up to the largest file svc reads ([`MAX_FILE_BYTES`]). The document's message
//! then carries its headers alone, `Svc-Object` among them; a member reads the bytes from the
//! store by the version's name and checks them against its hash.
//!
//! One object per version ([`subject::object_name`]): the publisher stores the bytes before
//! the message, deletes them again when the message is refused, and deletes the version
//! before once the new one is in the stream. A member catching up past a version whose bytes
//! are gone finds the newer version after it in the stream, so such a message is skipped.

use super::subject::{self, DocMessage, DocOp};
use super::{PublishFailure, Team};
use crate::index::reading::MAX_FILE_BYTES;
use async_nats::jetstream::object_store::{self, GetErrorKind, ObjectStore};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// How long storing or reading one version's bytes may take.
const TRANSFER_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether a version too large for a message may go to the object store: its bytes alone
/// (vectors never do), no larger than svc reads a file.
pub(super) fn may_store(msg: &DocMessage) -> bool {
    matches!(&msg.op, DocOp::Put { bytes, vectors: None, .. } if bytes.len() as u64 <= MAX_FILE_BYTES)
}

impl Team {
    fn bucket(&self) -> String {
        format!("{}_files", self.settings.team.stream())
    }

    /// The object store, opened (or made, by the first member that needs it) once.
    async fn files(&self) -> Result<&ObjectStore, String> {
        let js = match self.conn.get() {
            Some((_, js)) => js.clone(),
            None => return Err("not connected".to_string()),
        };
        let bucket = self.bucket();
        let replicas = super::replicas(&self.settings);
        self.files
            .get_or_try_init(|| async move {
                match js.get_object_store(&bucket).await {
                    Ok(store) => Ok(store),
                    Err(_) => js
                        .create_object_store(object_store::Config {
                            bucket: bucket.clone(),
                            num_replicas: replicas,
                            ..Default::default()
                        })
                        .await
                        .map_err(|e| format!("the team's object store {bucket}: {e}")),
                }
            })
            .await
    }

    /// Stores a version's bytes under its name. Blocking.
    pub(super) fn store_bytes(&self, msg: &DocMessage) -> Result<(), PublishFailure> {
        let DocOp::Put { bytes, .. } = &msg.op else { return Ok(()) };
        let name = msg.object_name();
        let put = self.rt.block_on(tokio::time::timeout(TRANSFER_TIMEOUT, async {
            let store = self.files().await?;
            store.put(name.as_str(), &mut bytes.as_slice()).await.map_err(|e| e.to_string())?;
            Ok::<_, String>(())
        }));
        match put {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(PublishFailure::Unavailable(format!("storing {}: {e}", msg.rel_path))),
            Err(_) => Err(PublishFailure::Unavailable(format!("storing {} took too long", msg.rel_path))),
        }
    }

    /// Deletes the stored bytes of one version, if they are there (what is left behind is
    /// logged: it takes room, and changes nothing). Blocking.
    pub(super) fn forget_bytes(&self, collection: &str, rel_path: &str, hash: &str) {
        let name = subject::object_name(collection, rel_path, hash);
        let deleted = self.rt.block_on(tokio::time::timeout(TRANSFER_TIMEOUT, async {
            let store = self.files().await?;
            match store.delete(name.as_str()).await {
                Err(e) if e.kind() != object_store::DeleteErrorKind::NotFound => Err(e.to_string()),
                _ => Ok(()),
            }
        }));
        match deleted {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("team: the stored bytes of {rel_path} stay in the object store: {e}"),
            Err(_) => tracing::warn!("team: deleting the stored bytes of {rel_path} took too long"),
        }
    }

    /// Reads a stored version's bytes into its message; `None` when they are gone (a newer
    /// version replaced it) or damaged: that message is left alone.
    pub(super) async fn fetch_bytes(&self, doc: DocMessage) -> Result<Option<DocMessage>, String> {
        let name = doc.object_name();
        let read = tokio::time::timeout(TRANSFER_TIMEOUT, async {
            let store = self.files().await?;
            let mut object = match store.get(name.as_str()).await {
                Ok(o) => o,
                Err(e) if e.kind() == GetErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e.to_string()),
            };
            let mut bytes = Vec::new();
            (&mut object).take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).await.map_err(|e| e.to_string())?;
            Ok(Some(bytes))
        })
        .await
        .map_err(|_| format!("reading the stored bytes of {} took too long", doc.rel_path))?;
        match read.map_err(|e| format!("the stored bytes of {}: {e}", doc.rel_path))? {
            None => Ok(None),
            Some(bytes) => match doc.with_stored_bytes(bytes) {
                Ok(doc) => Ok(Some(doc)),
                Err(e) => {
                    tracing::warn!("team: {e}; that version is left alone");
                    Ok(None)
                }
            },
        }
    }
}
