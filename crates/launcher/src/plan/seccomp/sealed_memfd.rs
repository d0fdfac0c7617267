//! A read-only byte blob handed to bwrap by descriptor: the seccomp program
//! (`--seccomp FD`). (The option list, `--args FD`, is a socket the launcher
//! alone writes: bwrap must wait for it, spawn.rs.) Steps: memfd_create
//! (close-on-exec; the spawner dup2s it onto the planned slot) → write →
//! seal (no write, grow, shrink or further sealing: what bwrap reads is what
//! was planned) → rewind. One per launch: dup'd descriptors share the read
//! offset bwrap consumes.

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use nix::fcntl::{fcntl, FcntlArg, SealFlag};
use nix::sys::memfd::{memfd_create, MFdFlags};

#[derive(Debug, thiserror::Error)]
pub enum SealedMemfdError {
    #[error("memfd_create {name:?}: {source}")]
    Create { name: String, source: io::Error },
    #[error("write memfd {fd}: {source}")]
    Write { fd: RawFd, source: io::Error },
    #[error("seal memfd {fd}: {source}")]
    Seal { fd: RawFd, source: io::Error },
    #[error("rewind memfd {fd}: {source}")]
    Rewind { fd: RawFd, source: io::Error },
}

/// `bytes` in a sealed, rewound, close-on-exec memfd named `name`.
pub fn create(name: &CStr, bytes: &[u8]) -> Result<OwnedFd, SealedMemfdError> {
    let flags = MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING;
    let fd = memfd_create(name, flags).map_err(|errno| SealedMemfdError::Create {
        name: name.to_string_lossy().into_owned(),
        source: errno.into(),
    })?;
    let raw = fd.as_raw_fd();
    let mut file = File::from(fd);
    file.write_all(bytes)
        .map_err(|source| SealedMemfdError::Write { fd: raw, source })?;
    let seals = SealFlag::F_SEAL_SEAL
        | SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_WRITE;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals)).map_err(|errno| SealedMemfdError::Seal {
        fd: raw,
        source: errno.into(),
    })?;
    file.seek(SeekFrom::Start(0))
        .map_err(|source| SealedMemfdError::Rewind { fd: raw, source })?;
    Ok(OwnedFd::from(file))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_sealed_memfd_reads_back_its_bytes_and_refuses_writes() {
        let fd = create(c"cordon-test", b"a\0b\0").unwrap();
        let mut file = File::from(fd);
        let mut text = Vec::new();
        file.read_to_end(&mut text).unwrap();
        assert_eq!(text, b"a\0b\0");
        assert!(file.write_all(b"x").is_err(), "sealed against growing");
        file.seek(SeekFrom::Start(0)).unwrap();
        assert!(file.write_all(b"z").is_err(), "sealed against overwriting");
        file.set_len(1).unwrap_err();
        let flags = fcntl(&file, FcntlArg::F_GETFD).unwrap();
        assert_ne!(flags & libc::FD_CLOEXEC, 0, "close-on-exec until installed");
    }
}
