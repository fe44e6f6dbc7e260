//! Where CLI requests go: the worker of the running server (over its socket), or, when no
//! server serves this data dir, a worker opened in this process.

use anyhow::{anyhow, Context};
use protocol::api::{Job, JobStatus};
use protocol::{read_frame, write_frame, ApiError, Call, ClientFrame, Dirs, Request, ServerFrame, Typed};
use std::sync::Arc;

pub enum Backend {
    Server { rt: tokio::runtime::Runtime, stream: protocol::socket::SocketStream, next: u64 },
    Local(Arc<worker::Worker>),
}

impl Backend {
    pub fn open(dirs: &Dirs) -> anyhow::Result<Self> {
        if supervisor::read_running(dirs).is_some() {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let socket = dirs.worker_socket();
            let (stream, _) = rt
                .block_on(protocol::socket::connect(&socket))
                .context("a server runs for this data dir, but its worker is not reachable (restarting?)")?;
            return Ok(Backend::Server { rt, stream, next: 1 });
        }
        let w = worker::Worker::open(dirs.clone()).context("cannot open the index")?;
        Ok(Backend::Local(w))
    }

    /// One request; its reply as the request's reply type ([`Call::Reply`]).
    pub fn call<C: Call>(&mut self, call: C) -> anyhow::Result<Result<C::Reply, ApiError>> {
        self.call_with(call, &mut |_| {})
    }

    /// [`Backend::call`], handing the parts of a streamed reply to `on_part` as they come.
    pub fn call_with<C: Call>(
        &mut self,
        call: C,
        on_part: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Result<C::Reply, ApiError>> {
        let req: Request = call.into();
        let body = match self {
            Backend::Local(w) => w.handle_with(req, &mut |text| {
                on_part(text);
                worker::Flow::Continue
            }),
            Backend::Server { rt, stream, next } => {
                let id = *next;
                *next += 1;
                rt.block_on(async {
                    write_frame(stream, &ClientFrame::Call { id, request: req }).await?;
                    loop {
                        match read_frame::<_, ServerFrame>(stream).await? {
                            Some(ServerFrame::Reply { id: got, result }) if got == id => return Ok(result),
                            Some(ServerFrame::Partial { id: got, text }) if got == id => on_part(&text),
                            Some(_) => continue,
                            None => return Err(anyhow!("the worker closed the connection")),
                        }
                    }
                })?
            }
        };
        Ok(body.and_then(|b| Typed::<C::Reply>::arrived(b).decode()))
    }

    /// Like [`call`], turning an API error into an error.
    pub fn call_ok<C: Call>(&mut self, call: C) -> anyhow::Result<C::Reply> {
        self.call(call)?.map_err(|e| anyhow!("{} ({})", e.message, e.code.as_str()))
    }

    /// Polls a job until it ends; returns the job object. In-process, the pictures the job
    /// found are read too (no OCR thread runs there), so their text is searchable when the
    /// command returns.
    pub fn wait_job(&mut self, id: &str) -> anyhow::Result<Job> {
        if let Backend::Local(w) = self {
            w.wait_idle();
            w.read_pictures_now();
        }
        loop {
            let job = self.call_ok(protocol::GetJob { id: id.to_string() })?;
            if job.status != JobStatus::Running {
                return Ok(job);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}
