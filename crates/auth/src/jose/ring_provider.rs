//! jsonwebtoken's signature checks on ring, the crypto library the binary already has for TLS.
//! The crate's own providers were measured against it (docs/dependencies.md, "JWS verification"):
//! its RustCrypto one made a first validation 2.8x (RS256) to 5x (ES256) slower and brought 34
//! crates, and its aws-lc-rs one would compile a second C crypto library. This file only maps
//! the crate's algorithm to ring's verification parameters; parsing, the algorithm allow-list,
//! key-family checks and claim decoding are the crate's and `jose.rs`'s. It never signs.

use std::sync::Once;

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{ErrorKind, Result};
use jsonwebtoken::jwk::{EllipticCurve, ThumbprintHash};
use jsonwebtoken::signature::{Error, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::signature::{self as sig, RsaPublicKeyComponents, UnparsedPublicKey};

/// Makes ring jsonwebtoken's provider for the process (once; before the first verification).
pub(super) fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only if another provider was installed first, which then serves.
        let _ = PROVIDER.install_default();
    });
}

static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: no_signer,
    verifier_factory: verifier,
    key_utils: KeyUtils {
        rsa_pub_components_from_private_key: no_key_util,
        rsa_pub_components_from_public_key: no_key_util,
        ec_pub_components_from_private_key: no_ec_util,
        ed_pub_components_from_private_key: no_ed_util,
        compute_digest: no_digest,
    },
};

/// The public key, copied out of the crate's key (a verifier outlives the borrow).
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An EC point (uncompressed SEC1) or an Ed25519 key.
    Raw(Vec<u8>),
}

struct RingVerifier {
    alg: Algorithm,
    key: Material,
}

fn verifier(alg: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>> {
    let key = match key.kind() {
        DecodingKeyKind::RsaModulusExponent { n, e } => Material::Rsa {
            n: n.clone(),
            e: e.clone(),
        },
        DecodingKeyKind::SecretOrDer(raw) => Material::Raw(raw.clone()),
    };
    Ok(Box::new(RingVerifier { alg: *alg, key }))
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, msg: &[u8], signature: &Vec<u8>) -> std::result::Result<(), Error> {
        let rsa: &sig::RsaParameters = match self.alg {
            Algorithm::RS256 => &sig::RSA_PKCS1_2048_8192_SHA256,
            Algorithm::RS384 => &sig::RSA_PKCS1_2048_8192_SHA384,
            Algorithm::RS512 => &sig::RSA_PKCS1_2048_8192_SHA512,
            Algorithm::PS256 => &sig::RSA_PSS_2048_8192_SHA256,
            Algorithm::PS384 => &sig::RSA_PSS_2048_8192_SHA384,
            Algorithm::PS512 => &sig::RSA_PSS_2048_8192_SHA512,
            other => {
                let algorithm: &dyn sig::VerificationAlgorithm = match other {
                    Algorithm::ES256 => &sig::ECDSA_P256_SHA256_FIXED,
                    Algorithm::ES384 => &sig::ECDSA_P384_SHA384_FIXED,
                    Algorithm::EdDSA => &sig::ED25519,
                    // HMAC never reaches a key (jose.rs refuses it first).
                    _ => return Err(Error::new()),
                };
                let Material::Raw(raw) = &self.key else {
                    return Err(Error::new());
                };
                return UnparsedPublicKey::new(algorithm, raw)
                    .verify(msg, signature)
                    .map_err(|_| Error::new());
            }
        };
        let Material::Rsa { n, e } = &self.key else {
            return Err(Error::new());
        };
        RsaPublicKeyComponents { n, e }
            .verify(rsa, msg, signature)
            .map_err(|_| Error::new())
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.alg
    }
}

fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>> {
    Err(ErrorKind::UnsupportedAlgorithm.into())
}

fn no_key_util(_: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    Err(ErrorKind::UnsupportedAlgorithm.into())
}

fn no_ec_util(_: &[u8], _: Algorithm) -> Result<(EllipticCurve, Vec<u8>, Vec<u8>)> {
    Err(ErrorKind::UnsupportedAlgorithm.into())
}

fn no_ed_util(_: &[u8], _: &EllipticCurve) -> Result<Vec<u8>> {
    Err(ErrorKind::UnsupportedAlgorithm.into())
}

fn no_digest(_: &[u8], _: ThumbprintHash) -> Result<Vec<u8>> {
    Err(ErrorKind::UnsupportedAlgorithm.into())
}
