//! API keys and passwords: generated from the OS's random source, keys compared in constant time,
//! passwords checked for length and hashed with Argon2id.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use parley_domain::RequestError;
use rand::distributions::{Alphanumeric, DistString};
use std::sync::atomic::{AtomicBool, Ordering};
use subtle::ConstantTimeEq;

/// Length of generated API keys.
pub const API_KEY_LENGTH: usize = 32;

/// The shortest password accepted.
pub const MIN_PASSWORD_LENGTH: usize = 6;

/// A new password is long enough (`password` names the parameter, as the reference does).
pub(crate) fn check_password(password: &str) -> Result<(), RequestError> {
    if password.chars().count() < MIN_PASSWORD_LENGTH {
        return Err(RequestError::invalid_param(
            "password",
            "The password is too weak.",
        ));
    }
    Ok(())
}

/// A new random API key of [`API_KEY_LENGTH`] alphanumeric characters.
pub fn generate_api_key() -> String {
    Alphanumeric.sample_string(&mut rand::rngs::OsRng, API_KEY_LENGTH)
}

/// A new random password for generated accounts.
pub fn generate_password() -> String {
    Alphanumeric.sample_string(&mut rand::rngs::OsRng, 20)
}

/// Whether two API keys are equal, in time independent of where they differ.
pub fn api_keys_match(given: &str, stored: &str) -> bool {
    given.len() == stored.len() && bool::from(given.as_bytes().ct_eq(stored.as_bytes()))
}

static CHEAP_HASHING: AtomicBool = AtomicBool::new(false);

/// Makes new password hashes cheap (Argon2id with 8 KiB and one pass) for the rest of the
/// process. Only test harnesses call this: they create hundreds of accounts, and the real cost
/// (19 MiB, two passes) is meant to be slow. Verifying reads the parameters from each hash, so
/// both kinds verify either way.
pub fn use_cheap_password_hashing() {
    CHEAP_HASHING.store(true, Ordering::Relaxed);
}

fn hasher() -> Argon2<'static> {
    if !CHEAP_HASHING.load(Ordering::Relaxed) {
        return Argon2::default();
    }
    match Params::new(Params::MIN_M_COST, 1, 1, None) {
        Ok(params) => Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
        Err(_) => Argon2::default(),
    }
}

/// Hashes a password into a PHC string (Argon2id with a random salt).
pub fn hash_password(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    hasher()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| e.to_string())
}

/// Whether `password` matches a stored PHC string; a malformed hash never matches.
pub fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc)
        .map(|hash| {
            Argon2::default()
                .verify_password(password.as_bytes(), &hash)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A hash of a random password, made with the current parameters on first use, that unknown
/// accounts and accounts without a password are checked against, so that they cost the same
/// Argon2 time as a real account and timing does not tell which addresses exist.
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash_password(&generate_password()).unwrap_or_default())
}

/// Whether `password` matches `stored`; with no stored hash (or a malformed one) it still spends
/// one Argon2 verification, on a dummy hash, and answers false.
pub fn verify_password_or_dummy(password: &str, stored: Option<&str>) -> bool {
    match stored.filter(|phc| PasswordHash::new(phc).is_ok()) {
        Some(phc) => verify_password(password, phc),
        None => {
            let _ = verify_password(password, dummy_hash());
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_are_long_random_and_compared_exactly() {
        let a = generate_api_key();
        let b = generate_api_key();
        assert_eq!(a.len(), API_KEY_LENGTH);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
        assert!(api_keys_match(&a, &a.clone()));
        assert!(!api_keys_match(&a, &b));
        assert!(!api_keys_match(&a, &a[..31]));
    }

    #[test]
    fn passwords_hash_and_verify() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(!hash.contains("correct horse"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong horse", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
        assert_ne!(hash, hash_password("correct horse").unwrap(), "salted");
    }

    #[test]
    fn unknown_accounts_cost_a_real_verification() {
        let hash = hash_password("correct horse").unwrap();
        assert!(verify_password_or_dummy("correct horse", Some(&hash)));
        assert!(!verify_password_or_dummy("correct horse", None));
        assert!(!verify_password_or_dummy(
            "correct horse",
            Some("not a hash")
        ));
        let time = |stored: Option<&str>| {
            (0..3)
                .map(|_| {
                    let started = std::time::Instant::now();
                    verify_password_or_dummy("guess", stored);
                    started.elapsed()
                })
                .min()
                .unwrap()
        };
        let known = time(Some(&hash));
        let unknown = time(None);
        // Both are an Argon2 verification with the same parameters (tens of milliseconds);
        // without the dummy an unknown account answered in microseconds.
        assert!(unknown * 3 > known, "unknown {unknown:?}, known {known:?}");
    }
}
