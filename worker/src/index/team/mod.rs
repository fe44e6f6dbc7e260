//! A team's shared collections, kept in step through a NATS JetStream cluster: one more
//! source of documents beside the walker and the watcher, and one more sink after a write.
//!
//! Every member keeps a full replica. The team's stream (`SVC_<team>`) holds one subject per
//! document, the latest versions kept; a durable consumer per member feeds the replica
//! through the same indexing path as a folder ([`apply`]); what changes in a shared
//! collection here (the watcher, a sync, a write) is published from the change journal
//! ([`outbox`]); an API create or update of a shared note is published first, with the
//! version it was based on as the expected last subject sequence, so of two members writing
//! the same note from the same version one succeeds and the other gets 409 ([`publish_write`]).
//! Nothing above `index/` knows where a document came from.

mod apply;
mod carry;
mod files;
pub mod member;
mod outbox;
pub mod subject;

use crate::config::{ClusterConfig, CollectionConfig};
use crate::index::Indexing;
use crate::stores::catalog::{self, TeamDoc};
use async_nats::jetstream::{self, context::PublishErrorKind, message::PublishMessage};
use protocol::api::{ClusterMember, ClusterStatus, EgressPolicy};
use protocol::{ApiError, ErrorCode};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use subject::{DocMessage, DocOp, TeamName};

/// How long a write waits for the stream's acknowledgement before it answers 503.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the connection is pinged: with two pings unanswered the client drops it and
/// reconnects, so a member cut off without a reset (a partition: nothing closes the socket)
/// says `connected: false` within 20–30 s, not the two to three minutes of the client's
/// default 60 s.
const PING_INTERVAL: Duration = Duration::from_secs(10);
/// Versions of a document the stream keeps (the latest one and some history).
const HISTORY: i64 = 10;
/// How often a member says it is there, in seconds (the connection is looked at every one).
const HEARTBEAT_TICKS: u64 = 5;

/// The team this server joins, from `svc serve --cluster … --team …` (the environment the
/// supervisor hands the worker: `SVC_CLUSTER`, `SVC_TEAM`) or `cluster` in index.yml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamSettings {
    pub urls: Vec<String>,
    pub team: TeamName,
    pub member: String,
}

/// Credentials, from the environment only (never index.yml, a log or the status).
#[derive(Clone, Default)]
pub struct Credentials {
    user_password: Option<(String, String)>,
    creds_file: Option<String>,
    ca_file: Option<String>,
}

impl Credentials {
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Credentials {
            user_password: var("SVC_CLUSTER_USER").zip(var("SVC_CLUSTER_PASSWORD")),
            creds_file: var("SVC_CLUSTER_CREDS"),
            ca_file: var("SVC_CLUSTER_CA"),
        }
    }
}

impl TeamSettings {
    /// The team to join, if any: the environment first, then index.yml. A team whose URLs
    /// the egress policy does not allow, or whose name is not one, is an error.
    pub fn resolve(
        file: Option<&ClusterConfig>,
        policy: EgressPolicy,
        index_dir: &std::path::Path,
    ) -> Result<Option<Self>, String> {
        let env_urls = std::env::var("SVC_CLUSTER").ok().filter(|v| !v.trim().is_empty());
        let env_team = std::env::var("SVC_TEAM").ok().filter(|v| !v.trim().is_empty());
        let (urls, team, member) = match (env_urls, env_team, file) {
            (Some(u), Some(t), f) => (
                u.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect::<Vec<_>>(),
                t,
                f.and_then(|f| f.member.clone()),
            ),
            (None, None, Some(f)) => (f.urls.clone(), f.team.clone(), f.member.clone()),
            (None, None, None) => return Ok(None),
            _ => return Err("--cluster and --team go together".to_string()),
        };
        if urls.is_empty() {
            return Err("the cluster names no server".to_string());
        }
        for url in &urls {
            check_egress(policy, url)?;
        }
        let team = TeamName::parse(team.trim())?;
        let member = match member.or_else(|| std::env::var("SVC_MEMBER").ok()).filter(|m| !m.trim().is_empty()) {
            Some(m) => subject::member_token(m.trim()),
            None => member::default_name(index_dir),
        };
        Ok(Some(TeamSettings { urls, team, member }))
    }
}

