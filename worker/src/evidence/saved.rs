//! Saved capsules (`svc context add|list|rm`, not on the HTTP API): after every job (a sync,
//! or the file sync of an API write), each saved capsule whose evidence a change touched is
//! verified again, its receipt stored, and `capsule-reverified` announced with identities
//! and states only.

use super::verify;
use crate::shared::Shared;
use crate::stores::catalog::{self, Registration};
use crate::time_fmt;
use protocol::api::{
    CapsuleRegistration, CapsuleRegistrations, CapsuleReverifiedEvent, ContentStatus, EventKind, QuestionState,
    ReverifyOutcome,
};
use protocol::ApiError;

fn reply(r: &Registration) -> CapsuleRegistration {
    CapsuleRegistration {
        registration_id: r.id.clone(),
        capsule_id: r.capsule_id.clone(),
        label: r.label.clone(),
        created_at: r.created_at.clone(),
        evidence_count: r.evidence_count,
        content_status: r.content_status,
        last_verified_at: r.verified_at.clone(),
    }
}

/// The newest journal position.
fn newest(w: &Shared) -> Result<u64, catalog::CatalogError> {
    let conn = w.stores.catalog.reader();
    let cut = catalog::journal_cut(&conn)?.seq;
    catalog::journal_newest(&conn, cut)
}

pub fn register(w: &Shared, raw: &str, label: Option<String>) -> Result<CapsuleRegistration, ApiError> {
    let capsule = verify::own_capsule(w, raw)?;
    let mut uris: Vec<String> = capsule.evidence.iter().map(|e| e.uri.clone()).collect();
    uris.sort();
    uris.dedup();
    let r = Registration {
        id: uuid::Uuid::new_v4().to_string(),
        label: label.filter(|l| !l.trim().is_empty()),
        capsule: raw.to_string(),
        capsule_id: capsule.capsule_id,
        uris,
        evidence_count: capsule.evidence.len() as u64,
        created_at: time_fmt::now_iso(),
        checked_seq: newest(w)?,
        content_status: None,
        verified_at: None,
    };
    catalog::insert_registration(&w.stores.catalog.writer(), &r)?;
    Ok(reply(&r))
}

pub fn list(w: &Shared) -> Result<CapsuleRegistrations, ApiError> {
    let all = catalog::registrations(&w.stores.catalog.reader())?;
    Ok(CapsuleRegistrations { registrations: all.iter().map(reply).collect() })
}

pub fn remove(w: &Shared, id: &str) -> Result<CapsuleRegistration, ApiError> {
    let conn = w.stores.catalog.writer();
    match catalog::registration(&conn, id)? {
        Some(r) if catalog::delete_registration(&conn, id)? => Ok(reply(&r)),
        _ => Err(ApiError::not_found(format!("No saved capsule {id}"))),
    }
}

/// Verifies again every saved capsule whose evidence a change since its last check
/// touched; stores the receipts and announces each. Failures are logged and announced as
/// `failed`, never raised: a job's outcome does not depend on them.
pub fn reverify_touched(w: &Shared) {
    let regs = match catalog::registrations(&w.stores.catalog.reader()) {
        Ok(r) => r,
        Err(e) => return tracing::error!("saved capsules: {e}"),
    };
    // Changes retention dropped before a capsule looked at them may have touched it.
    let cut = catalog::journal_cut(&w.stores.catalog.reader()).map(|c| c.seq).unwrap_or(0);
    for r in regs {
        let changed = match catalog::changed_uris_after(&w.stores.catalog.reader(), r.checked_seq) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!("saved capsule {}: {e}", r.id);
                continue;
            }
        };
        let missed = r.checked_seq < cut;
        let Some(last) = changed.iter().map(|(s, _)| *s).max().or(missed.then_some(cut)) else { continue };
        if missed || changed.iter().any(|(_, u)| r.uris.binary_search(u).is_ok()) {
            reverify(w, &r);
        }
        if let Err(e) = catalog::mark_checked(&w.stores.catalog.writer(), &r.id, last) {
            tracing::error!("saved capsule {}: {e}", r.id);
        }
    }
}

fn reverify(w: &Shared, r: &Registration) {
    let now = time_fmt::now_iso();
    let (operation, affected) = match verify::verify(w, &r.capsule) {
        Ok(receipt) => {
            let stored = serde_json::to_string(&receipt).map_err(|e| e.to_string()).and_then(|json| {
                catalog::store_receipt(&w.stores.catalog.writer(), &r.id, receipt.content_status, &json, &now)
                    .map_err(|e| e.to_string())
            });
            match stored {
                Ok(()) => (
                    ReverifyOutcome::Completed,
                    if receipt.content_status == ContentStatus::Unchanged {
                        QuestionState::Unaffected
                    } else {
                        QuestionState::Affected
                    },
                ),
                Err(e) => {
                    tracing::error!("saved capsule {}: the receipt could not be stored: {e}", r.id);
                    (ReverifyOutcome::Failed, QuestionState::Unknown)
                }
            }
        }
        Err(e) => {
            tracing::warn!("saved capsule {}: verification failed: {}", r.id, e.code.as_str());
            (ReverifyOutcome::Failed, QuestionState::Unknown)
        }
    };
    w.events.capsule_reverified(&CapsuleReverifiedEvent {
        kind: EventKind::CapsuleReverified,
        registration_id: r.id.clone(),
        capsule_id: r.capsule_id.clone(),
        operation_status: operation,
        affected_question_state: affected,
        changed_at: now,
    });
}
