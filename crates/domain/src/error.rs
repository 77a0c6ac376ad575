//! Errors caused by a request: the code, message and extra fields that the API returns, modelled on
//! the reference server's coded errors (a code, data fields and an HTTP status).

use serde_json::{Map, Value};
use std::fmt;

/// The machine-readable `code` of an error response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// A general invalid request, including missing permission.
    BadRequest,
    /// A required parameter is missing (`var_name` names it).
    RequestVariableMissing,
    /// A parameter could not be converted to its type.
    RequestVariableInvalid,
    /// The caller's role does not allow the action.
    UnauthorizedPrincipal,
    /// No credentials were sent.
    Unauthorized,
    /// The API key does not match the account.
    InvalidApiKey,
    /// Login with username and password failed.
    AuthenticationFailed,
    /// The account is deactivated.
    UserDeactivated,
    /// The organization is deactivated.
    RealmDeactivated,
    /// Too many requests.
    RateLimitHit,
    /// A channel message to a channel that does not exist.
    StreamDoesNotExist,
    /// A channel-wide wildcard mention that the sender may not make.
    StreamWildcardMentionNotAllowed,
    /// A topic-wide wildcard mention that the sender may not make.
    TopicWildcardMentionNotAllowed,
    /// Moving messages past the applicable time limit.
    MoveMessagesTimeLimitExceeded,
    /// `GET /events` on a queue that does not exist (any more).
    BadEventQueueId,
    /// Push registration on a server without a push service.
    PushServiceNotConfigured,
    /// A push token the server does not know for the user.
    InvalidPushDeviceToken,
    /// No registered device can receive a push notification.
    NoActivePushDevice,
    /// The push notification service could not be reached (502).
    FailedToConnectBouncer,
    /// The push notification service failed with a 5xx (502).
    InternalServerErrorOnBouncer,
    /// The push notification service refused the server's credentials or plan (403).
    AdminActionRequired,
    /// An invalid narrow in a message query.
    BadNarrow,
    /// Creating or renaming a channel to a name that is taken.
    ChannelAlreadyExists,
    /// Reacting twice with the same emoji.
    ReactionAlreadyExists,
    /// Removing a reaction that is not there.
    ReactionDoesNotExist,
    /// An expected old value (`old`, `prev_content_sha256`) does not match.
    ExpectationMismatch,
    /// Deactivating the only owner, or the only user, of the organization.
    CannotDeactivateLastUser,
    /// Deactivating a user group that a setting or another group still uses.
    CannotDeactivateGroupInUse,
    /// Some invitations could not be sent (`errors`, `sent_invitations`, `daily_limit_reached`,
    /// `license_limit_reached` say which and why).
    InvitationFailed,
    /// A browser request without the session's CSRF token (403).
    CsrfFailed,
    /// An unexpected failure on the server's side.
    InternalServerError,
}

