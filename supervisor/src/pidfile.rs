//! `<data>/<index>/svc.pid`: who serves this data dir. Held under an exclusive `flock` for
//! the server's lifetime, so a second server on the same data dir fails at once.

use crate::{io, SupervisorError};
use nix::fcntl::{Flock, FlockArg};
use protocol::Dirs;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PidInfo {
    pub pid: u32,
    pub port: u16,
    pub url: String,
}

impl PidInfo {
    /// The process a signal for this server goes to: its pid as the kernel's `pid_t`, or
    /// `None` when the pidfile names no single process a server could be (0 and negative values
    /// signal a process group or every process; 1 is init), so nothing is signalled.
    pub fn process(&self) -> Option<nix::unistd::Pid> {
        signal_target(self.pid)
    }
}

/// `pid` as a process a signal may go to: a value above 1 that fits a `pid_t`.
pub fn signal_target(pid: u32) -> Option<nix::unistd::Pid> {
    i32::try_from(pid).ok().filter(|p| *p > 1).map(nix::unistd::Pid::from_raw)
}

fn open(dirs: &Dirs) -> Result<File, SupervisorError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dirs.pid_file())
        .map_err(io("cannot open the pidfile"))
}

fn read_info(f: &mut File) -> Option<PidInfo> {
    let mut s = String::new();
    f.seek(SeekFrom::Start(0)).ok()?;
    f.read_to_string(&mut s).ok()?;
    serde_json::from_str(&s).ok()
}

pub fn acquire(dirs: &Dirs) -> Result<Flock<File>, SupervisorError> {
    match Flock::lock(open(dirs)?, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(lock),
        Err((mut f, _)) => Err(SupervisorError::AlreadyRunning {
            dir: dirs.data_dir.display().to_string(),
            pid: read_info(&mut f).map(|i| i.pid.to_string()).unwrap_or_else(|| "unknown".into()),
        }),
    }
}

pub fn write(lock: &mut Flock<File>, info: &PidInfo) -> Result<(), SupervisorError> {
    let text = serde_json::to_string(info).map_err(|e| SupervisorError::Sys(e.to_string()))?;
    lock.set_len(0).map_err(io("cannot write the pidfile"))?;
    lock.seek(SeekFrom::Start(0)).map_err(io("cannot write the pidfile"))?;
    lock.write_all(text.as_bytes()).map_err(io("cannot write the pidfile"))?;
    lock.sync_all().map_err(io("cannot write the pidfile"))
}

pub fn clear(lock: &mut Flock<File>) {
    let _ = lock.set_len(0);
}

/// The running server of this data dir, if any (its pidfile is locked).
pub fn read_running(dirs: &Dirs) -> Option<PidInfo> {
    let f = OpenOptions::new().read(true).write(true).open(dirs.pid_file()).ok()?;
    match Flock::lock(f, FlockArg::LockSharedNonblock) {
        Ok(_free) => None,
        Err((mut f, _)) => read_info(&mut f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SupervisorError;

    #[test]
    fn only_a_single_process_is_a_signal_target() {
        assert_eq!(signal_target(4242), Some(nix::unistd::Pid::from_raw(4242)));
        // 0 would signal the caller's process group, 1 is init, and 2^31 and above would
        // become negative: every process, or a group.
        for pid in [0, 1, 1 << 31, u32::MAX] {
            assert_eq!(signal_target(pid), None, "{pid}");
        }
        let info = PidInfo { pid: 0, port: 1, url: String::new() };
        assert_eq!(info.process(), None);
    }

    fn dirs(name: &str) -> Dirs {
        let root = std::env::temp_dir().join(format!("svc-pidfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let d = Dirs {
            config_dir: root.join("config"),
            data_dir: root.join("data"),
            cache_dir: root.join("cache"),
            index_name: "index".into(),
        };
        std::fs::create_dir_all(d.pid_file().parent().expect("a parent")).expect("the data dir");
        d
    }

    #[test]
    fn one_holder_at_a_time_and_the_running_server_is_readable() {
        let d = dirs("lock");
        assert_eq!(read_running(&d), None, "no pidfile, no server");
        let mut lock = acquire(&d).expect("the first lock");
        let info = PidInfo { pid: 4242, port: 3999, url: "http://127.0.0.1:3999".into() };
        write(&mut lock, &info).expect("written");
        assert_eq!(read_running(&d), Some(info));
        match acquire(&d) {
            Err(SupervisorError::AlreadyRunning { pid, .. }) => assert_eq!(pid, "4242"),
            other => panic!("a second server must be refused: {other:?}"),
        }
        clear(&mut lock);
        drop(lock);
        assert_eq!(read_running(&d), None, "an unlocked pidfile names no server");
        assert!(acquire(&d).is_ok(), "the lock is free again");
    }
}
