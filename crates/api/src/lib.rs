//! Parley's HTTP layer, kept thin: routes, the typed parameter layer, authentication, and the
//! mapping of results to the JSON envelope. Business rules live in `parley-actions`.

pub mod auth;
pub mod envelope;
pub mod error;
pub mod fallback;
pub mod h1;
pub mod logging;
pub mod ops;
pub mod params;
pub mod paths;
pub mod routes;
pub mod web;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::from_fn;
use actix_web::{web as aweb, App};
use parley_actions::Context;

/// The whole application: the API under `/api/v1` (HTTP Basic) and, the same route table, under
/// `/json` (the web client's session, CSRF-protected), the web client's pages and files, and
/// JSON 404s everywhere else. The server binary and the tests both serve exactly this.
pub fn app(
    ctx: Context,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    app_with(ctx, ops::AppOptions::default())
}

/// [`app`] with the operations options: `GET /metrics` when configured on this port.
pub fn app_with(
    ctx: Context,
    options: ops::AppOptions,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let metrics = options.metrics;
    // Hash and compress the web client's files now rather than on the first request.
    web::assets::assets();
    App::new()
        .app_data(aweb::Data::new(ctx))
        .app_data(aweb::PayloadConfig::new(params::MAX_BODY_BYTES))
        .wrap(from_fn(ops::record_metrics))
        .wrap(from_fn(paths::refuse_nul))
        .wrap(from_fn(web::middleware::session_challenge))
        .wrap(from_fn(logging::log_request))
        .route("/health", aweb::get().to(ops::health))
        .route("/ready", aweb::get().to(ops::ready))
        .configure(move |config| {
            if let Some(export) = metrics {
                config
                    .app_data(aweb::Data::new(export))
                    .route("/metrics", aweb::get().to(ops::metrics));
            }
        })
        .service(
            aweb::scope("/api/v1")
                .configure(routes::configure)
                .default_service(aweb::to(fallback::not_found)),
        )
        .service(
            aweb::scope("/json")
                .wrap(from_fn(web::middleware::require_csrf))
                .configure(routes::configure)
                .default_service(aweb::to(fallback::not_found)),
        )
        .route(
            "/accounts/confirm_new_email/{token}",
            aweb::get().to(routes::settings::confirm_email),
        )
        .route(
            "/calls/bigbluebutton/join",
            aweb::get().to(routes::calls::join_bigbluebutton),
        )
        .route("/join/{key}/", aweb::get().to(routes::signup::show))
        .route("/join/{key}/", aweb::post().to(routes::signup::submit))
        .route("/join/{key}", aweb::get().to(routes::signup::show))
        .route("/join/{key}", aweb::post().to(routes::signup::submit))
        .route(
            "/user_uploads/temporary/{token}/{filename:.*}",
            aweb::get().to(routes::uploads::serve_temporary),
        )
        .route(
            "/user_uploads/thumbnail/{realm_id_str}/{filename:.*}",
            aweb::get().to(routes::uploads::serve_thumbnail),
        )
        .route(
            "/user_uploads/{realm_id_str}/{filename:.*}",
            aweb::get().to(routes::uploads::serve),
        )
        .route("/thumbnail", aweb::get().to(routes::uploads::thumbnail))
        .route(
            parley_actions::emoji_data::EMOJI_DATA_PATH,
            aweb::get().to(routes::server::emoji_data),
        )
        .route(
            "/user_avatars/{realm_id}/emoji/images/{file:.*}",
            aweb::get().to(routes::realm_emoji::image),
        )
        .route(
            "/user_avatars/{file}",
            aweb::get().to(routes::avatars::image),
        )
        .route(
            "/static/images/logo/parley-icon.svg",
            aweb::get().to(routes::server::icon),
        )
        .configure(web::configure)
        .default_service(aweb::to(fallback::not_found))
}
