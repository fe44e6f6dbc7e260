//! Persisted job records, so a job outlives a worker restart as a readable result.

use super::Result;
use protocol::api::{Job, JobKind, JobStatus, SyncResult};
use rusqlite::types::Type;
use rusqlite::{params, Connection, OptionalExtension};

/// A stored enum column: `parse` of its text, else a conversion error naming the value.
fn parsed<T>(r: &rusqlite::Row<'_>, col: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let text: String = r.get(col)?;
    parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(col, Type::Text, format!("unknown value {text:?}").into())
    })
}

pub fn insert_job(conn: &Connection, job: &Job) -> Result<()> {
    conn.execute(
        "INSERT INTO jobs(id, kind, status, created_at) VALUES(?1, ?2, ?3, ?4)",
        params![job.id, job.kind.as_str(), job.status.as_str(), job.created_at],
    )?;
    Ok(())
}

pub fn finish_job(
    conn: &Connection,
    id: &str,
    status: JobStatus,
    at: i64,
    result: Option<&SyncResult>,
    error: Option<&str>,
) -> Result<()> {
    let result = result.and_then(|r| serde_json::to_string(r).ok());
    conn.execute(
        "UPDATE jobs SET status = ?2, finished_at = ?3, result = ?4, error = ?5 WHERE id = ?1",
        params![id, status.as_str(), at, result, error],
    )?;
    Ok(())
}

pub fn get_job(conn: &Connection, id: &str) -> Result<Option<Job>> {
    Ok(conn
        .query_row(
            "SELECT id, kind, status, created_at, finished_at, result, error FROM jobs WHERE id = ?1",
            [id],
            |r| {
                let result: Option<String> = r.get(5)?;
                Ok(Job {
                    id: r.get(0)?,
                    kind: parsed(r, 1, JobKind::parse)?,
                    status: parsed(r, 2, JobStatus::parse)?,
                    created_at: r.get(3)?,
                    finished_at: r.get(4)?,
                    result: result.and_then(|s| serde_json::from_str(&s).ok()),
                    error: r.get(6)?,
                })
            },
        )
        .optional()?)
}

/// Jobs left `running` by a worker that died are failed; old finished jobs are pruned
/// (kept at least one hour, at most the newest 100).
pub fn settle_jobs(conn: &Connection, now_ms: i64) -> Result<()> {
    conn.execute(
        "UPDATE jobs SET status = 'failed', finished_at = ?1, error = 'interrupted: the worker stopped while the job ran' \
         WHERE status = 'running'",
        [now_ms],
    )?;
    conn.execute(
        "DELETE FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ?1 AND id NOT IN \
         (SELECT id FROM jobs ORDER BY created_at DESC LIMIT 100)",
        [now_ms - 3_600_000],
    )?;
    Ok(())
}
