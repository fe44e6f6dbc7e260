//! Which folders live on a file system whose changes a watch does not see: network shares
//! (NFS, SMB/CIFS, AFS, Ceph…), FUSE mounts (sshfs, rclone, cloud drives, virtiofs) and VM
//! shares (9p as in WSL 2's Windows drives, VirtualBox). The kernel reports only changes made
//! through this machine there, so svc scans such folders at an interval instead.

use std::path::Path;

/// The file system kinds that report no changes made elsewhere, by their `statfs` magic
/// number (Linux `f_type`).
const REMOTE: &[(i64, &str)] = &[
    (0x6969, "NFS"),
    (0x517B, "SMB"),
    (0xFF53_4D42, "CIFS"),
    (0xFE53_4D42, "SMB2"),
    (0x6573_5546, "FUSE"),
    (0x0102_1997, "9p"),
    (0x786F_4256, "VirtualBox shared folder"),
    (0x5346_414F, "AFS"),
    (0x6B41_4653, "AFS"),
    (0x00C3_6400, "Ceph"),
    (0x7375_7245, "Coda"),
    (0x564C, "NCP"),
    (0x0BD0_0BD0, "Lustre"),
    (0x0116_1970, "GFS2"),
    (0x7461_636F, "OCFS2"),
    (0x1366_1366, "OrangeFS"),
];

/// The kind of file system of `magic`, when it is one whose changes a watch misses.
fn remote_of(magic: i64) -> Option<&'static str> {
    REMOTE.iter().find(|(m, _)| *m == magic).map(|(_, kind)| *kind)
}

/// The kind of network, FUSE or VM file system `path` is on, if it is on one (Linux only; an
/// unreadable path counts as local: the watch reports that error itself).
pub fn remote_kind(path: &Path) -> Option<&'static str> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let fs = nix::sys::statfs::statfs(path).ok()?;
        // `f_type` is a C long (i32 on 32-bit targets, where CIFS's magic is negative).
        #[allow(clippy::unnecessary_cast)]
        let magic = fs.filesystem_type().0 as i64 & 0xFFFF_FFFF;
        remote_of(magic)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = path;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_fuse_and_vm_shares_are_remote_local_disks_are_not() {
        assert_eq!(remote_of(0x6969), Some("NFS"));
        assert_eq!(remote_of(0xFF53_4D42), Some("CIFS"));
        assert_eq!(remote_of(0x6573_5546), Some("FUSE"));
        assert_eq!(remote_of(0x0102_1997), Some("9p"));
        assert_eq!(remote_of(0xEF53), None, "ext4");
        assert_eq!(remote_of(0x0102_1994), None, "tmpfs");
        assert_eq!(remote_of(0x5846_5342), None, "XFS");
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(remote_kind(dir.path()), None, "the temp dir of a test is local");
        assert_eq!(remote_kind(&dir.path().join("missing")), None);
    }
}
