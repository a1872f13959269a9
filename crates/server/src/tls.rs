//! HTTPS for the phone-camera page: browsers give a page the camera only on a secure origin.
//! The certificate comes from the configuration, or is made on first start (self-signed, kept
//! under the data folder and reused) with its SHA-256 fingerprint printed, so an arbiter can
//! check what a phone warns about. rustls with the `ring` provider; served by `listener::serve_tls`
//! with the same router and limits as HTTP.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Why HTTPS cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A certificate or key file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The PEM holds no usable certificate or key.
    #[error("{path}: {message}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The certificate and key do not make a TLS configuration.
    #[error("TLS: {0}")]
    Rustls(#[from] rustls::Error),
    /// A self-signed certificate could not be made.
    #[error("cannot make a certificate: {0}")]
    Generate(String),
}

/// A certificate and key ready to serve, with where they came from.
pub struct Identity {
    /// The rustls configuration.
    pub config: Arc<rustls::ServerConfig>,
    /// SHA-256 of the certificate (DER), as `AB:CD:…`, for people to compare.
    pub fingerprint: String,
    /// The certificate file.
    pub cert_path: PathBuf,
    /// Whether it was made now (first start).
    pub created: bool,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> TlsError + '_ {
    move |source| TlsError::Io { path: path.to_owned(), source }
}

/// SHA-256 fingerprint in the usual colon-separated form.
pub fn fingerprint(der: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, der);
    digest.as_ref().iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":")
}

/// Loads the configured certificate and key, or (when none is configured) the self-signed pair
/// under `data_dir/tls/`, making it on first use for `names` (host names and addresses).
pub fn identity(
    cert: Option<&Path>,
    key: Option<&Path>,
    data_dir: &Path,
    names: &[String],
) -> Result<Identity, TlsError> {
    let (cert_path, key_path, created) = match (cert, key) {
        (Some(c), Some(k)) => (c.to_owned(), k.to_owned(), false),
        _ => {
            let dir = data_dir.join("tls");
            let (c, k) = (dir.join("cert.pem"), dir.join("key.pem"));
            let created = !(c.is_file() && k.is_file());
            if created {
                std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
                let made = rcgen::generate_simple_self_signed(names.to_vec())
                    .map_err(|e| TlsError::Generate(e.to_string()))?;
                std::fs::write(&c, made.cert.pem()).map_err(io_error(&c))?;
                std::fs::write(&k, made.key_pair.serialize_pem()).map_err(io_error(&k))?;
            }
            (c, k, created)
        }
    };
    let pem_error = |path: &Path, message: String| TlsError::Pem { path: path.to_owned(), message };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_path)
        .map_err(|e| pem_error(&cert_path, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| pem_error(&cert_path, e.to_string()))?;
    let first = certs.first().ok_or_else(|| pem_error(&cert_path, "no certificate in the file".into()))?;
    let fingerprint = fingerprint(first.as_ref());
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| pem_error(&key_path, e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    Ok(Identity { config: Arc::new(config), fingerprint, cert_path, created })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_identity_is_made_once_and_reused() {
        let dir = std::env::temp_dir().join(format!("tengen-tls-{}", std::process::id()));
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let first = identity(None, None, &dir, &names).expect("made");
        assert!(first.created);
        assert_eq!(first.fingerprint.len(), 32 * 3 - 1);
        let again = identity(None, None, &dir, &names).expect("reused");
        assert!(!again.created);
        assert_eq!(again.fingerprint, first.fingerprint, "the same certificate");
        // Configured files are used as given; a bad one is a clear error.
        let given = identity(Some(&first.cert_path), Some(&dir.join("tls/key.pem")), Path::new("/nonexistent"), &names)
            .expect("given");
        assert_eq!(given.fingerprint, first.fingerprint);
        std::fs::write(dir.join("bad.pem"), "not a certificate").expect("write");
        assert!(identity(Some(&dir.join("bad.pem")), Some(&dir.join("tls/key.pem")), &dir, &names).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
