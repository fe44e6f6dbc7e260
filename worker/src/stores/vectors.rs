//! The vector store: LanceDB under `<data>/<index>/vectors/`, one table per embedding model.
//!
//! Rows are content-addressed: `(mirror_hash, seq)` names a chunk of canonical text, so a
//! renamed note keeps its vectors and a deactivated one simply stops resolving to an
//! active document. The catalog's `embeddings` table records which contents a table has
//! absorbed (as `bm25_gen` does for tantivy); each embedding run first removes the rows of
//! every content still in its backlog, so rows a crash left unrecorded are never duplicated.
//!
//! Search is exact (a flat scan) while a table is small. Past `ANN_MIN_ROWS` an IVF-PQ index
//! is built, and it is used only if its recall@10 against exact search is at least 0.95.

use arrow_array::types::Float32Type;
use arrow_array::{Array, FixedSizeListArray, Float32Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::{Connection, DistanceType, Table};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Rows from which an ANN index is considered.
pub const ANN_MIN_ROWS: usize = 50_000;
const RECALL_TARGET: f32 = 0.95;
/// Stored vectors the recall of a new ANN index is measured with.
const RECALL_PROBES: usize = 100;

#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("vector store: {0}")]
    Lance(#[from] lancedb::Error),
    #[error("vector store: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    #[error("vector store runtime: {0}")]
    Io(#[from] std::io::Error),
    #[error("vector store: {0}")]
    Data(String),
}

crate::errors::internal_errors!(VectorError);

pub type Result<T> = std::result::Result<T, VectorError>;

/// One chunk vector.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkVector {
    pub mirror_hash: String,
    pub seq: u32,
    pub vector: Vec<f32>,
}

/// A search hit: the chunk and its similarity score in 0..1 (`1 - cosine distance / 2`).
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    pub mirror_hash: String,
    pub seq: u32,
    pub score: f32,
}

/// The table of one embedding model: the name says the model and the dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableKey {
    pub name: String,
    pub dim: usize,
}

impl TableKey {
    pub fn new(model_ref: &str, dim: usize) -> Self {
        let digest = hex::encode(Sha256::digest(model_ref.as_bytes()));
        TableKey { name: format!("chunks_{}_{dim}", &digest[..16]), dim }
    }
}

struct TableState {
    table: Table,
    /// The partitions a query probes when it may use the ANN index; `None` (no index, or its
    /// recall was below target): exact search.
    ann_probes: Option<u32>,
}

/// The fewest partitions a query probes (and what a bare `ok` marker means).
const MIN_PROBES: u32 = 20;

/// Partitions a query probes: a fifth of them (at least [`MIN_PROBES`], at most all), so
/// coverage does not shrink as the table and its partition count grow.
fn probes_for(partitions: u32) -> u32 {
    (partitions / 5).max(MIN_PROBES).min(partitions)
}

/// Candidates re-scored with exact distances per result: cheap, and it undoes most of the
/// product-quantization error among the candidates the probes reach.
const REFINE_FACTOR: u32 = 10;

/// The ANN decision file: `ok <probes>` (use the index with that many probes) or
/// `low-recall`. A bare `ok` (written by earlier versions) means [`MIN_PROBES`].
fn parse_marker(text: &str) -> Option<u32> {
    let mut words = text.split_whitespace();
    match words.next() {
        Some("ok") => Some(words.next().and_then(|n| n.parse().ok()).unwrap_or(MIN_PROBES)),
        _ => None,
    }
}

/// LanceDB's async API runs on a small runtime of its own, driven from blocking threads.
/// It is shut down in the background on drop, so dropping the store from async code
/// (the worker's last reference at shutdown) never panics.
struct LanceRuntime(Option<tokio::runtime::Runtime>);

impl LanceRuntime {
    fn new() -> std::io::Result<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("lancedb")
            .enable_all()
            .build()?;
        Ok(LanceRuntime(Some(rt)))
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        match &self.0 {
            Some(rt) => rt.block_on(f),
            None => unreachable!("the runtime lives until the store is dropped"),
        }
    }
}

