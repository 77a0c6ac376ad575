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

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::from_fn;
use actix_web::{web, App};
use parley_actions::Context;

/// The whole application: the API under `/api/v1`, the static logo, and JSON 404s everywhere
/// else. The server binary and the tests both serve exactly this.
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
    App::new()
        .app_data(web::Data::new(ctx))
        .app_data(web::PayloadConfig::new(params::MAX_BODY_BYTES))
        .wrap(from_fn(ops::record_metrics))
        .wrap(from_fn(paths::refuse_nul))
        .wrap(from_fn(logging::log_request))
        .route("/health", web::get().to(ops::health))
        .route("/ready", web::get().to(ops::ready))
        .configure(move |config| {
            if let Some(export) = metrics {
                config
                    .app_data(web::Data::new(export))
                    .route("/metrics", web::get().to(ops::metrics));
            }
        })
        .service(
            web::scope("/api/v1")
                .configure(routes::configure)
                .default_service(web::to(fallback::not_found)),
        )
        .route(
            "/accounts/confirm_new_email/{token}",
            web::get().to(routes::settings::confirm_email),
        )
        .route(
            "/calls/bigbluebutton/join",
            web::get().to(routes::calls::join_bigbluebutton),
        )
        .route("/join/{key}/", web::get().to(routes::signup::show))
        .route("/join/{key}/", web::post().to(routes::signup::submit))
        .route("/join/{key}", web::get().to(routes::signup::show))
        .route("/join/{key}", web::post().to(routes::signup::submit))
        .route(
            "/user_uploads/temporary/{token}/{filename:.*}",
            web::get().to(routes::uploads::serve_temporary),
        )
        .route(
            "/user_uploads/thumbnail/{realm_id_str}/{filename:.*}",
            web::get().to(routes::uploads::serve_thumbnail),
        )
        .route(
            "/user_uploads/{realm_id_str}/{filename:.*}",
            web::get().to(routes::uploads::serve),
        )
        .route("/thumbnail", web::get().to(routes::uploads::thumbnail))
        .route(
            parley_actions::emoji_data::EMOJI_DATA_PATH,
            web::get().to(routes::server::emoji_data),
        )
        .route(
            "/user_avatars/{realm_id}/emoji/images/{file:.*}",
            web::get().to(routes::realm_emoji::image),
        )
        .route(
            "/user_avatars/{file}",
            web::get().to(routes::avatars::image),
        )
        .route(
            "/static/images/logo/parley-icon.svg",
            web::get().to(routes::server::icon),
        )
        .default_service(web::to(fallback::not_found))
}