/// A cluster URL (`nats://`, `tls://`, `host:port`) against the egress policy, as a model
/// server's URL is checked.
fn check_egress(policy: EgressPolicy, url: &str) -> Result<(), String> {
    let (_, host) = split_url(url);
    crate::models::egress::check(policy, &format!("http://{host}")).map_err(|e| e.replace("http://", ""))
}

/// What the team client knows, for `/api/status`.
#[derive(Default)]
struct TeamState {
    stream_seq: u64,
    members: BTreeMap<String, String>,
    /// Why the replica does not follow the stream now (a lost connection, a stream the
    /// cluster cannot make).
    error: Option<String>,
    /// What the cluster last refused (a credential): kept until the replica follows the
    /// stream again, as a reconnect would hide it.
    refused: Option<String>,
    unpublished: u64,
    vectors_sent: u64,
    vectors_received: u64,
}

/// The team client: its connection, the stream's context and what it has seen.
pub struct Team {
    pub settings: TeamSettings,
    conn: OnceLock<(async_nats::Client, jetstream::Context)>,
    rt: tokio::runtime::Handle,
    /// The team's stream exists and this member's consumer reads it.
    ready: AtomicBool,
    /// Documents were published since vectors were last looked for ([`carry::send_round`]).
    vectors_due: AtomicBool,
    /// The last batch the replica applied left more waiting on the stream.
    catching_up: AtomicBool,
    /// The team's object store, once opened ([`files`]).
    files: tokio::sync::OnceCell<async_nats::jetstream::object_store::ObjectStore>,
    state: Mutex<TeamState>,
}

/// Why a publish did not go through.
#[derive(Debug, thiserror::Error)]
pub enum PublishFailure {
    /// The stream holds a newer version of the document than the one expected.
    #[error("the document changed on another member of the team")]
    Conflict,
    #[error("the team's cluster cannot be reached: {0}")]
    Unavailable(String),
    #[error("{0} bytes are more than one message of this cluster may carry")]
    TooLarge(usize),
}