impl Drop for LanceRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

pub struct VectorStore {
    db: Connection,
    tables: Mutex<HashMap<TableKey, Arc<TableState>>>,
    /// Declared last: dropped after the tables and the connection.
    rt: LanceRuntime,
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn in_list(hashes: &[String]) -> Result<String> {
    if let Some(bad) = hashes.iter().find(|h| !is_hex(h)) {
        return Err(VectorError::Data(format!("not a content hash: {bad:?}")));
    }
    Ok(hashes.iter().map(|h| format!("'{h}'")).collect::<Vec<_>>().join(","))
}

fn schema(dim: usize) -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("mirror_hash", DataType::Utf8, false),
        Field::new("seq", DataType::UInt32, false),
        Field::new(
            "vector",
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), dim as i32),
            false,
        ),
    ]))
}

fn batch(dim: usize, rows: &[ChunkVector]) -> Result<RecordBatch> {
    if let Some(bad) = rows.iter().find(|r| r.vector.len() != dim) {
        return Err(VectorError::Data(format!("vector of {} dimensions in a table of {dim}", bad.vector.len())));
    }
    let hashes = StringArray::from_iter_values(rows.iter().map(|r| r.mirror_hash.as_str()));
    let seqs = UInt32Array::from_iter_values(rows.iter().map(|r| r.seq));
    let vectors = FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
        rows.iter().map(|r| Some(r.vector.iter().map(|v| Some(*v)).collect::<Vec<_>>())),
        dim as i32,
    );
    Ok(RecordBatch::try_new(schema(dim), vec![Arc::new(hashes), Arc::new(seqs), Arc::new(vectors)])?)
}

/// One result row: `(mirror_hash, seq, vector?, _distance?)`.
type VectorRow = (String, u32, Option<Vec<f32>>, Option<f32>);

/// Reads the [`VectorRow`] columns out of result batches.
fn rows_of(batches: &[RecordBatch]) -> Result<Vec<VectorRow>> {
    let mut out = Vec::new();
    for b in batches {
        let col = |name: &str| b.column_by_name(name);
        let hashes = col("mirror_hash")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
            .ok_or_else(|| VectorError::Data("no mirror_hash column".into()))?;
        let seqs = col("seq")
            .and_then(|c| c.as_any().downcast_ref::<UInt32Array>())
            .ok_or_else(|| VectorError::Data("no seq column".into()))?;
        let vectors = col("vector").and_then(|c| c.as_any().downcast_ref::<FixedSizeListArray>());
        let dists = col("_distance").and_then(|c| c.as_any().downcast_ref::<Float32Array>());
        for i in 0..b.num_rows() {
            let vector = vectors.and_then(|v| {
                let item = v.value(i);
                item.as_any().downcast_ref::<Float32Array>().map(|f| f.values().to_vec())
            });
            out.push((hashes.value(i).to_string(), seqs.value(i), vector, dists.map(|d| d.value(i))));
        }
    }
    Ok(out)
}

/// The cosine of two unit vectors (the embedder's, stored or fresh, are unit vectors): their dot
/// product.
pub fn similarity(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

/// A point a query is moved away from before it is searched (the mean passage vector of its
/// language, [`crate::models::language_means`]), and by how much.
#[derive(Debug, Clone, Copy)]
pub struct AwayFrom<'a> {
    mean: &'a [f32],
    weight: f32,
    /// `mean · mean`, taken once for every hit it scores.
    norm2: f64,
}

impl<'a> AwayFrom<'a> {
    pub fn new(mean: &'a [f32], weight: f32) -> Self {
        AwayFrom { mean, weight, norm2: similarity(mean, mean) }
    }

    /// A query's similarity to `vector` (unit length, as `query`), less `weight` times how much
    /// closer `vector` lies to the mean than the mean does to itself. Where the texts of a
    /// language gather around a point of their own, the notes nearest that point are near every
    /// question asked in that language, whatever it asks (hubs); this takes their edge away and
    /// leaves a note as close to the mean as the mean's own length its similarity. Ranking by it
    /// is ranking by `(query - weight * mean) · vector`.
    pub fn similarity(&self, query: &[f32], vector: &[f32]) -> f32 {
        (similarity(query, vector) - f64::from(self.weight) * (similarity(vector, self.mean) - self.norm2)) as f32
    }

