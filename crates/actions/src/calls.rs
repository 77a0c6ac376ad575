//! BigBlueButton video calls, as the reference makes them: `GET /calls/bigbluebutton/create`
//! answers a Parley link carrying the meeting's details, signed so that nobody can alter them to
//! reach another meeting on the same BigBlueButton server; following the link
//! (`GET /calls/bigbluebutton/join`) creates the meeting through the BigBlueButton API and
//! redirects to its join URL. Both API calls carry the checksum the BigBlueButton API requires:
//! the SHA-256 of the call's name, its query string and the shared secret.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use parley_domain::user::User;
use parley_domain::RequestError;
use rand::Rng;
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
struct Meeting {
    meeting_id: String,
    name: String,
    lock_settings_disable_cam: bool,
    moderator: i64,
}

fn not_configured() -> RequestError {
    RequestError::bad_request("BigBlueButton is not configured.")
}

fn config(ctx: &Context) -> Result<&BigBlueButtonConfig, RequestError> {
    ctx.bigbluebutton.as_ref().ok_or_else(not_configured)
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

/// `GET /calls/bigbluebutton/create`: a new meeting named `meeting_name` (voice only: cameras
/// off) that `caller` moderates; answers the join link, `/calls/bigbluebutton/join?...`.
pub fn create_bigbluebutton_call(
    ctx: &Context,
    caller: &User,
    meeting_name: &str,
    voice_only: bool,
) -> ActionResult<String> {
    let config = config(ctx)?;
    let meeting = Meeting {
        meeting_id: format!(
            "zulip-{}",
            rand::thread_rng().gen_range(100_000_000_000_i64..=999_999_999_999)
        ),
        name: meeting_name.to_owned(),
        lock_settings_disable_cam: voice_only,
        moderator: caller.id.0,
    };
    let json = serde_json::to_string(&meeting)
        .map_err(|e| ActionError::Internal(format!("meeting JSON: {e}")))?;
    let data = URL_SAFE_NO_PAD.encode(json);
    let signed = format!(
        "{data}:{}",
        URL_SAFE_NO_PAD.encode(tag(&config.secret, &data))
    );
    Ok(format!("/calls/bigbluebutton/join?bigbluebutton={signed}"))
}

/// Reads a signed join link's meeting, or "Invalid signature.".
fn verify(config: &BigBlueButtonConfig, signed: &str) -> Result<Meeting, RequestError> {
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
fn query(pairs: &[(&str, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", quote(k), quote(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `<url>api/<call>?<params>&checksum=<sha256(call + params + secret)>`.
pub fn signed_api_url(config: &BigBlueButtonConfig, call: &str, params: &str) -> String {
    let checksum = hex(&Sha256::digest(format!("{call}{params}{}", config.secret)));
    format!("{}api/{call}?{params}&checksum={checksum}", config.url)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The text of the first `<tag>` element of an XML answer.
fn element<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let start = xml.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(xml[start..end].trim())
}

/// `GET /calls/bigbluebutton/join`: checks the link's signature, (re)creates the meeting on the
/// BigBlueButton server and answers the URL to send the person to: the meeting's creator as
/// moderator, anyone else (or someone not logged in) as a viewer, named as their account is (a
/// visitor without an account is "Guest").
pub async fn join_bigbluebutton_call(
    ctx: &Context,
    viewer: Option<User>,
    signed: &str,
) -> ActionResult<String> {
    let config = config(ctx)?.clone();
    let meeting = verify(&config, signed)?;
    let create = query(&[
        ("meetingID", meeting.meeting_id.clone()),
        ("name", meeting.name.clone()),
        (
            "lockSettingsDisableCam",
            if meeting.lock_settings_disable_cam {
                "True"
            } else {
                "False"
            }
            .to_owned(),
        ),
    ]);
    let url = signed_api_url(&config, "create", &create);
    let connect_error =
        || RequestError::bad_request("Error connecting to the BigBlueButton server.");
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .map_err(|e| ActionError::Internal(format!("HTTP client: {e}")))?;
    let response = client.get(&url).send().await.map_err(|e| {
        tracing::warn!("BigBlueButton server unreachable: {e}");
        connect_error()
    })?;
    if !response.status().is_success() {
        return Err(connect_error().into());
    }
    let xml = response.text().await.map_err(|_| connect_error())?;
    if element(&xml, "messageKey") == Some("checksumError") {
        return Err(
            RequestError::bad_request("Error authenticating to the BigBlueButton server.").into(),
        );
    }
    if element(&xml, "returncode") != Some("SUCCESS") {
        return Err(RequestError::bad_request(
            "BigBlueButton server returned an unexpected error.",
        )
        .into());
    }
    let create_time = element(&xml, "createTime").unwrap_or("").to_owned();
    let (role, name) = match &viewer {
        Some(user) if user.id.0 == meeting.moderator => ("MODERATOR", user.full_name.clone()),
        Some(user) => ("VIEWER", user.full_name.clone()),
        None => ("VIEWER", "Guest".to_owned()),
    };
    let join = query(&[
        ("meetingID", meeting.meeting_id),
        ("role", role.to_owned()),
        ("fullName", name),
        ("createTime", create_time),
    ]);
    Ok(signed_api_url(&config, "join", &join))
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
        let expected = hex(&Sha256::digest(
            "createmeetingID=zulip-1&name=a%20b/cshared",
        ));
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