impl Team {
    fn new(settings: TeamSettings, rt: tokio::runtime::Handle) -> Self {
        Team {
            settings,
            conn: OnceLock::new(),
            rt,
            ready: AtomicBool::new(false),
            vectors_due: AtomicBool::new(true),
            catching_up: AtomicBool::new(false),
            files: tokio::sync::OnceCell::new(),
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, TeamState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Connected to a server with the stream ready.
    pub fn connected(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
            && self.conn.get().is_some_and(|(c, _)| c.connection_state() == async_nats::connection::State::Connected)
    }

    fn context(&self) -> Result<&jetstream::Context, PublishFailure> {
        match self.conn.get() {
            Some((_, js)) if self.connected() => Ok(js),
            _ => Err(PublishFailure::Unavailable(
                self.state().error.clone().unwrap_or_else(|| "not connected".to_string()),
            )),
        }
    }

    fn max_payload(&self) -> usize {
        self.conn.get().map_or(1024 * 1024, |(c, _)| c.server_info().max_payload)
    }

    /// Whether a message of `len` payload bytes fits in one message of this cluster (headers
    /// and the protocol line take a few hundred bytes of the server's limit).
    fn fits(&self, len: usize) -> bool {
        len + 4096 <= self.max_payload()
    }

    /// Publishes one version of a document and waits for the stream to hold it; with
    /// `expected`, only if the stream's last message of its subject is that one (0: none).
    /// Bytes too large for one message go to the team's object store first ([`files`]), and
    /// the version `before` it (what this replica held), if its bytes were stored, is
    /// deleted from there once the new one is in. Returns the version as the replica records
    /// it. Blocking: called from the worker's blocking threads.
    pub fn publish(
        &self,
        msg: &DocMessage,
        expected: Option<u64>,
        before: Option<&TeamDoc>,
    ) -> Result<TeamDoc, PublishFailure> {
        let js = self.context()?.clone();
        let stored = !self.fits(msg.payload_len());
        if stored {
            if !files::may_store(msg) {
                self.state().unpublished += 1;
                return Err(PublishFailure::TooLarge(msg.payload_len()));
            }
            self.store_bytes(msg)?;
        }
        let (payload, headers) =
            if stored { (Vec::new(), msg.headers_stored()) } else { (msg.payload(), msg.headers()) };
        let subject = self.settings.team.doc_subject(&msg.collection, &msg.rel_path);
        let mut build = PublishMessage::build().payload(payload.into()).headers(headers);
        if let Some(seq) = expected {
            build = build.expected_last_subject_sequence(seq);
        }
        let sent = self.rt.block_on(async move {
            tokio::time::timeout(PUBLISH_TIMEOUT, async move {
                let ack = js.send_publish(subject, build).await?;
                ack.await
            })
            .await
        });
        let failure = match sent {
            Ok(Ok(ack)) => {
                {
                    let mut st = self.state();
                    st.stream_seq = st.stream_seq.max(ack.sequence);
                }
                let version = msg.version(ack.sequence, stored);
                self.forget_replaced(msg, before, &version);
                return Ok(version);
            }
            Ok(Err(e)) if e.kind() == PublishErrorKind::WrongLastSequence => PublishFailure::Conflict,
            Ok(Err(e)) => PublishFailure::Unavailable(e.to_string()),
            Err(_) => PublishFailure::Unavailable("the cluster did not acknowledge in time".to_string()),
        };
        if stored {
            // A version the stream does not hold: its bytes go too.
            self.forget_bytes(&msg.collection, &msg.rel_path, msg.hash());
        }
        Err(failure)
    }

    /// Once `version` of `msg`'s document is on the stream: the bytes of the version `before`
    /// it, if they were in the object store and differ, deleted from there.
    fn forget_replaced(&self, msg: &DocMessage, before: Option<&TeamDoc>, version: &TeamDoc) {
        if let Some(old) = before.filter(|b| b.stored && !b.deleted && b.hash != version.hash) {
            self.forget_bytes(&msg.collection, &msg.rel_path, &old.hash);
        }
    }

    /// Publishes versions that each fit in one message, none expecting a last sequence, all
    /// sent before any acknowledgement is awaited (one round trip for the lot, not one per
    /// document: what a first index of a shared folder publishes). The versions the stream
    /// took, in order, up to the first it did not, and why that one failed (`None`: all did).
    pub fn publish_all(&self, msgs: &[&DocMessage]) -> (Vec<TeamDoc>, Option<PublishFailure>) {
        let js = match self.context() {
            Ok(js) => js.clone(),
            Err(e) => return (Vec::new(), Some(e)),
        };
        let subjects: Vec<String> =
            msgs.iter().map(|m| self.settings.team.doc_subject(&m.collection, &m.rel_path)).collect();
        let sent = self.rt.block_on(async move {
            let mut acks = Vec::with_capacity(msgs.len());
            let mut seqs = Vec::with_capacity(msgs.len());
            let run = async {
                for (msg, subject) in msgs.iter().zip(subjects) {
                    let build = PublishMessage::build().payload(msg.payload().into()).headers(msg.headers());
                    acks.push(js.send_publish(subject, build).await?);
                }
                for ack in acks {
                    seqs.push(ack.await?.sequence);
                }
                Ok::<(), async_nats::jetstream::context::PublishError>(())
            };
            let outcome = tokio::time::timeout(PUBLISH_TIMEOUT, run).await;
            (seqs, outcome)
        });
        let (seqs, outcome) = sent;
        if let Some(&last) = seqs.last() {
            self.saw_stream_seq(last);
        }
        let versions = msgs.iter().zip(&seqs).map(|(m, &seq)| m.version(seq, false)).collect();
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(PublishFailure::Unavailable(e.to_string())),
            Err(_) => Some(PublishFailure::Unavailable("the cluster did not acknowledge in time".to_string())),
        };
        (versions, failure)
    }

    /// `cluster` of `/api/status`.
    pub fn status(&self, applied_seq: u64) -> ClusterStatus {
        let st = self.state();
        let stream_seq = st.stream_seq.max(applied_seq);
        ClusterStatus {
            connected: self.connected(),
            team: self.settings.team.as_str().to_string(),
            member: self.settings.member.clone(),
            servers: self.settings.urls.iter().map(|u| redact_url(u)).collect(),
            stream_seq,
            applied_seq,
            lag: stream_seq.saturating_sub(applied_seq),
            members: st.members.iter().map(|(n, t)| ClusterMember { name: n.clone(), last_seen: t.clone() }).collect(),
            error: if self.connected() { None } else { st.refused.clone().or_else(|| st.error.clone()) },
            unpublished: st.unpublished,
            vectors_sent: st.vectors_sent,
            vectors_received: st.vectors_received,
        }
    }

    fn set_error(&self, error: Option<String>) {
        self.state().error = error;
    }

    fn set_refused(&self, refused: String) {
        self.state().refused = Some(refused);
    }

    /// The replica follows the stream: no error stands.
    fn set_following(&self) {
        let mut st = self.state();
        st.error = None;
        st.refused = None;
    }

    fn saw_member(&self, name: &str, at: String) {
        self.state().members.insert(name.to_string(), at);
    }

    fn sent_vectors(&self, documents: u64) {
        self.state().vectors_sent += documents;
    }

    /// Whether the replica is catching up with the stream (its last batch left more waiting).
    /// Work that can wait (an ANN index over the vectors) waits for the end: built during a
    /// new member's catch-up, it took the cores the catch-up needed, over a table still
    /// growing.
    pub fn catching_up(&self) -> bool {
        self.catching_up.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn set_catching_up(&self, behind: bool) {
        self.catching_up.store(behind, std::sync::atomic::Ordering::SeqCst);
    }

    fn received_vectors(&self, contents: u64) {
        self.state().vectors_received += contents;
    }

    /// Contents whose vectors from the team did not fit their chunks here (embedded here).
    fn took_back_vectors(&self, contents: u64) {
        let mut st = self.state();
        st.vectors_received = st.vectors_received.saturating_sub(contents);
    }

    fn set_stream_seq(&self, seq: u64) {
        self.state().stream_seq = seq;
    }

    fn saw_stream_seq(&self, seq: u64) {
        let mut st = self.state();
        st.stream_seq = st.stream_seq.max(seq);
    }
}

/// A URL as shown: any `user:password@` taken out.
fn redact_url(url: &str) -> String {
    match split_url(url) {
        (Some(scheme), host) => format!("{scheme}://{host}"),
        (None, host) => host.to_string(),
    }
}

/// A cluster URL's scheme (if it names one) and its host and port, any `user:password@`
/// left out.
fn split_url(url: &str) -> (Option<&str>, &str) {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    (scheme, rest.rsplit_once('@').map_or(rest, |(_, host)| host))
}

/// Joins the team index.yml or the environment names, if any (server mode): connects in the
/// background, makes the stream, reads this member's consumer, publishes what changes here.
/// Call from within the worker's runtime.
pub fn start(ix: &Arc<Indexing>) {
    let (file, policy) = {
        let cfg = ix.core.settings.config();
        (cfg.cluster.clone(), cfg.egress_policy.unwrap_or_default())
    };
    let settings = match TeamSettings::resolve(file.as_ref(), policy, &ix.core.settings.dirs.index_dir()) {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(e) => {
            tracing::error!("team: not joined: {e}");
            return;
        }
    };
    let rt = tokio::runtime::Handle::current();
    let team = Arc::new(Team::new(settings, rt.clone()));
    if ix.team.set(Arc::clone(&team)).is_err() {
        return;
    }
    tracing::info!(
        "team {}: joining as {} through {}",
        team.settings.team.as_str(),
        team.settings.member,
        team.settings.urls.iter().map(|u| redact_url(u)).collect::<Vec<_>>().join(", ")
    );
    let ix = Arc::clone(ix);
    rt.spawn(run(ix, team, Credentials::from_env()));
}

/// The status asked for from the team's tasks (a replica's batch, a member seen, the
/// connection's state): paced with the rest of background work. Without a pacer a status
/// reads the stores, whose calls block (the vector store's own runtime cannot be entered
/// from an async task).
async fn publish_status(ix: &Arc<Indexing>) {
    let ix = Arc::clone(ix);
    if let Err(e) = tokio::task::spawn_blocking(move || ix.core.hooks.publish_status_soon()).await {
        tracing::error!("team: publishing the status panicked: {e}");
    }
}

async fn run(ix: Arc<Indexing>, team: Arc<Team>, creds: Credentials) {
    let (client, js) = match connect(&team, &ix, &creds).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("team: cannot connect: {e}");
            team.set_error(Some(e));
            publish_status(&ix).await;
            return;
        }
    };
    let _ = team.conn.set((client, js.clone()));
    tokio::spawn(member::heartbeat(Arc::clone(&ix), Arc::clone(&team)));
    tokio::spawn(outbox::run(Arc::clone(&ix), Arc::clone(&team)));
    apply::consume(ix, team, js).await;
}

