//! What travels on the team's stream: one subject per document, its version in the message's
//! headers and its bytes in the payload (then its chunk vectors, when they travel with it); a
//! tombstone for a deletion; a heartbeat per member.

use crate::stores::catalog::TeamDoc;
use async_nats::HeaderMap;
use percent_encoding::{percent_decode_str, utf8_percent_encode, NON_ALPHANUMERIC};
use protocol::CollectionName;

/// A team's name: letters, digits, `-` and `_` (it names the stream and every subject).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamName(String);

impl TeamName {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let ok = !raw.is_empty()
            && raw.len() <= 64
            && raw.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if ok {
            Ok(TeamName(raw.to_string()))
        } else {
            Err(format!("team {raw:?}: a team's name is 1 to 64 letters, digits, '-' or '_'"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The team's stream.
    pub fn stream(&self) -> String {
        format!("SVC_{}", self.0)
    }

    /// Every subject of the team.
    pub fn all_subjects(&self) -> String {
        format!("svc.{}.>", self.0)
    }

    /// The subject of one document: `svc.<team>.doc.<collection>.<key of relPath>`.
    pub fn doc_subject(&self, collection: &str, rel_path: &str) -> String {
        format!("svc.{}.doc.{collection}.{}", self.0, path_key(rel_path))
    }

    /// The subject a member's heartbeat goes to.
    pub fn member_subject(&self, member: &str) -> String {
        format!("svc.{}.member.{member}", self.0)
    }

    /// The member a heartbeat's subject names, if it is one.
    pub fn member_of<'a>(&self, subject: &'a str) -> Option<&'a str> {
        subject.strip_prefix("svc.")?.strip_prefix(self.0.as_str())?.strip_prefix(".member.")
    }
}

/// A relative path as one subject token: its SHA-256, 32 hex digits (a path may hold dots,
/// spaces and `*`, which a subject token cannot).
pub fn path_key(rel_path: &str) -> String {
    let mut hex = crate::digest::sha256_hex(rel_path.as_bytes());
    hex.truncate(32);
    hex
}

/// The object a version of bytes `hash` of a document is stored as ([`DocMessage::object_name`]).
pub fn object_name(collection: &str, rel_path: &str, hash: &str) -> String {
    format!("{collection}/{}/{hash}", path_key(rel_path))
}

/// A member's name as a subject token and a consumer's name.
pub fn member_token(raw: &str) -> String {
    let cleaned: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).take(64).collect();
    if cleaned.is_empty() {
        "member".to_string()
    } else {
        cleaned
    }
}

const OP: &str = "Svc-Op";
const COLLECTION: &str = "Svc-Collection";
const PATH: &str = "Svc-Path";
const HASH: &str = "Svc-Hash";
const MTIME: &str = "Svc-Mtime";
const MEMBER: &str = "Svc-Member";
const VECTORS: &str = "Svc-Vectors";
const DIM: &str = "Svc-Vector-Dim";
const MIRROR: &str = "Svc-Mirror";
const BYTES: &str = "Svc-Bytes";
const OBJECT: &str = "Svc-Object";

/// The most dimensions a carried vector may have (the largest embedders have 4,096).
const MAX_DIM: usize = 8192;

/// A document's chunk vectors as the publishing member's embedder made them, so that a member
/// with the same embedder stores them instead of embedding the document again.
#[derive(Debug, Clone, PartialEq)]
pub struct Carried {
    /// The vector table they belong in (it names the embedder and the dimension).
    pub table: String,
    pub dim: usize,
    /// The content they are the vectors of (the converted text's hash).
    pub mirror_hash: String,
    /// Each chunk's sequence number and vector.
    pub chunks: Vec<(u32, Vec<f32>)>,
}

