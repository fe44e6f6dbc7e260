//! The local socket between gateway (or supervisor) and worker, and the client side of
//! the version handshake.

use crate::{read_frame, write_frame, ClientFrame, FrameError, ServerFrame, PROTOCOL_VERSION};
use interprocess::local_socket::tokio::{prelude::*, Listener, Stream};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use std::path::Path;

pub use interprocess::local_socket::tokio::Stream as SocketStream;

#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    #[error("cannot connect to the worker: {0}")]
    Connect(std::io::Error),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("the worker closed the connection during the handshake")]
    Closed,
    #[error("the worker speaks protocol {0}, we speak {PROTOCOL_VERSION}")]
    Version(u32),
    #[error("the worker refused the connection: {0}")]
    Rejected(String),
}

/// Binds the worker's socket, replacing a stale socket file.
pub fn bind(path: &Path) -> std::io::Result<Listener> {
    let _ = std::fs::remove_file(path);
    let name = path.to_fs_name::<GenericFilePath>()?.into_owned();
    ListenerOptions::new().name(name).create_tokio()
}

/// Connects and completes the handshake. Returns the stream and the worker's pid.
pub async fn connect(path: &Path) -> Result<(Stream, u32), HandshakeError> {
    let name = path.to_fs_name::<GenericFilePath>().map_err(HandshakeError::Connect)?.into_owned();
    let mut stream = Stream::connect(name).await.map_err(HandshakeError::Connect)?;
    write_frame(&mut stream, &ClientFrame::Hello { version: PROTOCOL_VERSION }).await?;
    match read_frame::<_, ServerFrame>(&mut stream).await? {
        Some(ServerFrame::HelloAck { version, pid }) if version == PROTOCOL_VERSION => Ok((stream, pid)),
        Some(ServerFrame::HelloAck { version, .. }) => Err(HandshakeError::Version(version)),
        Some(ServerFrame::Rejected { reason }) => Err(HandshakeError::Rejected(reason)),
        Some(_) => Err(HandshakeError::Rejected("unexpected frame".into())),
        None => Err(HandshakeError::Closed),
    }
}