async fn connect(
    team: &Arc<Team>,
    ix: &Arc<Indexing>,
    creds: &Credentials,
) -> Result<(async_nats::Client, jetstream::Context), String> {
    let addrs: Vec<async_nats::ServerAddr> = team
        .settings
        .urls
        .iter()
        .map(|u| u.parse().map_err(|_| format!("{} is not a server address", redact_url(u))))
        .collect::<Result<_, _>>()?;
    let events_team = Arc::downgrade(team);
    let events_ix = Arc::downgrade(ix);
    let mut opts = async_nats::ConnectOptions::new()
        .name(format!("svc {}", team.settings.member))
        .retry_on_initial_connect()
        .max_reconnects(None)
        .connection_timeout(Duration::from_secs(3))
        .ping_interval(PING_INTERVAL)
        .event_callback(move |event| {
            let (team, ix) = (events_team.clone(), events_ix.clone());
            async move {
                let (Some(team), Some(ix)) = (team.upgrade(), ix.upgrade()) else { return };
                match event {
                    async_nats::Event::Connected => tracing::info!("team: connected"),
                    async_nats::Event::Disconnected => {
                        tracing::warn!("team: disconnected from the cluster");
                        team.set_error(Some("disconnected from the cluster".to_string()));
                    }
                    async_nats::Event::ServerError(e) => {
                        tracing::warn!("team: the cluster says: {e}");
                        team.set_refused(format!("the cluster says: {e}"));
                    }
                    async_nats::Event::ClientError(e) => {
                        tracing::warn!("team: {e}");
                        team.set_error(Some(e.to_string()));
                    }
                    _ => return,
                }
                publish_status(&ix).await;
            }
        });
    if let Some((user, password)) = &creds.user_password {
        opts = opts.user_and_password(user.clone(), password.clone());
    }
    if let Some(file) = &creds.creds_file {
        opts = opts.credentials_file(file).await.map_err(|e| format!("SVC_CLUSTER_CREDS: {}", e.kind()))?;
    }
    if let Some(ca) = &creds.ca_file {
        opts = opts.add_root_certificates(ca.into());
    }
    if team.settings.urls.iter().any(|u| u.starts_with("tls://")) {
        opts = opts.require_tls(true);
    }
    let client = opts.connect(addrs).await.map_err(|e| e.to_string())?;
    let js = jetstream::new(client.clone());
    Ok((client, js))
}