impl Carried {
    /// The payload's share: per chunk its sequence number, then its vector (little-endian).
    fn encoded_len(&self) -> usize {
        self.chunks.len() * (4 + 4 * self.dim)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        for (seq, v) in &self.chunks {
            out.extend_from_slice(&seq.to_le_bytes());
            for x in v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }

    fn decode(table: String, dim: usize, mirror_hash: String, bytes: &[u8]) -> Result<Self, String> {
        if dim == 0 || dim > MAX_DIM {
            return Err(format!("vectors of {dim} dimensions"));
        }
        let each = 4 + 4 * dim;
        if !bytes.len().is_multiple_of(each) {
            return Err("the vectors are cut short".to_string());
        }
        let word = |b: &[u8]| [b[0], b[1], b[2], b[3]];
        let chunks = bytes
            .chunks_exact(each)
            .map(|c| {
                let seq = u32::from_le_bytes(word(&c[..4]));
                (seq, c[4..].chunks_exact(4).map(|x| f32::from_le_bytes(word(x))).collect())
            })
            .collect();
        Ok(Carried { table, dim, mirror_hash, chunks })
    }
}

/// What a document's message says happened to it.
#[derive(Debug, Clone, PartialEq)]
pub enum DocOp {
    /// Its bytes as they are now, their SHA-256 and the file's modification time; its chunk
    /// vectors once the publishing member has embedded it.
    Put { bytes: Vec<u8>, hash: String, mtime_ms: i64, vectors: Option<Carried> },
    /// It was deleted (or renamed away).
    Delete,
}

/// One version of one shared document.
#[derive(Debug, Clone, PartialEq)]
pub struct DocMessage {
    pub collection: String,
    pub rel_path: String,
    /// Who published it.
    pub member: String,
    pub op: DocOp,
}

impl DocMessage {
    pub fn hash(&self) -> &str {
        match &self.op {
            DocOp::Put { hash, .. } => hash,
            DocOp::Delete => "",
        }
    }

    pub fn headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(COLLECTION, self.collection.as_str());
        h.insert(PATH, utf8_percent_encode(&self.rel_path, NON_ALPHANUMERIC).to_string().as_str());
        h.insert(MEMBER, self.member.as_str());
        match &self.op {
            DocOp::Put { bytes, hash, mtime_ms, vectors } => {
                h.insert(OP, "put");
                h.insert(HASH, hash.as_str());
                h.insert(MTIME, mtime_ms.to_string().as_str());
                if let Some(v) = vectors {
                    h.insert(VECTORS, v.table.as_str());
                    h.insert(DIM, v.dim.to_string().as_str());
                    h.insert(MIRROR, v.mirror_hash.as_str());
                    h.insert(BYTES, bytes.len().to_string().as_str());
                }
            }
            DocOp::Delete => h.insert(OP, "delete"),
        }
        h
    }

    /// The version a replica records for this message at stream sequence `seq` (`stored`: its
    /// bytes went through the object store).
    pub fn version(&self, seq: u64, stored: bool) -> TeamDoc {
        match &self.op {
            DocOp::Delete => TeamDoc::tombstone(seq),
            DocOp::Put { hash, vectors, .. } => TeamDoc {
                vectors: vectors.as_ref().map(|v| v.table.clone()),
                stored,
                ..TeamDoc::put(seq, hash.clone())
            },
        }
    }

    /// The name of this version's bytes in the team's object store, where they go when they
    /// are too large for one message: `<collection>/<key of relPath>/<hash>` (one object per
    /// version, so a publish that fails after storing its bytes leaves the version before
    /// whole).
    pub fn object_name(&self) -> String {
        object_name(&self.collection, &self.rel_path, self.hash())
    }

    /// [`Self::headers`] of a version whose bytes are in the object store (the message itself
    /// has no payload).
    pub fn headers_stored(&self) -> HeaderMap {
        let mut h = self.headers();
        h.insert(OBJECT, "1");
        h
    }

