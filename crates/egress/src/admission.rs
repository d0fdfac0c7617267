//! Admission: does the run's allowlist name exactly this host and port, and
//! which address is the stream pinned to?
//!
//! Steps, in order (the first failure is the refusal reason):
//! 1. canonicalise the requested host (`malformed-name`; IPv6 literals are
//!    `unsupported`: a policy cannot name one);
//! 2. exact host + port match against the allowlist (`no-destination`);
//! 3. resolve a name on the host (`resolve-failed`);
//! 4. keep the first address that is global, or any address when the entry
//!    allows private ones (`private-address`) — that address is pinned.

use std::net::{IpAddr, Ipv6Addr};

use crate::address_class::is_global;
use crate::destination::{parse_requested_host, Destination, Host, MAX_DESTINATIONS};
use crate::refusal::Refusal;
use crate::resolver::Resolve;

/// The run's destinations (at most [`MAX_DESTINATIONS`]).
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    destinations: Vec<Destination>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an allowlist holds at most {MAX_DESTINATIONS} destinations, got {0}")]
pub struct TooManyDestinations(pub usize);

/// Resolved addresses tried in order when connecting (bounds the time a
/// name with many addresses can hold a stream in connect).
pub const MAX_CONNECT_CANDIDATES: usize = 4;

/// An admitted stream: the matched entry and the addresses it may be
/// pinned to (every one admissible, in resolver order; `pinned` is the
/// first, and the engine pins the stream to the one it connects to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub destination: Destination,
    pub pinned: IpAddr,
    pub candidates: Vec<IpAddr>,
}

impl Allowlist {
    pub fn new(destinations: Vec<Destination>) -> Result<Self, TooManyDestinations> {
        if destinations.len() > MAX_DESTINATIONS {
            return Err(TooManyDestinations(destinations.len()));
        }
        Ok(Self { destinations })
    }

    pub fn is_empty(&self) -> bool {
        self.destinations.is_empty()
    }

    pub fn destinations(&self) -> &[Destination] {
        &self.destinations
    }

    /// Admits `requested_host:port` or says why not (steps in the module doc).
    pub fn admit(
        &self,
        requested_host: &str,
        port: u16,
        resolver: &dyn Resolve,
    ) -> Result<Admitted, Refusal> {
        let destination = self.matched(requested_host, port)?;
        let candidates = match &destination.host {
            Host::Ipv4(ip) => vec![IpAddr::V4(*ip)],
            Host::Name(name) => resolver
                .resolve(name, port)
                .map_err(|_| Refusal::ResolveFailed)?,
        };
        pin(destination, candidates)
    }

    /// Steps 1-2: the allowlist entry naming exactly this host and port.
    /// Pure, so the engine runs it on its own task and only hands the
    /// (blocking) lookup of a name to a blocking thread.
    pub fn matched(&self, requested_host: &str, port: u16) -> Result<&Destination, Refusal> {
        if self.destinations.is_empty() {
            return Err(Refusal::NetworkNone);
        }
        let host = match parse_requested_host(requested_host) {
            Ok(host) => host,
            Err(_) if is_ipv6_literal(requested_host) => return Err(Refusal::Unsupported),
            Err(_) => return Err(Refusal::MalformedName),
        };
        self.destinations
            .iter()
            .find(|d| d.host == host && d.port == port)
            .ok_or(Refusal::NoDestination)
    }
}

/// Step 4: the admissible addresses among `candidates` (in order, at most
/// [`MAX_CONNECT_CANDIDATES`]); the first is pinned.
pub fn pin(destination: &Destination, candidates: Vec<IpAddr>) -> Result<Admitted, Refusal> {
    if candidates.is_empty() {
        return Err(Refusal::ResolveFailed);
    }
    let admissible: Vec<IpAddr> = candidates
        .into_iter()
        .filter(|ip| destination.allow_private_addresses || is_global(*ip))
        .take(MAX_CONNECT_CANDIDATES)
        .collect();
    let pinned = *admissible.first().ok_or(Refusal::PrivateAddress)?;
    Ok(Admitted {
        destination: destination.clone(),
        pinned,
        candidates: admissible,
    })
}

