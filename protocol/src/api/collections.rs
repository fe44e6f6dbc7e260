//! Collections, sync and jobs.

use serde::{Deserialize, Serialize};

/// An entry of `GET /api/collections`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionInfo {
    pub name: String,
    pub path: String,
    pub pattern: String,
    pub include: String,
    pub exclude: String,
    pub git_pull: bool,
    /// Shared with the team (`svc serve --cluster … --team …`): every member holds a replica.
    pub shared: bool,
    /// A replica of a collection another member owns: its files live under svc's data dir,
    /// kept in step by the cluster, not a folder of this machine's user.
    pub replica: bool,
}

/// A collection named with its folder (in `POST /api/collections`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CollectionRef {
    pub name: String,
    pub path: String,
}

/// `POST /api/collections`: the collection and the job that indexes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionAdded {
    pub job_id: String,
    pub collection: CollectionRef,
}

/// `DELETE /api/collections/{name}`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CollectionRemoved {
    pub success: bool,
    pub collection: String,
    pub note: String,
}

/// `POST /api/sync`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncStarted {
    pub job_id: String,
}

/// `error.details` of the 409 answered while a job runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobConflictDetails {
    pub active_job_id: String,
}

/// A job's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobKind {
    /// Indexes a newly added collection.
    Add,
    /// Indexes configured collections (or one written file).
    Sync,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Add => "add",
            JobKind::Sync => "sync",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "add" => Some(JobKind::Add),
            "sync" => Some(JobKind::Sync),
            _ => None,
        }
    }
}

/// A job's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Running,
    Completed,
    Failed,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(JobStatus::Running),
            "completed" => Some(JobStatus::Completed),
            "failed" => Some(JobStatus::Failed),
            _ => None,
        }
    }
}

/// One collection of a sync job's result.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionSyncResult {
    pub collection: String,
    pub files_processed: u64,
    pub files_added: u64,
    pub files_updated: u64,
    pub files_unchanged: u64,
    pub files_errored: u64,
    pub files_skipped: u64,
    pub files_deactivated: u64,
    pub duration_ms: u64,
    /// The files counted in `filesErrored` and those skipped as too large, each with why (the
    /// first [`CollectionSyncResult::MAX_PROBLEMS`]); their earlier version, if any, stays
    /// indexed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<FileProblem>,
}

impl CollectionSyncResult {
    /// Problems listed per collection at most.
    pub const MAX_PROBLEMS: usize = 100;

    /// Notes a file that could not be indexed, within [`Self::MAX_PROBLEMS`].
    pub fn problem(&mut self, rel_path: &str, reason: impl Into<String>) {
        if self.problems.len() < Self::MAX_PROBLEMS {
            self.problems.push(FileProblem { rel_path: rel_path.to_string(), reason: reason.into() });
        }
    }
}

/// A file a sync could not index, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileProblem {
    pub rel_path: String,
    pub reason: String,
}

/// The `result` of a completed `add` or `sync` job.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncResult {
    pub collections: Vec<CollectionSyncResult>,
    pub total_duration_ms: u64,
    pub total_files_processed: u64,
    pub total_files_added: u64,
    pub total_files_updated: u64,
    pub total_files_errored: u64,
    pub total_files_skipped: u64,
}

/// `GET /api/jobs/{id}`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: JobKind,
    pub status: JobStatus,
    pub created_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<SyncResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_enums_use_the_contract_strings() {
        for k in [JobKind::Add, JobKind::Sync] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
            assert_eq!(JobKind::parse(k.as_str()), Some(k));
        }
        for s in [JobStatus::Running, JobStatus::Completed, JobStatus::Failed] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
            assert_eq!(JobStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(JobKind::parse("Add"), None);
    }

    #[test]
    fn a_running_job_has_no_optional_keys() {
        let job = Job {
            id: "j".into(),
            kind: JobKind::Sync,
            status: JobStatus::Running,
            created_at: 1,
            finished_at: None,
            result: None,
            error: None,
        };
        assert_eq!(
            serde_json::to_string(&job).unwrap(),
            r#"{"id":"j","type":"sync","status":"running","createdAt":1}"#
        );
    }
}

/// `GET /api/jobs/active`: the indexing job that runs now, if any.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActiveJobResponse {
    /// `null` when no indexing job runs.
    pub active_job: Option<Job>,
}