impl ErrorCode {
    /// The code as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "BAD_REQUEST",
            ErrorCode::RequestVariableMissing => "REQUEST_VARIABLE_MISSING",
            ErrorCode::RequestVariableInvalid => "REQUEST_VARIABLE_INVALID",
            ErrorCode::UnauthorizedPrincipal => "UNAUTHORIZED_PRINCIPAL",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::InvalidApiKey => "INVALID_API_KEY",
            ErrorCode::AuthenticationFailed => "AUTHENTICATION_FAILED",
            ErrorCode::UserDeactivated => "USER_DEACTIVATED",
            ErrorCode::RealmDeactivated => "REALM_DEACTIVATED",
            ErrorCode::RateLimitHit => "RATE_LIMIT_HIT",
            ErrorCode::StreamDoesNotExist => "STREAM_DOES_NOT_EXIST",
            ErrorCode::StreamWildcardMentionNotAllowed => "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
            ErrorCode::TopicWildcardMentionNotAllowed => "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
            ErrorCode::MoveMessagesTimeLimitExceeded => "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
            ErrorCode::BadEventQueueId => "BAD_EVENT_QUEUE_ID",
            ErrorCode::PushServiceNotConfigured => "PUSH_SERVICE_NOT_CONFIGURED",
            ErrorCode::InvalidPushDeviceToken => "INVALID_PUSH_DEVICE_TOKEN",
            ErrorCode::NoActivePushDevice => "NO_ACTIVE_PUSH_DEVICE",
            ErrorCode::FailedToConnectBouncer => "FAILED_TO_CONNECT_BOUNCER",
            ErrorCode::InternalServerErrorOnBouncer => "INTERNAL_SERVER_ERROR_ON_BOUNCER",
            ErrorCode::AdminActionRequired => "ADMIN_ACTION_REQUIRED",
            ErrorCode::BadNarrow => "BAD_NARROW",
            ErrorCode::ChannelAlreadyExists => "CHANNEL_ALREADY_EXISTS",
            ErrorCode::ExpectationMismatch => "EXPECTATION_MISMATCH",
            ErrorCode::ReactionAlreadyExists => "REACTION_ALREADY_EXISTS",
            ErrorCode::ReactionDoesNotExist => "REACTION_DOES_NOT_EXIST",
            ErrorCode::CannotDeactivateLastUser => "CANNOT_DEACTIVATE_LAST_USER",
            ErrorCode::CannotDeactivateGroupInUse => "CANNOT_DEACTIVATE_GROUP_IN_USE",
            ErrorCode::InvitationFailed => "INVITATION_FAILED",
            ErrorCode::CsrfFailed => "CSRF_FAILED",
            ErrorCode::InternalServerError => "INTERNAL_SERVER_ERROR",
        }
    }

    /// The HTTP status the reference server answers this code with.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::Unauthorized
            | ErrorCode::InvalidApiKey
            | ErrorCode::AuthenticationFailed
            | ErrorCode::UserDeactivated
            | ErrorCode::RealmDeactivated => 401,
            ErrorCode::RateLimitHit => 429,
            ErrorCode::ChannelAlreadyExists => 409,
            ErrorCode::InternalServerError => 500,
            ErrorCode::FailedToConnectBouncer | ErrorCode::InternalServerErrorOnBouncer => 502,
            ErrorCode::AdminActionRequired | ErrorCode::CsrfFailed => 403,
            _ => 400,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error the client caused: returned to it as `{"result":"error","code":..,"msg":..}` plus
/// `data` fields, with `status` as the HTTP status.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {msg}")]
pub struct RequestError {
    /// The error code.
    pub code: ErrorCode,
    /// The human-readable message.
    pub msg: String,
    /// Code-specific extra fields, such as `var_name` or `stream`.
    pub data: Map<String, Value>,
    /// The HTTP status; usually the code's own.
    pub status: u16,
}

impl RequestError {
    /// An error with this code and message, and the code's HTTP status.
    pub fn new(code: ErrorCode, msg: impl Into<String>) -> Self {
        RequestError {
            code,
            msg: msg.into(),
            data: Map::new(),
            status: code.http_status(),
        }
    }

    /// `BAD_REQUEST`: the general error for invalid requests and missing permissions.
    pub fn bad_request(msg: impl Into<String>) -> Self {
        RequestError::new(ErrorCode::BadRequest, msg)
    }

    /// `REQUEST_VARIABLE_MISSING` for a required parameter that was not sent.
    pub fn missing_param(var_name: &str) -> Self {
        RequestError::new(
            ErrorCode::RequestVariableMissing,
            format!("Missing '{var_name}' argument"),
        )
        .with("var_name", var_name)
    }

    /// `BAD_REQUEST` naming the parameter whose value is wrong.
    pub fn invalid_param(var_name: &str, msg: impl Into<String>) -> Self {
        RequestError::bad_request(msg).with("var_name", var_name)
    }

    /// "Must be an organization administrator".
    pub fn admin_required() -> Self {
        RequestError::new(
            ErrorCode::UnauthorizedPrincipal,
            "Must be an organization administrator",
        )
    }

    /// "Not allowed for guest users".
    pub fn guests_not_allowed() -> Self {
        RequestError::bad_request("Not allowed for guest users")
    }

    /// "Insufficient permission", the reference server's generic permission error.
    pub fn insufficient_permission() -> Self {
        RequestError::bad_request("Insufficient permission")
    }

    /// Adds a code-specific field to the error body.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Overrides the HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_param_names_the_variable() {
        let err = RequestError::missing_param("content");
        assert_eq!(err.code, ErrorCode::RequestVariableMissing);
        assert_eq!(err.msg, "Missing 'content' argument");
        assert_eq!(err.data["var_name"], "content");
        assert_eq!(err.status, 400);
    }

    #[test]
    fn auth_errors_are_401() {
        assert_eq!(RequestError::new(ErrorCode::InvalidApiKey, "x").status, 401);
        assert_eq!(
            RequestError::new(ErrorCode::UserDeactivated, "x").status,
            401
        );
        assert_eq!(RequestError::new(ErrorCode::RateLimitHit, "x").status, 429);
    }
}
