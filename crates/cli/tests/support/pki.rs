//! Certificates generated at test time (rcgen, ring): a CA, a server
//! certificate for 127.0.0.1, client certificates (tenant = subject CN) from
//! that CA, one from ANOTHER CA, and an expired one. Written as PEM files in
//! a temporary directory that lives as long as the value.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::PathBuf;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A certificate and its key, as PEM files.
pub struct Pair {
    pub cert: PathBuf,
    pub key: PathBuf,
}

pub struct Pki {
    pub dir: tempfile::TempDir,
    /// The CA of both the server and the good client certificates.
    pub ca: PathBuf,
    pub server: Pair,
    /// CN `acme`.
    pub client: Pair,
    /// CN `globex`.
    pub other_tenant: Pair,
    /// CN `acme`, from a CA the host does not trust.
    pub foreign: Pair,
    /// CN `acme`, expired in 2021.
    pub expired: Pair,
}

fn ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

fn leaf(
    dir: &std::path::Path,
    file: &str,
    issuer: &CertifiedIssuer<'static, KeyPair>,
    cn: &str,
    server: bool,
    expired: bool,
) -> Pair {
    let names = if server {
        vec!["127.0.0.1".to_string()]
    } else {
        Vec::new()
    };
    let mut params = CertificateParams::new(names).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    params.extended_key_usages = vec![if server {
        ExtendedKeyUsagePurpose::ServerAuth
    } else {
        ExtendedKeyUsagePurpose::ClientAuth
    }];
    if expired {
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, issuer).unwrap();
    let pair = Pair {
        cert: dir.join(format!("{file}.crt")),
        key: dir.join(format!("{file}.key")),
    };
    std::fs::write(&pair.cert, cert.pem()).unwrap();
    std::fs::write(&pair.key, key.serialize_pem()).unwrap();
    pair
}

pub fn generate() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let good = ca("cordon test CA");
    let bad = ca("another CA");
    let ca_path = d.join("ca.crt");
    std::fs::write(&ca_path, good.pem()).unwrap();
    Pki {
        ca: ca_path,
        server: leaf(&d, "server", &good, "cordon host", true, false),
        client: leaf(&d, "client", &good, "acme", false, false),
        other_tenant: leaf(&d, "globex", &good, "globex", false, false),
        foreign: leaf(&d, "foreign", &bad, "acme", false, false),
        expired: leaf(&d, "expired", &good, "acme", false, true),
        dir,
    }
}
