//! The sign-up page of a reusable invitation link, `/join/{key}/`: a form (email, full name,
//! password, and the CSRF token of the `csrftoken` cookie) that posts back to the same address
//! and, once the account exists, signs the browser in and sends it to the app (303 to `/`).
//! Links that expired or were revoked show a page saying so, with a 404 status as the
//! reference's confirmation pages use.

use crate::params::ParamMap;
use crate::web::cookies;
use crate::web::pages::{self, failure, form_csrf_ok, form_csrf_token, message};
use crate::web::templates::{self, SignupForm};
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use parley_actions::signup::{self, Signup};
use parley_actions::{web_pages, ActionError, Context};

const UNUSABLE: &str = "This invitation cannot be used";

/// The form with this status and error, setting the CSRF cookie when its token is new.
async fn form_page(
    ctx: &Context,
    status: StatusCode,
    (csrf_token, new_token): (String, bool),
    error: Option<&str>,
    email: &str,
    full_name: &str,
) -> HttpResponse {
    let org = match web_pages::organization(ctx).await {
        Ok(org) => org,
        Err(err) => return failure(err),
    };
    let markup = templates::signup_page(
        &org,
        &SignupForm {
            csrf_token: &csrf_token,
            error,
            email,
            full_name,
        },
    );
    let mut response = pages::form_page(status, markup);
    if new_token {
        // A cookie this server built always forms a valid header.
        let _ = response.add_cookie(&cookies::csrf(ctx, csrf_token, None));
    }
    response
}

/// Why the link cannot be used, as a page; None when it can.
async fn unusable(ctx: &Context, key: String) -> Option<HttpResponse> {
    match signup::access_invitation_by_key(ctx, key).await {
        Ok(state) => state
            .message()
            .map(|msg| message(StatusCode::NOT_FOUND, UNUSABLE, msg)),
        Err(ActionError::Request(err)) => Some(message(StatusCode::NOT_FOUND, UNUSABLE, &err.msg)),
        Err(other) => Some(failure(other)),
    }
}

/// GET /join/{key}/ — the sign-up form of an invitation link, or why the link cannot be used.
pub async fn show(
    ctx: web::Data<Context>,
    req: HttpRequest,
    key: web::Path<String>,
) -> HttpResponse {
    if let Some(page) = unusable(&ctx, key.into_inner()).await {
        return page;
    }
    form_page(&ctx, StatusCode::OK, form_csrf_token(&req), None, "", "").await
}

/// POST /join/{key}/ — the form's submission: creates the account and signs the browser in
/// (303 to `/`), or shows the form again with what was wrong.
pub async fn submit(
    ctx: web::Data<Context>,
    req: HttpRequest,
    key: web::Path<String>,
    body: Bytes,
) -> HttpResponse {
    let key = key.into_inner();
    let mut form = ParamMap::default();
    if form.add_form(&body).is_err() {
        let token = form_csrf_token(&req);
        return form_page(
            &ctx,
            StatusCode::BAD_REQUEST,
            token,
            Some("Malformed form."),
            "",
            "",
        )
        .await;
    }
    let mut field = |name: &str| form.raw(name).unwrap_or_default().to_owned();
    let email = field("email");
    let full_name = field("full_name");
    let password = field("password");
    // A link that cannot be used shows the same page as following it.
    if let Some(page) = unusable(&ctx, key.clone()).await {
        return page;
    }
    if !form_csrf_ok(&req, &mut form) {
        return form_page(
            &ctx,
            StatusCode::FORBIDDEN,
            (parley_actions::sessions::new_csrf_token(), true),
            Some("Your sign-up form expired, or your browser does not accept cookies. Please try again."),
            &email,
            &full_name,
        )
        .await;
    }
    let signup = Signup {
        email: email.clone(),
        full_name: full_name.clone(),
        password,
    };
    match signup::do_accept_invitation(&ctx, key, signup).await {
        Ok(created) => pages::sign_in(&ctx, created.user).await,
        Err(ActionError::Request(err)) => {
            let token = form_csrf_token(&req);
            form_page(
                &ctx,
                StatusCode::BAD_REQUEST,
                token,
                Some(&err.msg),
                &email,
                &full_name,
            )
            .await
        }
        Err(other) => failure(other),
    }
}
