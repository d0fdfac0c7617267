//! cordon-egress: the mediated-network engine (no napi).
//!
//! A sandbox with `network.mode: "mediated"` keeps a private network
//! namespace with only `lo`; the only way out is this engine, one listener
//! per run, which admits exactly the policy's `host:port` destinations,
//! resolves names on the host and pins the address, optionally checks the
//! TLS SNI before any byte goes upstream, enforces the run's quotas and
//! writes one [`NetworkReceipt`] per stream attempt.
//!
//! Pure parts (tested alone): [`destination`], [`address_class`],
//! [`admission`], [`sni`], [`fd4_codec`], [`http_request`], [`socks5`],
//! [`quota`]. The server side is one engine per run.

pub mod address_class;
pub mod admission;
pub mod busy_time;
pub mod destination;
pub mod engine_runtime;
pub mod fd4_channel;
pub mod fd4_codec;
pub mod http_request;
pub mod network_receipt;
pub mod quota;
pub mod refusal;
pub mod resolver;
pub mod sni;
pub mod socks5;

pub use admission::{Admitted, Allowlist};
pub use destination::{Destination, DestinationError, DestinationOptions, Host};
pub use network_receipt::{Frontend, NetworkReceipt, StreamEnd, StreamProtocol};
pub use quota::Quotas;
pub use refusal::Refusal;
pub use resolver::{Resolve, StaticResolver, SystemResolver};
pub mod run_engine;
pub mod scm_rights;
pub mod timestamp;

mod byte_relay;
mod cancel;
mod client_io;
pub mod client_stream;
mod connect;
mod fd4_server;
pub mod proxy_listener;
mod proxy_session;
pub mod receipt_log;
mod sandbox_socket;
mod stop_latch;
mod stream_attempt;

pub use run_engine::{
    EngineError, NetworkReceipts, RunEngine, RunEngineConfig, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_HANDSHAKE_TIMEOUT,
};
pub use stop_latch::StopLatch;
