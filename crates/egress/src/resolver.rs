//! Name resolution happens on the host, never in the sandbox: the engine
//! resolves an admitted name and pins one address for the stream. The trait
//! lets unit tests stand in for DNS (rebinding, failures) without a server.

use std::net::{IpAddr, ToSocketAddrs};

pub trait Resolve: Send + Sync {
    /// Every address `host` resolves to, in the resolver's preference order.
    fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>>;
}

/// The host's own resolver (getaddrinfo: /etc/hosts, then DNS).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>> {
        Ok((host, port).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// A fixed table, for tests and for embedders that pin names themselves.
#[derive(Debug, Default, Clone)]
pub struct StaticResolver {
    pub entries: Vec<(String, Vec<IpAddr>)>,
}

impl Resolve for StaticResolver {
    fn resolve(&self, host: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        self.entries
            .iter()
            .find(|(name, _)| name == host)
            .map(|(_, addrs)| addrs.clone())
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("no such name: {host}"),
                )
            })
    }
}