fn is_ipv6_literal(text: &str) -> bool {
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    inner.parse::<Ipv6Addr>().is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::destination::DestinationOptions;
    use crate::resolver::StaticResolver;

    fn resolver() -> StaticResolver {
        StaticResolver {
            entries: vec![
                (
                    "api.example.com".into(),
                    vec!["93.184.216.34".parse().unwrap()],
                ),
                (
                    "rebind.example.com".into(),
                    vec!["127.0.0.1".parse().unwrap()],
                ),
                (
                    "mapped.example.com".into(),
                    vec!["::ffff:10.0.0.1".parse().unwrap()],
                ),
                (
                    "mixed.example.com".into(),
                    vec!["10.0.0.1".parse().unwrap(), "8.8.4.4".parse().unwrap()],
                ),
                ("local.test".into(), vec!["127.0.0.1".parse().unwrap()]),
                ("empty.example.com".into(), vec![]),
            ],
        }
    }

    fn list(entries: &[&str]) -> Allowlist {
        Allowlist::new(
            entries
                .iter()
                .map(|e| Destination::parse_pair(e).unwrap())
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn an_exact_host_and_port_is_admitted_and_pinned_to_its_resolved_address() {
        let a = list(&["api.example.com:443"])
            .admit("api.example.com", 443, &resolver())
            .unwrap();
        assert_eq!(a.pinned, "93.184.216.34".parse::<IpAddr>().unwrap());
        let a = list(&["api.example.com:443"])
            .admit("API.example.com.", 443, &resolver())
            .unwrap();
        assert_eq!(a.destination.port, 443);
    }

    #[test]
    fn another_port_host_subdomain_or_ip_literal_is_no_destination() {
        let l = list(&["api.example.com:443"]);
        let r = resolver();
        assert_eq!(
            l.admit("api.example.com", 80, &r),
            Err(Refusal::NoDestination)
        );
        assert_eq!(
            l.admit("x.api.example.com", 443, &r),
            Err(Refusal::NoDestination)
        );
        assert_eq!(l.admit("example.com", 443, &r), Err(Refusal::NoDestination));
        // Egress by IP literal around a hostname allowlist: the literal is its own host.
        assert_eq!(
            l.admit("93.184.216.34", 443, &r),
            Err(Refusal::NoDestination)
        );
    }

    #[test]
    fn malformed_names_and_ipv6_literals_are_refused_before_lookup() {
        let l = list(&["api.example.com:443"]);
        let r = resolver();
        assert_eq!(l.admit("api example", 443, &r), Err(Refusal::MalformedName));
        assert_eq!(l.admit("0x7f.1", 443, &r), Err(Refusal::MalformedName));
        assert_eq!(l.admit("", 443, &r), Err(Refusal::MalformedName));
        assert_eq!(l.admit("[::1]", 443, &r), Err(Refusal::Unsupported));
        assert_eq!(l.admit("::1", 443, &r), Err(Refusal::Unsupported));
    }

    #[test]
    fn a_name_resolving_to_a_private_address_is_refused_unless_allowed() {
        let r = resolver();
        assert_eq!(
            list(&["rebind.example.com:80"]).admit("rebind.example.com", 80, &r),
            Err(Refusal::PrivateAddress)
        );
        assert_eq!(
            list(&["mapped.example.com:80"]).admit("mapped.example.com", 80, &r),
            Err(Refusal::PrivateAddress)
        );
        let mixed = list(&["mixed.example.com:80"])
            .admit("mixed.example.com", 80, &r)
            .unwrap();
        assert_eq!(
            mixed.pinned,
            "8.8.4.4".parse::<IpAddr>().unwrap(),
            "first global address is pinned"
        );
        let allowing = Allowlist::new(vec![Destination::new(
            "local.test",
            8080,
            DestinationOptions {
                allow_private_addresses: true,
                ..Default::default()
            },
        )
        .unwrap()])
        .unwrap();
        assert_eq!(
            allowing.admit("local.test", 8080, &r).unwrap().pinned,
            "127.0.0.1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn a_private_ip_literal_needs_allow_private_addresses() {
        let r = resolver();
        assert_eq!(
            list(&["127.0.0.1:80"]).admit("127.0.0.1", 80, &r),
            Err(Refusal::PrivateAddress)
        );
        assert_eq!(
            list(&["8.8.8.8:53"])
                .admit("8.8.8.8", 53, &r)
                .unwrap()
                .pinned,
            "8.8.8.8".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn resolution_failures_and_empty_lists_are_named() {
        let r = resolver();
        assert_eq!(
            list(&["nowhere.example:80"]).admit("nowhere.example", 80, &r),
            Err(Refusal::ResolveFailed)
        );
        assert_eq!(
            list(&["empty.example.com:80"]).admit("empty.example.com", 80, &r),
            Err(Refusal::ResolveFailed)
        );
        assert_eq!(
            Allowlist::default().admit("api.example.com", 443, &r),
            Err(Refusal::NetworkNone)
        );
    }

    #[test]
    fn more_than_1024_destinations_are_refused() {
        let many: Vec<_> = (0..1025)
            .map(|i| Destination::parse_pair(&format!("h{i}.example:80")).unwrap())
            .collect();
        assert_eq!(Allowlist::new(many).unwrap_err(), TooManyDestinations(1025));
    }
}