/// How many replicas the team's stream asks for: three where three servers are named.
fn replicas(settings: &TeamSettings) -> usize {
    if settings.urls.len() >= 3 {
        3
    } else {
        1
    }
}

fn stream_config(settings: &TeamSettings) -> jetstream::stream::Config {
    jetstream::stream::Config {
        name: settings.team.stream(),
        subjects: vec![settings.team.all_subjects()],
        max_messages_per_subject: HISTORY,
        num_replicas: replicas(settings),
        storage: jetstream::stream::StorageType::File,
        ..Default::default()
    }
}

/// The version of a shared document this replica holds.
fn held(ix: &Indexing, collection: &str, rel: &str) -> Result<Option<TeamDoc>, catalog::CatalogError> {
    catalog::team_doc(&ix.core.stores.catalog.reader(), collection, rel)
}

/// A version of a shared note the team's stream holds, recorded as this replica's once its
/// file holds the bytes ([`Published::record`]). Recorded before, a worker killed between
/// the two would skip the stream's message as held and never write the file.
#[must_use = "the version is the replica's only once recorded"]
pub struct Published {
    collection: String,
    rel_path: String,
    version: TeamDoc,
}

impl Published {
    /// Records the version as the one this replica holds: call once the file is written.
    pub fn record(self, ix: &Indexing) -> Result<(), ApiError> {
        catalog::set_published_team_doc(
            &ix.core.stores.catalog.writer(),
            &self.collection,
            &self.rel_path,
            &self.version,
        )?;
        if let Some(team) = ix.team.get() {
            team.vectors_due.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// An API write of a shared note, published: with the version this replica holds as the
/// expected last one, so a write based on an older version is a 409; 503 when the cluster
/// cannot take it. A collection that is not shared passes at once (`None`). Called under the
/// write lock; the version returned is recorded once the file is written.
pub fn publish_write(
    ix: &Indexing,
    coll: &CollectionConfig,
    rel: &str,
    bytes: &[u8],
) -> Result<Option<Published>, ApiError> {
    if !coll.shared {
        return Ok(None);
    }
    let team = ix.team.get().ok_or_else(|| {
        ApiError::new(ErrorCode::Unavailable, "This collection is shared with a team this server has not joined")
    })?;
    let before = held(ix, &coll.name, rel)?;
    let expected = before.as_ref().map_or(0, |d| d.seq);
    let hash = crate::digest::sha256_hex(bytes);
    let msg = DocMessage {
        collection: coll.name.clone(),
        rel_path: rel.to_string(),
        member: team.settings.member.clone(),
        op: DocOp::Put {
            bytes: bytes.to_vec(),
            hash: hash.clone(),
            mtime_ms: crate::time_fmt::now_ms(),
            vectors: None,
        },
    };
    match team.publish(&msg, Some(expected), before.as_ref()) {
        Ok(version) => Ok(Some(Published { collection: coll.name.clone(), rel_path: rel.to_string(), version })),
        Err(PublishFailure::Conflict) => {
            Err(ApiError::conflict("The note changed on another member of the team. Reload before saving."))
        }
        Err(PublishFailure::TooLarge(n)) => Err(ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("The note ({n} bytes) is larger than a shared note may be (32 MiB)"),
        )),
        Err(e @ PublishFailure::Unavailable(_)) => Err(ApiError::new(ErrorCode::Unavailable, e.to_string())),
    }
}

/// Writes other than a create or an update (a move, a capture, a refactor) of a shared
/// collection: they are published from the journal once written, so they need the cluster
/// to be there now (503 otherwise: a write the team may never see is not acknowledged).
pub fn require_connected(ix: &Indexing, coll: &CollectionConfig) -> Result<(), ApiError> {
    if !coll.shared || ix.team.get().is_some_and(|t| t.connected()) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::Unavailable,
        "The team's cluster cannot be reached: this shared collection takes no writes until it is back",
    ))
}

