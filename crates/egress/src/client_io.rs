//! The sandbox side's handshake I/O (either kind of client stream): read
//! more of a request, write a reply. Neither has a deadline or a cancel of
//! its own — the attempt's task bounds both (handshake deadline, stop).

use std::io;

use crate::client_stream::ClientStream;

/// Bytes read per handshake read (requests are a few hundred bytes).
const READ_CHUNK: usize = 4096;

/// Appends at least one byte and at most `room` to `buf`; EOF is an error.
pub async fn read_more(client: &ClientStream, buf: &mut Vec<u8>, room: usize) -> io::Result<()> {
    if room == 0 {
        return Err(io::ErrorKind::InvalidData.into());
    }
    let room = room.min(READ_CHUNK);
    loop {
        client.readable().await?;
        // Declared after the await: a client that sends nothing holds no
        // chunk in its task, only the request bytes read so far.
        let mut chunk = [0u8; READ_CHUNK];
        match client.try_read(&mut chunk[..room]) {
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

/// Most a refused client still sending is drained of (1 MiB).
const DRAIN_BYTES: usize = 1 << 20;

/// After a refusal written to a client that may still be sending (an
/// oversized head): half-closes and reads what it sends until its EOF, at
/// most [`DRAIN_BYTES`], so the close does not reset the connection before
/// the client has read the refusal. Bounded by the caller's handshake
/// deadline and the run's stop, like every handshake await.
pub async fn drain(client: &ClientStream) {
    let _ = nix::sys::socket::shutdown(client.raw(), nix::sys::socket::Shutdown::Write);
    let mut sink = Vec::with_capacity(READ_CHUNK);
    let mut drained = 0;
    while drained < DRAIN_BYTES {
        sink.clear();
        if read_more(client, &mut sink, READ_CHUNK).await.is_err() {
            return; // EOF or an error: nothing more to take
        }
        drained += sink.len();
    }
}

/// Writes all of `bytes` (a client that never reads stalls here until the
/// attempt's deadline or the run's stop drops the write).
pub async fn write_all(client: &ClientStream, mut bytes: &[u8]) -> io::Result<()> {
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