    /// The bytes of a version read from the object store, checked against its hash.
    pub fn with_stored_bytes(mut self, stored: Vec<u8>) -> Result<Self, String> {
        match &mut self.op {
            DocOp::Put { bytes, hash, .. } => {
                if crate::digest::sha256_hex(&stored) != *hash {
                    return Err(format!("{}: the stored bytes do not match their hash", self.rel_path));
                }
                *bytes = stored;
                Ok(self)
            }
            DocOp::Delete => Ok(self),
        }
    }

    /// The length of [`Self::payload`].
    pub fn payload_len(&self) -> usize {
        match &self.op {
            DocOp::Put { bytes, vectors, .. } => bytes.len() + vectors.as_ref().map_or(0, Carried::encoded_len),
            DocOp::Delete => 0,
        }
    }

    pub fn payload(&self) -> Vec<u8> {
        match &self.op {
            DocOp::Put { bytes, vectors: None, .. } => bytes.clone(),
            DocOp::Put { bytes, vectors: Some(v), .. } => {
                let mut out = Vec::with_capacity(bytes.len() + v.encoded_len());
                out.extend_from_slice(bytes);
                v.encode(&mut out);
                out
            }
            DocOp::Delete => Vec::new(),
        }
    }

    /// Reads a message of the stream back; a message that is not one of ours, or whose
    /// bytes disagree with its hash, is refused with the reason. With `true`, the version's
    /// bytes are in the object store ([`Self::object_name`]): its `bytes` are empty until
    /// [`Self::with_stored_bytes`].
    pub fn decode(headers: Option<&HeaderMap>, payload: &[u8]) -> Result<(Self, bool), String> {
        let h = headers.ok_or("a document message without headers")?;
        let get = |name: &str| h.get(name).map(|v| v.as_str().to_string()).ok_or(format!("no {name} header"));
        let collection = CollectionName::parse(&get(COLLECTION)?).map_err(|e| e.to_string())?.as_str().to_string();
        let rel_path = percent_decode_str(&get(PATH)?)
            .decode_utf8()
            .map_err(|_| "the path is not UTF-8".to_string())?
            .into_owned();
        let member = get(MEMBER)?;
        let stored = h.get(OBJECT).is_some();
        let op = match get(OP)?.as_str() {
            "put" if stored => DocOp::Put {
                bytes: Vec::new(),
                hash: get(HASH)?,
                mtime_ms: get(MTIME)?.parse().unwrap_or(0),
                vectors: None,
            },
            "put" => {
                let hash = get(HASH)?;
                let (bytes, vectors) = match h.get(VECTORS) {
                    None => (payload, None),
                    Some(table) => {
                        let at: usize = get(BYTES)?.parse().map_err(|_| format!("{rel_path}: a bad {BYTES} header"))?;
                        let dim: usize = get(DIM)?.parse().map_err(|_| format!("{rel_path}: a bad {DIM} header"))?;
                        let (bytes, rest) =
                            payload.split_at_checked(at).ok_or(format!("{rel_path}: the payload is cut short"))?;
                        let carried = Carried::decode(table.as_str().to_string(), dim, get(MIRROR)?, rest)
                            .map_err(|e| format!("{rel_path}: {e}"))?;
                        (bytes, Some(carried))
                    }
                };
                if crate::digest::sha256_hex(bytes) != hash {
                    return Err(format!("{rel_path}: the bytes do not match their hash"));
                }
                DocOp::Put { bytes: bytes.to_vec(), hash, mtime_ms: get(MTIME)?.parse().unwrap_or(0), vectors }
            }
            "delete" => DocOp::Delete,
            other => return Err(format!("unknown operation {other:?}")),
        };
        Ok((DocMessage { collection, rel_path, member, op }, stored))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn subjects_hold_no_path_characters() {
        let team = TeamName::parse("eng-1").unwrap();
        let s = team.doc_subject("notes", "a b/c.*.md");
        assert!(s.starts_with("svc.eng-1.doc.notes."));
        assert_eq!(s.split('.').count(), 5, "{s}");
        assert_eq!(team.doc_subject("notes", "a b/c.*.md"), s, "the same path, the same subject");
        assert_ne!(team.doc_subject("notes", "x.md"), s);
        assert_eq!(team.member_of("svc.eng-1.member.laptop"), Some("laptop"));
        assert_eq!(team.member_of("svc.eng-1.doc.notes.ab"), None);
        assert!(TeamName::parse("a.b").is_err());
        assert!(TeamName::parse("").is_err());
        assert_eq!(member_token("my laptop.local"), "my-laptop-local");
    }

    #[test]
    fn a_message_reads_back_and_its_bytes_are_checked() {
        let bytes = b"# N\n\nhello\n".to_vec();
        let m = DocMessage {
            collection: "notes".into(),
            rel_path: "dir/ü note.md".into(),
            member: "a".into(),
            op: DocOp::Put { hash: crate::digest::sha256_hex(&bytes), bytes, mtime_ms: 5, vectors: None },
        };
        let back = DocMessage::decode(Some(&m.headers()), &m.payload()).unwrap();
        assert_eq!(back, (m.clone(), false));
        let err = DocMessage::decode(Some(&m.headers()), b"other").unwrap_err();
        assert!(err.contains("hash"), "{err}");
        let del = DocMessage { op: DocOp::Delete, ..m };
        assert_eq!(DocMessage::decode(Some(&del.headers()), &[]).unwrap(), (del, false));
        assert!(DocMessage::decode(None, &[]).is_err());
    }

    #[test]
    fn a_stored_version_names_its_object_and_its_bytes_are_checked_when_fetched() {
        let bytes = vec![b'x'; 3000];
        let m = DocMessage {
            collection: "notes".into(),
            rel_path: "big.txt".into(),
            member: "a".into(),
            op: DocOp::Put {
                hash: crate::digest::sha256_hex(&bytes),
                bytes: bytes.clone(),
                mtime_ms: 5,
                vectors: None,
            },
        };
        let (read, stored) = DocMessage::decode(Some(&m.headers_stored()), &[]).unwrap();
        assert!(stored);
        assert_eq!(read.object_name(), m.object_name());
        assert!(m.object_name().starts_with("notes/") && m.object_name().ends_with(m.hash()));
        assert!(read.clone().with_stored_bytes(b"other".to_vec()).is_err());
        assert_eq!(read.with_stored_bytes(bytes).unwrap(), m);
    }

    #[test]
    fn vectors_travel_after_the_bytes_and_are_checked() {
        let bytes = b"# N\n\nhello\n".to_vec();
        let carried = Carried {
            table: "chunks_ab_3".into(),
            dim: 3,
            mirror_hash: "m1".into(),
            chunks: vec![(0, vec![0.5, -1.0, 2.25]), (1, vec![0.0, 1.0, f32::MIN_POSITIVE])],
        };
        let m = DocMessage {
            collection: "notes".into(),
            rel_path: "a.md".into(),
            member: "a".into(),
            op: DocOp::Put {
                hash: crate::digest::sha256_hex(&bytes),
                bytes: bytes.clone(),
                mtime_ms: 5,
                vectors: Some(carried),
            },
        };
        let payload = m.payload();
        assert_eq!(payload.len(), bytes.len() + 2 * (4 + 12));
        assert_eq!(m.payload_len(), payload.len());
        assert_eq!(DocMessage::decode(Some(&m.headers()), &payload).unwrap(), (m.clone(), false), "bit for bit");
        let cut = DocMessage::decode(Some(&m.headers()), &payload[..payload.len() - 1]).unwrap_err();
        assert!(cut.contains("cut short"), "{cut}");
        let mut wrong = payload.clone();
        wrong[0] ^= 1;
        assert!(DocMessage::decode(Some(&m.headers()), &wrong).unwrap_err().contains("hash"));
        let mut h = m.headers();
        h.insert(DIM, "0");
        assert!(DocMessage::decode(Some(&h), &payload).is_err());
    }
}
