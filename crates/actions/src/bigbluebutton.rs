//! The BigBlueButton server's API as Parley calls it: its configuration, the checksum every API
//! call carries (the SHA-256 of the call's name, its query string and the shared secret), and
//! the signed meeting details of a join link, so that nobody can alter them to reach another
//! meeting on the same server. No request context: `Context` holds the configuration, and the
//! call endpoints (`crate::calls`) use these.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use parley_domain::RequestError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The BigBlueButton server calls are made on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BigBlueButtonConfig {
    /// The server's base URL, ending in `/` (its API is at `<url>api/`).
    pub url: String,
    /// The shared secret of its API.
    pub secret: String,
}

/// What a join link carries.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Meeting {
    /// The meeting's ID on the BigBlueButton server (`zulip-<12 digits>`).
    pub(crate) meeting_id: String,
    /// Its name.
    pub(crate) name: String,
    /// Voice only: cameras off.
    pub(crate) lock_settings_disable_cam: bool,
    /// The user who created it, its moderator.
    pub(crate) moderator: i64,
}

/// The HMAC-SHA256 tag of `data` under the server's secret (with a purpose prefix, so the tag
/// is good for nothing else).
fn tag(secret: &str, data: &str) -> Vec<u8> {
    // HMAC accepts keys of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(format!("parley-bbb:{secret}").as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// A join link's signed form of `meeting`: its JSON and the JSON's tag, both base64.
pub(crate) fn seal(
    config: &BigBlueButtonConfig,
    meeting: &Meeting,
) -> Result<String, serde_json::Error> {
    let data = URL_SAFE_NO_PAD.encode(serde_json::to_string(meeting)?);
    Ok(format!(
        "{data}:{}",
        URL_SAFE_NO_PAD.encode(tag(&config.secret, &data))
    ))
}

/// Reads a signed join link's meeting, or "Invalid signature.".
pub(crate) fn verify(config: &BigBlueButtonConfig, signed: &str) -> Result<Meeting, RequestError> {
    let invalid = || RequestError::bad_request("Invalid signature.");
    let (data, signature) = signed.split_once(':').ok_or_else(invalid)?;
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| invalid())?;
    let expected = tag(&config.secret, data);
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        expected.as_slice(),
        signature.as_slice(),
    )) {
        return Err(invalid());
    }
    let json = URL_SAFE_NO_PAD.decode(data).map_err(|_| invalid())?;
    serde_json::from_slice(&json).map_err(|_| invalid())
}

/// Percent-encodes as Python's `urllib.parse.quote` (unreserved characters and `/` stay).
fn quote(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' | b'/' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// A query string of `pairs`, encoded as the reference encodes BigBlueButton calls.
pub(crate) fn query(pairs: &[(&str, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", quote(k), quote(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `<url>api/<call>?<params>&checksum=<sha256(call + params + secret)>`.
pub fn signed_api_url(config: &BigBlueButtonConfig, call: &str, params: &str) -> String {
    let checksum = hex::encode(Sha256::digest(format!("{call}{params}{}", config.secret)));
    format!("{}api/{call}?{params}&checksum={checksum}", config.url)
}

/// The text of the first `<tag>` element of an XML answer.
pub(crate) fn element<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let start = xml.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(xml[start..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> BigBlueButtonConfig {
        BigBlueButtonConfig {
            url: "https://bbb.example.com/bigbluebutton/".into(),
            secret: "shared".into(),
        }
    }

    #[test]
    fn checksums_follow_the_api() {
        let params = query(&[("meetingID", "zulip-1".into()), ("name", "a b/c".into())]);
        assert_eq!(params, "meetingID=zulip-1&name=a%20b/c");
        let url = signed_api_url(&config(), "create", &params);
        let expected = hex::encode(Sha256::digest("createmeetingID=zulip-1&name=a%20b/cshared"));
        assert_eq!(
            url,
            format!(
                "https://bbb.example.com/bigbluebutton/api/create?{params}&checksum={expected}"
            )
        );
    }

    #[test]
    fn signatures_protect_the_meeting() {
        let meeting = Meeting {
            meeting_id: "zulip-5".into(),
            name: "n".into(),
            lock_settings_disable_cam: false,
            moderator: 3,
        };
        let data = URL_SAFE_NO_PAD.encode(serde_json::to_string(&meeting).unwrap());
        let good = format!("{data}:{}", URL_SAFE_NO_PAD.encode(tag("shared", &data)));
        assert_eq!(verify(&config(), &good).unwrap(), meeting);
        let other = BigBlueButtonConfig {
            secret: "other".into(),
            ..config()
        };
        assert!(verify(&other, &good).is_err());
        assert!(verify(&config(), "garbage").is_err());
        assert_eq!(
            element("<r><returncode>SUCCESS</returncode></r>", "returncode"),
            Some("SUCCESS")
        );
    }
}
