//! BigBlueButton video calls, as the reference makes them: `GET /calls/bigbluebutton/create`
//! answers a Parley link carrying the meeting's details, signed so that nobody can alter them to
//! reach another meeting on the same BigBlueButton server; following the link
//! (`GET /calls/bigbluebutton/join`) creates the meeting through the BigBlueButton API and
//! redirects to its join URL. The API's checksums and the link's signature are
//! `crate::bigbluebutton`'s.

pub use crate::bigbluebutton::BigBlueButtonConfig;
use crate::bigbluebutton::{element, query, seal, signed_api_url, verify, Meeting};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use parley_domain::user::User;
use parley_domain::RequestError;
use rand::Rng;

fn not_configured() -> RequestError {
    RequestError::bad_request("BigBlueButton is not configured.")
}

fn config(ctx: &Context) -> Result<&BigBlueButtonConfig, RequestError> {
    ctx.bigbluebutton.as_ref().ok_or_else(not_configured)
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
    let signed =
        seal(config, &meeting).map_err(|e| ActionError::Internal(format!("meeting JSON: {e}")))?;
    Ok(format!("/calls/bigbluebutton/join?bigbluebutton={signed}"))
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