/// Whether a collection may be shared: a team joined and its cluster allowed by the egress
/// policy (checked when the team was resolved).
pub fn can_share(ix: &Indexing) -> Result<(), ApiError> {
    if ix.team.get().is_some() {
        return Ok(());
    }
    let (file, policy) = {
        let cfg = ix.core.settings.config();
        (cfg.cluster.clone(), cfg.egress_policy.unwrap_or_default())
    };
    match TeamSettings::resolve(file.as_ref(), policy, &ix.core.settings.dirs.index_dir()) {
        Err(e) => Err(ApiError::validation(format!("This collection cannot be shared: {e}"))),
        Ok(None) => Err(ApiError::validation(
            "This collection cannot be shared: the server has joined no team (svc serve --cluster URL --team NAME)",
        )),
        Ok(Some(_)) => Err(ApiError::validation(
            "This collection cannot be shared from here: only a running server (svc serve) takes part in its team",
        )),
    }
}

/// `cluster` for `/api/status`, when a team is joined.
pub fn status(ix: &Indexing) -> Option<ClusterStatus> {
    let team = ix.team.get()?;
    let applied = catalog::team_applied_seq(&ix.core.stores.catalog.reader()).unwrap_or(0);
    Some(team.status(applied))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials_and_checked_against_the_policy() {
        assert_eq!(redact_url("nats://u:secret@127.0.0.1:4222"), "nats://127.0.0.1:4222");
        assert_eq!(redact_url("u:p@h:1"), "h:1");
        assert_eq!(check_egress(EgressPolicy::LocalOnly, "nats://127.0.0.1:4222"), Ok(()));
        assert_eq!(check_egress(EgressPolicy::LocalOnly, "localhost:4222"), Ok(()));
        let err = check_egress(EgressPolicy::LocalOnly, "tls://10.0.0.5:4222").unwrap_err();
        assert!(err.contains("local_only"), "{err}");
        assert_eq!(check_egress(EgressPolicy::Lan, "tls://10.0.0.5:4222"), Ok(()));
    }
}
