//! The sign-up page of a reusable invitation link, `/join/{key}/`: a small HTML form (email, full
//! name, password) that posts back to the same address. Links that expired or were revoked show
//! a page saying so, with a 404 status as the reference's confirmation pages use.

use crate::params::ParamMap;
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::HttpResponse;
use parley_actions::signup::{self, Signup};
use parley_actions::{ActionError, Context};

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn page(status: StatusCode, body: &str) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>Join the organization</title>\
             </head><body>{body}</body></html>"
        ))
}

fn message_page(status: StatusCode, text: &str) -> HttpResponse {
    page(status, &format!("<p>{}</p>", escape_html(text)))
}

fn form_page(
    status: StatusCode,
    error: Option<&str>,
    email: &str,
    full_name: &str,
) -> HttpResponse {
    let error = error
        .map(|e| format!("<p class=\"error\">{}</p>", escape_html(e)))
        .unwrap_or_default();
    page(
        status,
        &format!(
            "<h1>Create your account</h1>{error}<form method=\"post\">\
             <p><label>Email <input type=\"email\" name=\"email\" value=\"{}\" required></label></p>\
             <p><label>Full name <input type=\"text\" name=\"full_name\" value=\"{}\" required></label></p>\
             <p><label>Password <input type=\"password\" name=\"password\" required></label></p>\
             <p><button type=\"submit\">Sign up</button></p></form>",
            escape_html(email),
            escape_html(full_name)
        ),
    )
}

fn failure(err: ActionError) -> HttpResponse {
    tracing::error!(error = %err, "invitation sign-up failed");
    message_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong; please try again later.",
    )
}

/// GET /join/{key}/ — the sign-up form of an invitation link, or why the link cannot be used.
pub async fn show(ctx: web::Data<Context>, key: web::Path<String>) -> HttpResponse {
    match signup::access_invitation_by_key(&ctx, key.into_inner()).await {
        Ok(state) => match state.message() {
            Some(msg) => message_page(StatusCode::NOT_FOUND, msg),
            None => form_page(StatusCode::OK, None, "", ""),
        },
        Err(ActionError::Request(err)) => message_page(StatusCode::NOT_FOUND, &err.msg),
        Err(other) => failure(other),
    }
}

/// POST /join/{key}/ — the form's submission: creates the account, or shows the form again with
/// what was wrong.
pub async fn submit(ctx: web::Data<Context>, key: web::Path<String>, body: Bytes) -> HttpResponse {
    let key = key.into_inner();
    let mut form = ParamMap::default();
    if form.add_form(&body).is_err() {
        return form_page(StatusCode::BAD_REQUEST, Some("Malformed form."), "", "");
    }
    let mut field = |name: &str| form.raw(name).unwrap_or_default().to_owned();
    let email = field("email");
    let full_name = field("full_name");
    let password = field("password");
    // A link that cannot be used shows the same page as following it.
    match signup::access_invitation_by_key(&ctx, key.clone()).await {
        Ok(state) => {
            if let Some(msg) = state.message() {
                return message_page(StatusCode::NOT_FOUND, msg);
            }
        }
        Err(ActionError::Request(err)) => return message_page(StatusCode::NOT_FOUND, &err.msg),
        Err(other) => return failure(other),
    }
    let signup = Signup {
        email: email.clone(),
        full_name: full_name.clone(),
        password,
    };
    match signup::do_accept_invitation(&ctx, key, signup).await {
        Ok(created) => message_page(
            StatusCode::OK,
            &format!(
                "Welcome, {}! Your account {} has been created; you can now log in.",
                created.user.full_name, created.user.delivery_email
            ),
        ),
        Err(ActionError::Request(err)) => {
            form_page(StatusCode::BAD_REQUEST, Some(&err.msg), &email, &full_name)
        }
        Err(other) => failure(other),
    }
}
