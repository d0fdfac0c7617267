//! The sandbox side's handshake I/O on a non-blocking Unix stream: read
//! more of a request, write a reply. Neither has a deadline or a cancel of
//! its own — the attempt's task bounds both (handshake deadline, stop).

use std::io;

use tokio::net::UnixStream;

/// Bytes read per handshake read (requests are a few hundred bytes).
const READ_CHUNK: usize = 4096;

/// Appends at least one byte and at most `room` to `buf`; EOF is an error.
pub async fn read_more(client: &UnixStream, buf: &mut Vec<u8>, room: usize) -> io::Result<()> {
    if room == 0 {
        return Err(io::ErrorKind::InvalidData.into());
    }
    let room = room.min(READ_CHUNK);
    loop {
        client.readable().await?;
        // Declared after the await: a client that sends nothing holds no
        // chunk in its task, only the request bytes read so far.
        let mut chunk = [0u8; READ_CHUNK];
        match crate::scm_rights::try_read_stream(client, &mut chunk[..room]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return Ok(());
            }
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Writes all of `bytes` (a client that never reads stalls here until the
/// attempt's deadline or the run's stop drops the write).
pub async fn write_all(client: &UnixStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        client.writable().await?;
        match client.try_write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
