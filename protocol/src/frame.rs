//! The frames of the socket, and their encoding: a little-endian `u32` byte count, then a
//! `postcard` body (serde's compact binary form: varints, no field names).

use crate::error::ApiError;
use crate::requests::Request;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest frame either side accepts (a request body is at most 16 MiB of JSON).
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// Gateway (or supervisor) to worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// A frame lives for one send or receive; boxing the request would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum ClientFrame {
    /// First frame on every connection.
    Hello { version: u32 },
    /// One operation; the reply carries the same `id`.
    Call { id: u64, request: Request },
    /// Liveness probe (supervisor heartbeat).
    Ping { id: u64 },
    /// Asks the worker to push [`ServerFrame::Event`]s on this connection.
    Subscribe,
    /// The caller of call `id` went away (a streaming client disconnected): a generation it
    /// runs stops at its next token. Unknown or finished ids are ignored.
    Cancel { id: u64 },
}

/// Worker to gateway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ServerFrame {
    HelloAck {
        version: u32,
        pid: u32,
    },
    /// The peer spoke another protocol version; the connection closes after this.
    Rejected {
        reason: String,
    },
    Reply {
        id: u64,
        result: Result<JsonBody, ApiError>,
    },
    Pong {
        id: u64,
    },
    /// A change notification for `/api/events` (only after `Subscribe`).
    Event(Event),
    /// Part of a streamed reply, before the call's `Reply`: text the generator added.
    Partial {
        id: u64,
        text: String,
    },
}

/// One event of the local event stream: `event: <kind>` / `data: <json>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub kind: crate::api::EventKind,
    /// The SSE `id:`: for `document-changed`, the change journal's cursor at the document's
    /// newest change ([`ChangeCursor`]); a client that reconnects with it as `Last-Event-ID`
    /// gets what it missed.
    pub id: Option<String>,
    pub data: JsonBody,
}

/// A JSON document, already serialized. The HTTP status is the gateway's to choose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonBody {
    pub bytes: Vec<u8>,
}

impl JsonBody {
    pub fn of<T: Serialize>(value: &T) -> Result<Self, ApiError> {
        serde_json::to_vec(value)
            .map(|bytes| JsonBody { bytes })
            .map_err(|e| ApiError::runtime(format!("response could not be serialized: {e}")))
    }

    /// The body read back as the reply type it was written from (`of`'s inverse).
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, ApiError> {
        serde_json::from_slice(&self.bytes).map_err(|e| ApiError::runtime(format!("unreadable reply: {e}")))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("socket i/o failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("frame of {0} bytes exceeds the limit")]
    TooLarge(usize),
    #[error("frame could not be encoded: {0}")]
    Encode(postcard::Error),
    #[error("frame could not be decoded: {0}")]
    Decode(postcard::Error),
}

/// Encodes `msg` into one frame (length prefix included).
pub fn encode_frame<T: Serialize>(msg: &T) -> Result<Vec<u8>, FrameError> {
    let body = postcard::to_stdvec(msg).map_err(FrameError::Encode)?;
    if body.len() > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge(body.len()));
    }
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Writes one frame and flushes.
pub async fn write_frame<W, T>(w: &mut W, msg: &T) -> Result<(), FrameError>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    let bytes = encode_frame(msg)?;
    w.write_all(&bytes).await?;
    w.flush().await?;
    Ok(())
}

/// Reads one frame. `Ok(None)` means the peer closed the socket cleanly between frames.
pub async fn read_frame<R, T>(r: &mut R) -> Result<Option<T>, FrameError>
where
    R: AsyncRead + Unpin,
    T: DeserializeOwned,
{
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).await?;
    postcard::from_bytes(&body).map(Some).map_err(FrameError::Decode)
}

#[cfg(test)]
mod tests {
    use super::ClientFrame;
    use super::*;
    use crate::requests::Request;

    #[tokio::test]
    async fn round_trips_frames_over_a_pipe() {
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        let sent = ClientFrame::Call { id: 7, request: Request::GetJob(crate::GetJob { id: "abc".into() }) };
        write_frame(&mut a, &sent).await.unwrap();
        drop(a);
        let got: Option<ClientFrame> = read_frame(&mut b).await.unwrap();
        assert_eq!(got, Some(sent));
        let end: Option<ClientFrame> = read_frame(&mut b).await.unwrap();
        assert_eq!(end, None);
    }

    #[tokio::test]
    async fn refuses_oversized_length_prefix() {
        let (mut a, mut b) = tokio::io::duplex(64);
        a.write_all(&(u32::MAX).to_le_bytes()).await.unwrap();
        let got: Result<Option<ClientFrame>, _> = read_frame(&mut b).await;
        assert!(matches!(got, Err(FrameError::TooLarge(_))));
    }
}
