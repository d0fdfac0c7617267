#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use ring::rand::SystemRandom;
use serde_json::json;

use super::*;

#[path = "../../tests/support/node_audit.rs"]
mod node_audit;

fn pkcs8() -> Vec<u8> {
    Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
        .unwrap()
        .as_ref()
        .to_vec()
}

fn pem(der: &[u8]) -> Vec<u8> {
    format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        STANDARD.encode(der)
    )
    .into_bytes()
}

fn key_file(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    file
}

fn receipt() -> Value {
    json!({
        "receiptVersion": 1,
        "invocationId": "inv-1",
        "outcome": {"status": "exited", "exitCode": 0, "signal": null},
        "command": {"argv": ["/bin/true", "é \u{1F600} \"q\" \\ \n\t\u{1}"]},
        "hostBinds": [{"inode": u64::MAX}],
        "remote": {"tenant": "a", "clamped": {}},
    })
}

#[test]
fn a_signature_verifies_for_the_receipt_and_fails_for_a_modified_one() {
    let der = pkcs8();
    for bytes in [pem(&der), der.clone()] {
        let file = key_file(&bytes);
        let signer = ReceiptSigner::load(file.path()).unwrap();
        let signature = signer.sign(&receipt());
        assert!(verify(signer.public_key_pem(), &receipt(), &signature));

        let mut modified = receipt();
        modified["outcome"]["exitCode"] = json!(1);
        assert!(!verify(signer.public_key_pem(), &modified, &signature));
        let other = ReceiptSigner::from_file_bytes(&pkcs8()).unwrap();
        assert!(!verify(other.public_key_pem(), &receipt(), &signature));
    }
}

#[test]
fn a_key_that_is_not_ed25519_pkcs8_is_refused_with_its_path() {
    let file = key_file(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
    let error = ReceiptSigner::load(file.path()).err().unwrap().to_string();
    assert!(error.contains("not an Ed25519 PKCS#8"), "{error}");
    assert!(
        error.contains(&file.path().display().to_string()),
        "{error}"
    );
    let missing = ReceiptSigner::load(Path::new("/nonexistent/key.pem")).err();
    assert!(matches!(missing, Some(SigningError::ReadKey { .. })));
}

#[test]
fn an_openssl_generated_key_signs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("key.pem");
    let status = std::process::Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&path)
        .status()
        .expect("the openssl CLI (scripts/host-deps.sh installs it)");
    assert!(status.success());
    let signer = ReceiptSigner::load(&path).unwrap();
    let signature = signer.sign(&receipt());
    assert!(verify(signer.public_key_pem(), &receipt(), &signature));
}

/// The documented JavaScript check, run by Node on the receipt as a client
/// receives it (JSON text → `JSON.parse`), with audit.js's `canonicalJson`.
#[test]
fn node_verifies_the_signature_with_crypto_verify_over_canonical_json() {
    let signer = ReceiptSigner::from_file_bytes(&pkcs8()).unwrap();
    let signature = signer.sign(&receipt());
    let script = r#"
        const [receiptText, signature, publicKey] = input;
        const receipt = JSON.parse(receiptText);
        const check = (r) => crypto.verify(null, Buffer.from(canonicalJson(r)), publicKey, Buffer.from(signature, 'base64'));
        const modified = { ...receipt, invocationId: 'inv-2' };
        process.stdout.write(`${check(receipt)} ${check(modified)}`);
    "#;
    let input = json!([receipt().to_string(), signature, signer.public_key_pem()]);
    assert_eq!(node_audit::run_with_audit(script, &input), "true false");
}
