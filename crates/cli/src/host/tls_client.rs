//! The client side of the TLS transport, for `cordon host --probe` (and the
//! tests): TLS 1.3, the server checked against a given CA, an optional
//! client certificate for mutual TLS.

use std::path::Path;
use std::sync::Arc;

use rustls::{ClientConfig, RootCertStore};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::tls::TlsSetupError;

fn pem_error(path: &Path) -> impl Fn(rustls_pki_types::pem::Error) -> TlsSetupError + '_ {
    move |e| TlsSetupError::Pem {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// A connector trusting `ca` and presenting `identity` (cert, key) if given.
pub fn connector(
    ca: &Path,
    identity: Option<(&Path, &Path)>,
) -> Result<tokio_rustls::TlsConnector, TlsSetupError> {
    let config_error = |e: rustls::Error| TlsSetupError::Config {
        reason: e.to_string(),
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).map_err(pem_error(ca))? {
        roots
            .add(cert.map_err(pem_error(ca))?)
            .map_err(config_error)?;
    }
    let builder =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(config_error)?
            .with_root_certificates(roots);
    let config = match identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .map_err(pem_error(cert))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(pem_error(cert))?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(pem_error(key))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(config_error)?
        }
    };
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}
