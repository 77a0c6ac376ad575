//! The server side of the web client: a person opens the server's URL in a browser, logs in and
//! chats. This module holds the pages (`/`, `/login/`, `/accounts/logout/`), the session and
//! CSRF cookies, the middlewares of the browser's scopes, the HTML templates and the client's
//! embedded files (`/static/...`). The API itself is not here: `/json/<path>` mounts the same
//! route table as `/api/v1/<path>` (see [`crate::app_with`]), and [`crate::auth`] takes the
//! session cookie there.

pub mod assets;
pub mod cookies;
pub mod middleware;
pub mod pages;
pub mod templates;

use actix_web::{guard, web};

/// Registers the pages and the client's files. `/static/{path}` goes last among the `/static`
/// routes, after the fixed ones (the icon, the emoji table).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(pages::home))
        .route("/login/", web::get().to(pages::login_page))
        .route("/login/", web::post().to(pages::login))
        .route("/login", web::get().to(pages::login_page))
        .route("/login", web::post().to(pages::login))
        .route("/accounts/logout/", web::post().to(pages::logout))
        .route("/favicon.ico", web::get().to(pages::favicon))
        .route("/robots.txt", web::get().to(pages::robots))
        .route(
            "/static/{path:.+}",
            web::route()
                .guard(guard::Any(guard::Get()).or(guard::Head()))
                .to(assets::serve),
        );
}