    /// The direction whose nearest vectors rank first by [`AwayFrom::similarity`].
    fn shifted(&self, query: &[f32]) -> Vec<f32> {
        query.iter().zip(self.mean).map(|(q, m)| q - self.weight * m).collect()
    }
}

/// Cosine distance (0..2) to the contract's similarity score (0..1).
pub fn distance_to_score(d: f32) -> f32 {
    (1.0 - d / 2.0).clamp(0.0, 1.0)
}

impl VectorStore {
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)?;
        let rt = LanceRuntime::new()?;
        let uri = dir.to_str().ok_or_else(|| VectorError::Data("the data dir is not valid UTF-8".into()))?.to_string();
        let db = rt.block_on(lancedb::connect(&uri).execute())?;
        Ok(VectorStore { db, tables: Mutex::new(HashMap::new()), rt })
    }

    /// Runs a query and gathers its batches.
    fn collect(&self, q: impl ExecutableQuery) -> Result<Vec<RecordBatch>> {
        let batches = self.rt.block_on(async {
            let stream = q.execute().await?;
            stream.try_collect::<Vec<RecordBatch>>().await
        })?;
        Ok(batches)
    }

    /// The table of `key`; created when `create` and missing.
    fn table(&self, key: &TableKey, create: bool) -> Result<Option<Arc<TableState>>> {
        let mut tables = self.tables.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = tables.get(key) {
            return Ok(Some(Arc::clone(t)));
        }
        let names = self.rt.block_on(self.db.table_names().execute())?;
        let table = if names.contains(&key.name) {
            self.rt.block_on(self.db.open_table(&key.name).execute())?
        } else if create {
            self.rt.block_on(self.db.create_empty_table(&key.name, schema(key.dim)).execute())?
        } else {
            return Ok(None);
        };
        let has_index = self.rt.block_on(table.list_indices())?.iter().any(|i| i.columns.iter().any(|c| c == "vector"));
        let ann_probes = if has_index {
            std::fs::read_to_string(self.ann_marker(key)).ok().and_then(|m| parse_marker(&m))
        } else {
            None
        };
        let state = Arc::new(TableState { table, ann_probes });
        tables.insert(key.clone(), Arc::clone(&state));
        Ok(Some(state))
    }

    fn ann_marker(&self, key: &TableKey) -> std::path::PathBuf {
        Path::new(self.db.uri()).join(format!("{}.ann", key.name))
    }

    /// Adds chunk vectors (the caller removed any earlier rows of these contents).
    pub fn add(&self, key: &TableKey, rows: &[ChunkVector]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let Some(t) = self.table(key, true)? else { return Ok(()) };
        self.rt.block_on(t.table.add(batch(key.dim, rows)?).execute())?;
        Ok(())
    }

    /// Drops every vector of these contents (orphans, or rows a crash left unrecorded).
    pub fn remove(&self, key: &TableKey, contents: &[String]) -> Result<()> {
        if contents.is_empty() {
            return Ok(());
        }
        if let Some(t) = self.table(key, false)? {
            for part in contents.chunks(500) {
                self.rt.block_on(t.table.delete(format!("mirror_hash IN ({})", in_list(part)?).as_str()))?;
            }
        }
        Ok(())
    }

    /// Merges the small files that many adds leave behind and prunes old versions.
    pub fn compact(&self, key: &TableKey) -> Result<()> {
        if let Some(t) = self.table(key, false)? {
            self.rt.block_on(t.table.optimize(lancedb::table::OptimizeAction::All))?;
        }
        Ok(())
    }

    /// The contents the table holds rows of (none when it does not exist).
    pub fn contents(&self, key: &TableKey) -> Result<std::collections::HashSet<String>> {
        let mut out = std::collections::HashSet::new();
        let Some(t) = self.table(key, false)? else { return Ok(out) };
        let batches: Vec<RecordBatch> = self.rt.block_on(async {
            t.table.query().select(Select::columns(&["mirror_hash"])).execute().await?.try_collect().await
        })?;
        for b in &batches {
            let col = b
                .column_by_name("mirror_hash")
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| VectorError::Data("mirror_hash column missing".into()))?;
            out.extend(col.iter().flatten().map(str::to_string));
        }
        Ok(out)
    }

    /// How many chunk vectors the table holds (0 when it does not exist).
    pub fn count(&self, key: &TableKey) -> Result<usize> {
        match self.table(key, false)? {
            Some(t) => Ok(self.rt.block_on(t.table.count_rows(None))?),
            None => Ok(0),
        }
    }

    /// The `k` chunks nearest to `query`, best first.
    pub fn search(&self, key: &TableKey, query: &[f32], k: usize) -> Result<Vec<VectorHit>> {
        let Some(t) = self.table(key, false)? else { return Ok(Vec::new()) };
        self.search_in(&t, query, k, t.ann_probes)
    }

    /// The vectors of the given chunks (content, seq), in no particular order; a chunk the
    /// table lacks is left out.
    pub fn vectors_of(&self, key: &TableKey, chunks: &[(String, u32)]) -> Result<Vec<Vec<f32>>> {
        let Some(t) = self.table(key, false)? else { return Ok(Vec::new()) };
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        let mut filter = Vec::with_capacity(chunks.len());
        for (hash, seq) in chunks {
            filter.push(format!("(mirror_hash IN ({}) AND seq = {seq})", in_list(std::slice::from_ref(hash))?));
        }
        let q = t.table.query().only_if(filter.join(" OR ")).limit(chunks.len());
        Ok(rows_of(&self.collect(q)?)?.into_iter().filter_map(|(_, _, vector, _)| vector).collect())
    }

    /// The `k` chunks nearest to `query` moved away from a point ([`AwayFrom`]), best first;
    /// their scores are [`AwayFrom::similarity`] on the 0..1 scale.
    pub fn search_away_from(
        &self,
        key: &TableKey,
        query: &[f32],
        away: AwayFrom<'_>,
        k: usize,
    ) -> Result<Vec<VectorHit>> {
        let Some(t) = self.table(key, false)? else { return Ok(Vec::new()) };
        if away.mean.len() != key.dim {
            return self.search_in(&t, query, k, t.ann_probes);
        }
        let mut hits: Vec<VectorHit> = self
            .nearest_rows(&t, &away.shifted(query), k, t.ann_probes, &["mirror_hash", "seq", "vector", "_distance"])?
            .into_iter()
            .filter_map(|(mirror_hash, seq, vector, _)| {
                let similarity = away.similarity(query, &vector?);
                Some(VectorHit { mirror_hash, seq, score: ((1.0 + similarity) / 2.0).clamp(0.0, 1.0) })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(hits)
    }

    /// Nearest chunks; through the ANN index with `probes` partitions, else exactly.
    fn search_in(&self, t: &TableState, query: &[f32], k: usize, probes: Option<u32>) -> Result<Vec<VectorHit>> {
        let mut hits: Vec<VectorHit> = self
            .nearest_rows(t, query, k, probes, &["mirror_hash", "seq", "_distance"])?
            .into_iter()
            .map(|(mirror_hash, seq, _, d)| VectorHit { mirror_hash, seq, score: distance_to_score(d.unwrap_or(2.0)) })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(hits)
    }

    /// The `k` rows nearest to `query` by cosine distance (`columns` of them); through the ANN
    /// index with `probes` partitions, else exactly. `_distance` is named among the columns:
    /// lance warns on every search that leaves it implied.
    fn nearest_rows(
        &self,
        t: &TableState,
        query: &[f32],
        k: usize,
        probes: Option<u32>,
        columns: &[&str],
    ) -> Result<Vec<VectorRow>> {
        let mut q = t
            .table
            .query()
            .nearest_to(query)?
            .distance_type(DistanceType::Cosine)
            .limit(k.max(1))
            .select(Select::columns(columns));
        if let Some(p) = probes {
            q = q.nprobes(p as usize)?.refine_factor(REFINE_FACTOR);
        } else {
            q = q.bypass_vector_index();
        }
        rows_of(&self.collect(q)?)
    }

    /// The stored vector of one chunk.
    pub fn vector(&self, key: &TableKey, mirror_hash: &str, seq: u32) -> Result<Option<Vec<f32>>> {
        let Some(t) = self.table(key, false)? else { return Ok(None) };
        let filter = format!("mirror_hash IN ({}) AND seq = {seq}", in_list(&[mirror_hash.to_string()])?);
        let q = t.table.query().only_if(filter).limit(1);
        let batches = self.collect(q)?;
        Ok(rows_of(&batches)?.into_iter().find_map(|(_, _, v, _)| v))
    }

    /// Every chunk vector of the given contents, by content and chunk (`expected`: how many
    /// chunks they have, the most rows read).
    pub fn chunk_vectors(
        &self,
        key: &TableKey,
        contents: &[String],
        expected: usize,
    ) -> Result<HashMap<(String, u32), Vec<f32>>> {
        let mut out = HashMap::new();
        let Some(t) = self.table(key, false)? else { return Ok(out) };
        if contents.is_empty() {
            return Ok(out);
        }
        let filter = format!("mirror_hash IN ({})", in_list(contents)?);
        let q = t.table.query().only_if(filter).limit(expected.max(1));
        for (h, seq, v, _) in rows_of(&self.collect(q)?)? {
            if let Some(v) = v {
                out.insert((h, seq), v);
            }
        }
        Ok(out)
    }

    /// Every `seq = 0` vector of the given contents (for similarity edges).
    pub fn first_vectors(&self, key: &TableKey, contents: &[String]) -> Result<HashMap<String, Vec<f32>>> {
        let mut out = HashMap::new();
        let Some(t) = self.table(key, false)? else { return Ok(out) };
        for part in contents.chunks(500) {
            let filter = format!("seq = 0 AND mirror_hash IN ({})", in_list(part)?);
            let q = t.table.query().only_if(filter).limit(part.len());
            let batches = self.collect(q)?;
            for (h, _, v, _) in rows_of(&batches)? {
                if let Some(v) = v {
                    out.insert(h, v);
                }
            }
        }
        Ok(out)
    }

    /// Builds an ANN index once the table is large, and enables it only if its recall@10
    /// on a sample of the table's own vectors reaches the target. Returns the recall measured
    /// (`None` when nothing was built: too small, or decided before). Rows added later are
    /// searched exactly by LanceDB next to the index.
    pub fn maybe_index(&self, key: &TableKey, min_rows: usize) -> Result<Option<f32>> {
        if self.ann_marker(key).exists() {
            return Ok(None);
        }
        let Some(t) = self.table(key, false)? else { return Ok(None) };
        let rows = self.rt.block_on(t.table.count_rows(None))?;
        if rows < min_rows {
            return Ok(None);
        }
        let partitions = ((rows as f64).sqrt() as u32).clamp(2, 1024);
        let sub_vectors = if key.dim.is_multiple_of(16) { (key.dim / 16) as u32 } else { 1 };
        let builder = lancedb::index::vector::IvfPqIndexBuilder::default()
            .distance_type(DistanceType::Cosine)
            .num_partitions(partitions)
            .num_sub_vectors(sub_vectors);
        self.rt.block_on(
            t.table.create_index(&["vector"], lancedb::index::Index::IvfPq(builder)).replace(true).execute(),
        )?;
        let probes = probes_for(partitions);
        let recall = self.measure_recall(&t, RECALL_PROBES, rows, probes)?;
        let ok = recall >= RECALL_TARGET;
        let marker = if ok { format!("ok {probes}") } else { "low-recall".to_string() };
        protocol::write_atomic(&self.ann_marker(key), marker.as_bytes())?;
        tracing::info!(
            "ANN index on {} ({rows} rows, {partitions} partitions, {probes} probed): recall@10 {recall:.3}, {}",
            key.name,
            if ok { "in use" } else { "not used" }
        );
        self.tables.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        Ok(Some(recall))
    }

    /// Mean recall@10 of the ANN index against exact search, probing with `samples` stored
    /// vectors spread over the table. A probe's own row is left out of both lists (finding
    /// itself is free and would flatter the index): what counts is its 10 nearest others.
    fn measure_recall(&self, t: &TableState, samples: usize, rows: usize, nprobes: u32) -> Result<f32> {
        let stride = (rows / samples.max(1)).max(1);
        let offsets: Vec<u64> = (0..samples.min(rows)).map(|i| (i * stride) as u64).collect();
        // One take of the sampled rows, not a scan per probe.
        let q = t.table.take_offsets(offsets).select(Select::columns(&["mirror_hash", "seq", "vector"]));
        let probes: Vec<(String, u32, Vec<f32>)> =
            rows_of(&self.collect(q)?)?.into_iter().filter_map(|(h, s, v, _)| v.map(|v| (h, s, v))).collect();
        if probes.is_empty() {
            return Ok(1.0);
        }
        let neighbours = |hits: Vec<VectorHit>, own: &(String, u32)| -> Vec<(String, u32)> {
            hits.into_iter().map(|h| (h.mirror_hash, h.seq)).filter(|k| k != own).take(10).collect()
        };
        let mut total = 0.0;
        for (hash, seq, vector) in &probes {
            let own = (hash.clone(), *seq);
            let exact = neighbours(self.search_in(t, vector, 11, None)?, &own);
            let approx = neighbours(self.search_in(t, vector, 11, Some(nprobes))?, &own);
            let found = approx.iter().filter(|k| exact.contains(k)).count();
            total += found as f32 / exact.len().max(1) as f32;
        }
        Ok(total / probes.len() as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn replace_search_and_remove_are_consistent() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open(dir.path()).unwrap();
        let key = TableKey::new("file:/m.onnx", 3);
        let rows = vec![
            ChunkVector { mirror_hash: "aa".into(), seq: 0, vector: unit(&[1.0, 0.0, 0.0]) },
            ChunkVector { mirror_hash: "aa".into(), seq: 1, vector: unit(&[0.0, 1.0, 0.0]) },
            ChunkVector { mirror_hash: "bb".into(), seq: 0, vector: unit(&[0.9, 0.1, 0.0]) },
        ];
        store.add(&key, &rows).unwrap();
        // Replaying the batch after a crash: the unrecorded contents are removed first.
        store.remove(&key, &["aa".into(), "bb".into()]).unwrap();
        store.add(&key, &rows).unwrap();
        store.compact(&key).unwrap();
        assert_eq!(store.count(&key).unwrap(), 3);
        let hits = store.search(&key, &unit(&[1.0, 0.0, 0.0]), 2).unwrap();
        assert_eq!((hits[0].mirror_hash.as_str(), hits[0].seq), ("aa", 0));
        assert!((hits[0].score - 1.0).abs() < 1e-4, "{hits:?}");
        assert_eq!(hits[1].mirror_hash, "bb");
        assert_eq!(store.vector(&key, "aa", 1).unwrap().unwrap().len(), 3);
        assert_eq!(store.first_vectors(&key, &["aa".into(), "bb".into()]).unwrap().len(), 2);
        let some = store.vectors_of(&key, &[("aa".into(), 1), ("bb".into(), 0), ("bb".into(), 7)]).unwrap();
        assert_eq!(some.len(), 2, "the chunk the table lacks is left out");
        assert!(store.vectors_of(&key, &[("x'; DROP".into(), 0)]).is_err());
        store.remove(&key, &["aa".into()]).unwrap();
        assert_eq!(store.count(&key).unwrap(), 1);
        assert!(store.remove(&key, &["x'; DROP".into()]).is_err());
        assert!(store.add(&key, &[ChunkVector { mirror_hash: "cc".into(), seq: 0, vector: vec![1.0] }]).is_err());
    }

    #[test]
    fn a_note_near_the_querys_language_mean_loses_its_edge_over_one_that_answers() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open(dir.path()).unwrap();
        let key = TableKey::new("file:/m.onnx", 4);
        // Four notes around a direction and a generic one at their centre (the hub).
        let rows: Vec<ChunkVector> = [
            ("a1", [1.0, 0.3, 0.0, 0.0]),
            ("a2", [1.0, -0.3, 0.0, 0.0]),
            ("a3", [1.0, 0.0, 0.3, 0.0]),
            ("a4", [1.0, 0.0, -0.3, 0.0]),
            ("bb", [1.0, 0.0, 0.0, 0.0]),
        ]
        .iter()
        .map(|(h, v)| ChunkVector { mirror_hash: (*h).into(), seq: 0, vector: unit(v) })
        .collect();
        store.add(&key, &rows).unwrap();
        // A question mostly outside their space (another language), leaning a little to a1;
        // its language's texts gather around the first axis.
        let q = unit(&[0.3, 0.02, 0.0, 0.95]);
        let mean = [0.9, 0.0, 0.0, 0.0];
        assert_eq!(store.search(&key, &q, 1).unwrap()[0].mirror_hash, "bb", "the hub is nearest");
        let hits = store.search_away_from(&key, &q, AwayFrom::new(&mean, 0.4), 5).unwrap();
        assert_eq!(hits[0].mirror_hash, "a1", "{hits:?}");
        assert_eq!(hits.len(), 5);
        assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.score)), "{hits:?}");
        // Weight 0, or a mean of another length, is the plain similarity.
        for away in [AwayFrom::new(&mean, 0.0), AwayFrom::new(&[1.0], 0.4)] {
            let plain = store.search_away_from(&key, &q, away, 1).unwrap();
            assert_eq!(plain[0].mirror_hash, "bb");
            assert!((plain[0].score - store.search(&key, &q, 1).unwrap()[0].score).abs() < 1e-4);
        }
    }

    #[test]
    fn a_note_as_close_to_the_mean_as_the_mean_itself_keeps_its_similarity() {
        let away = AwayFrom::new(&[0.6, 0.0], 0.5);
        assert!((away.similarity(&[0.0, 1.0], &[0.6, 0.8]) - 0.8).abs() < 1e-6);
        assert!(away.similarity(&[0.0, 1.0], &[1.0, 0.0]) < 0.0, "closer than the mean's own length");
    }

    #[test]
    fn markers_and_probes() {
        assert_eq!(parse_marker("ok 45\n"), Some(45));
        assert_eq!(parse_marker("ok"), Some(20), "a marker of an earlier version");
        assert_eq!(parse_marker("low-recall"), None);
        assert_eq!(parse_marker(""), None);
        assert_eq!(probes_for(4), 4, "never more than there are");
        assert_eq!(probes_for(80), 20);
        assert_eq!(probes_for(1024), 204);
    }

    #[test]
    fn ann_index_is_used_only_with_enough_recall() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open(dir.path()).unwrap();
        let key = TableKey::new("file:/m.onnx", 16);
        // 600 pseudo-random unit vectors (a small table: index building is slow in debug builds).
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let rows: Vec<ChunkVector> = (0..600)
            .map(|i| ChunkVector {
                mirror_hash: format!("{i:04x}"),
                seq: 0,
                vector: unit(&(0..16).map(|_| next()).collect::<Vec<_>>()),
            })
            .collect();
        store.add(&key, &rows).unwrap();
        assert_eq!(store.maybe_index(&key, 1_000).unwrap(), None, "below the threshold nothing is built");
        let recall = store.maybe_index(&key, 500).unwrap().expect("an index was built");
        assert!((0.0..=1.0).contains(&recall));
        let marker = std::fs::read_to_string(store.ann_marker(&key)).unwrap();
        assert_eq!(parse_marker(&marker).is_some(), recall >= RECALL_TARGET, "{marker}");
        // Either way, search still finds a stored vector first.
        let hits = store.search(&key, &rows[42].vector, 5).unwrap();
        assert_eq!(hits[0].mirror_hash, rows[42].mirror_hash);
    }
}
