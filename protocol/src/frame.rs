//! Length-prefixed frames: a little-endian `u32` byte count, then a `bincode` body.

use serde::{de::DeserializeOwned, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest frame either side accepts (a request body is at most 16 MiB of JSON).
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("socket i/o failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("frame of {0} bytes exceeds the limit")]
    TooLarge(usize),
    #[error("frame could not be encoded: {0}")]
    Encode(#[from] bincode::error::EncodeError),
    #[error("frame could not be decoded: {0}")]
    Decode(#[from] bincode::error::DecodeError),
}

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Encodes `msg` into one frame (length prefix included).
pub fn encode_frame<T: Serialize>(msg: &T) -> Result<Vec<u8>, FrameError> {
    let body = bincode::serde::encode_to_vec(msg, config())?;
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
    let (msg, _) = bincode::serde::decode_from_slice(&body, config())?;
    Ok(Some(msg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::ClientFrame;
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
