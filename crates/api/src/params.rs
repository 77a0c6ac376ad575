//! The typed parameter layer. Every endpoint declares its parameters once, with the [`params!`]
//! macro, as a struct whose field names are the parameter names and whose types say how to parse
//! them. Parameters come from the query string and, for `POST`/`PATCH`/`DELETE`, from the body,
//! form-urlencoded or `multipart/form-data` (as zulip-js and `curl -F` send it; the reference
//! reads both on every endpoint); list, object and JSON-valued parameters are JSON text. Parameters that
//! the endpoint does not declare are reported in `ignored_parameters_unsupported`.
//!
//! Errors follow the reference server: a missing parameter is `REQUEST_VARIABLE_MISSING`, a value
//! of the wrong type or out of range is `BAD_REQUEST`; both carry `var_name`.

use crate::envelope::IgnoredParameters;
use crate::error::ApiError;
use actix_multipart::Multipart;
use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::http::{header, Method, StatusCode};
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use parley_domain::{limits, RequestError, Role, UserId};
use serde::de::DeserializeOwned;
use std::collections::HashSet;

/// The largest request body accepted. Parameters are text; 4 MiB leaves room for long messages
/// and large JSON lists while bounding memory per request.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// A request's raw parameters, and which of them the endpoint read.
#[derive(Debug, Default)]
pub struct ParamMap {
    entries: Vec<(String, String)>,
    used: HashSet<String>,
}

fn decode_component(raw: &[u8]) -> Result<String, RequestError> {
    let spaced: Vec<u8> = raw
        .iter()
        .map(|&b| if b == b'+' { b' ' } else { b })
        .collect();
    let bytes: Vec<u8> = percent_encoding::percent_decode(&spaced).collect();
    String::from_utf8(bytes)
        .map_err(|_| RequestError::bad_request("Request parameters are not valid UTF-8"))
}

impl ParamMap {
    /// Parses form-urlencoded text (a query string or a body) into this map; later values of a
    /// name replace earlier ones.
    pub fn add_form(&mut self, form: &[u8]) -> Result<(), RequestError> {
        for pair in form.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
            let (name, value) = match pair.iter().position(|&b| b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            self.set(decode_component(name)?, decode_component(value)?);
        }
        Ok(())
    }

    /// Sets `name` to `value`, replacing an earlier value of the same name.
    pub fn set(&mut self, name: String, value: String) {
        self.entries.retain(|(n, _)| *n != name);
        self.entries.push((name, value));
    }

    /// A map of these pairs, for tests and embedders.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        ParamMap {
            entries: pairs
                .into_iter()
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .collect(),
            used: HashSet::new(),
        }
    }

    /// The raw value of `name`, marking it as read.
    pub fn raw(&mut self, name: &str) -> Option<&str> {
        self.used.insert(name.to_owned());
        self.entries
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Reads and parses `name`; `T` is `Option<_>` for optional parameters.
    pub fn take<T: ParamSlot>(&mut self, name: &str) -> Result<T, RequestError> {
        T::take(self, name)
    }

    /// The names the endpoint never read, in request order.
    pub fn unused(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|(n, _)| !self.used.contains(n))
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// A type a single parameter's text parses into.
pub trait FromParam: Sized {
    /// Parses `raw`, the text of parameter `name`.
    fn from_param(name: &str, raw: &str) -> Result<Self, RequestError>;
}

/// How a declared field reads its parameter: `T` is required, `Option<T>` optional.
pub trait ParamSlot: Sized {
    /// Reads the parameter `name` out of `params`.
    fn take(params: &mut ParamMap, name: &str) -> Result<Self, RequestError>;
}

impl<T: FromParam> ParamSlot for T {
    fn take(params: &mut ParamMap, name: &str) -> Result<Self, RequestError> {
        match params.raw(name) {
            Some(raw) => T::from_param(name, raw),
            None => Err(RequestError::missing_param(name)),
        }
    }
}

impl<T: FromParam> ParamSlot for Option<T> {
    fn take(params: &mut ParamMap, name: &str) -> Result<Self, RequestError> {
        params
            .raw(name)
            .map(|raw| T::from_param(name, raw))
            .transpose()
    }
}

impl FromParam for String {
    fn from_param(name: &str, raw: &str) -> Result<Self, RequestError> {
        if raw.contains('\0') {
            return Err(RequestError::invalid_param(
                name,
                format!("{name} contains NULL (0x00) characters."),
            ));
        }
        Ok(raw.to_owned())
    }
}

impl FromParam for bool {
    fn from_param(name: &str, raw: &str) -> Result<Self, RequestError> {
        match raw.trim() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(RequestError::invalid_param(
                name,
                format!("{name} is not a boolean"),
            )),
        }
    }
}

impl FromParam for i64 {
    fn from_param(name: &str, raw: &str) -> Result<Self, RequestError> {
        raw.trim()
            .parse()
            .map_err(|_| RequestError::invalid_param(name, format!("{name} is not an integer")))
    }
}

impl FromParam for UserId {
    fn from_param(name: &str, raw: &str) -> Result<Self, RequestError> {
        i64::from_param(name, raw).map(UserId)
    }
}

impl FromParam for Role {
    fn from_param(name: &str, raw: &str) -> Result<Self, RequestError> {
        let code = i64::from_param(name, raw)?;
        Role::from_code(code)
            .ok_or_else(|| RequestError::invalid_param(name, format!("Invalid {name}")))
    }
}

/// A JSON-encoded parameter (lists, objects, JSON values).
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned> FromParam for Json<T> {
    fn from_param(name: &str, raw: &str) -> Result<Self, RequestError> {
        let value: serde_json::Value = serde_json::from_str(raw).map_err(|_| {
            RequestError::invalid_param(name, format!("Argument \"{name}\" is not valid JSON."))
        })?;
        if contains_nul(&value) {
            return Err(RequestError::invalid_param(
                name,
                format!("{name} contains NULL (0x00) characters."),
            ));
        }
        check_list_lengths(name, &value, true)?;
        serde_json::from_value(value)
            .map(Json)
            .map_err(|e| RequestError::invalid_param(name, format!("Invalid {name}: {e}")))
    }
}

/// Bounds every list in a JSON parameter: the value itself by its parameter's limit, lists
/// nested inside it by the general one (`parley_domain::limits`), so no request can ask for
/// unbounded work.
fn check_list_lengths(
    name: &str,
    value: &serde_json::Value,
    top: bool,
) -> Result<(), RequestError> {
    use serde_json::Value;
    match value {
        Value::Array(items) => {
            if top {
                limits::check_list(name, items.len())?;
            } else if items.len() > limits::MAX_LIST_ITEMS {
                return Err(limits::too_many(name, limits::MAX_LIST_ITEMS));
            }
            items
                .iter()
                .try_for_each(|item| check_list_lengths(name, item, false))
        }
        Value::Object(map) => map
            .values()
            .try_for_each(|item| check_list_lengths(name, item, false)),
        _ => Ok(()),
    }
}

/// Whether any string (or key) inside a JSON value holds a NUL, which no text column can store.
fn contains_nul(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(contains_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)),
        _ => false,
    }
}

/// Types built from a whole request's parameters; implemented by [`params!`].
pub trait FromParams: Sized {
    /// Reads every declared parameter out of `params`.
    fn from_params(params: &mut ParamMap) -> Result<Self, RequestError>;
}

/// Declares an endpoint's parameters as a struct. A field `name: T` is a required parameter,
/// `name: Option<T>` an optional one, and `name: T = default` an optional one with a default.
#[macro_export]
macro_rules! params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty $(= $default:expr)? ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        // The fields are the spec's parameters and are documented there.
        #[allow(missing_docs)]
        #[derive(Debug)]
        $vis struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::params::FromParams for $name {
            #[allow(unused_variables)]
            fn from_params(
                params: &mut $crate::params::ParamMap,
            ) -> Result<Self, parley_domain::RequestError> {
                Ok(Self {
                    $( $field: $crate::params!(@take params, $field, $ty $(, $default)?), )*
                })
            }
        }
    };
    (@take $params:ident, $field:ident, $ty:ty) => {
        $params.take::<$ty>(stringify!($field).trim_start_matches("r#"))?
    };
    (@take $params:ident, $field:ident, $ty:ty, $default:expr) => {
        $params
            .take::<Option<$ty>>(stringify!($field).trim_start_matches("r#"))?
            .unwrap_or_else(|| $default)
    };
}

/// The extractor that reads an endpoint's declared parameters from the request.
#[derive(Debug)]
pub struct Params<T>(pub T);

fn body_error(err: actix_web::Error) -> ApiError {
    if err.as_response_error().status_code() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError(
            RequestError::bad_request(format!(
                "Request body too large (the limit is {} bytes)",
                MAX_BODY_BYTES
            ))
            .with_status(413),
        )
    } else {
        ApiError(RequestError::bad_request("Malformed request body"))
    }
}

fn malformed_multipart(err: impl std::fmt::Display) -> ApiError {
    ApiError(RequestError::bad_request(format!(
        "Malformed multipart body: {err}"
    )))
}

/// Adds the text fields of a `multipart/form-data` body (already read whole, so the body limit
/// is the urlencoded one). File fields are skipped: the endpoints that take files read them
/// with their own reader.
async fn add_multipart(
    params: &mut ParamMap,
    req: &HttpRequest,
    bytes: Bytes,
) -> Result<(), ApiError> {
    let stream = futures_util::stream::once(async move { Ok::<_, PayloadError>(bytes) });
    let mut body = Multipart::new(req.headers(), stream);
    while let Some(field) = body.next().await {
        let mut field = field.map_err(malformed_multipart)?;
        let disposition = field.content_disposition();
        let Some(name) = disposition.and_then(|d| d.get_name()).map(str::to_owned) else {
            continue;
        };
        if disposition.and_then(|d| d.get_filename()).is_some() {
            continue;
        }
        let mut value = Vec::new();
        while let Some(chunk) = field.next().await {
            value.extend_from_slice(&chunk.map_err(malformed_multipart)?);
        }
        let value = String::from_utf8(value)
            .map_err(|_| RequestError::bad_request("Request parameters are not valid UTF-8"))?;
        params.set(name, value);
    }
    Ok(())
}

/// Reads query string and body into a [`ParamMap`].
async fn read_params(
    req: &HttpRequest,
    body: Option<impl std::future::Future<Output = Result<Bytes, actix_web::Error>>>,
) -> Result<ParamMap, ApiError> {
    let mut params = ParamMap::default();
    params.add_form(req.query_string().as_bytes())?;
    let Some(body) = body else {
        return Ok(params);
    };
    let bytes = body.await.map_err(body_error)?;
    if bytes.is_empty() {
        return Ok(params);
    }
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/x-www-form-urlencoded");
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "application/x-www-form-urlencoded" => params.add_form(&bytes)?,
        "multipart/form-data" => add_multipart(&mut params, req, bytes).await?,
        _ => {
            return Err(ApiError(RequestError::invalid_param(
                "Content-Type",
                format!("Unsupported Content-Type '{content_type}': send parameters form-urlencoded or as multipart/form-data"),
            )))
        }
    }
    Ok(params)
}

impl<T: FromParams + 'static> FromRequest for Params<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let body = (req.method() != Method::GET && req.method() != Method::HEAD)
            .then(|| Bytes::from_request(&req, payload));
        Box::pin(async move {
            let mut params = read_params(&req, body).await?;
            let value = T::from_params(&mut params)?;
            req.extensions_mut()
                .insert(IgnoredParameters(params.unused()));
            Ok(Params(value))
        })
    }
}

/// Parses a path segment as parameter `name`, with the same errors as any other parameter.
pub fn path_param<T: FromParam>(name: &str, raw: &str) -> Result<T, ApiError> {
    T::from_param(name, raw).map_err(ApiError)
}

#[cfg(test)]
mod tests {
    use super::*;

    params! {
        /// Parameters of a pretend endpoint.
        struct Example {
            name: String,
            count: i64 = 10,
            flag: Option<bool>,
            ids: Option<Json<Vec<i64>>>,
            r#type: Option<String>,
        }
    }

    fn parse(pairs: &[(&str, &str)]) -> Result<(Example, Vec<String>), RequestError> {
        let mut map = ParamMap::from_pairs(pairs.iter().copied());
        let value = Example::from_params(&mut map)?;
        Ok((value, map.unused()))
    }

    #[test]
    fn reads_declared_parameters_and_lists_the_rest() {
        let (e, ignored) = parse(&[
            ("name", "x"),
            ("flag", "true"),
            ("ids", "[1,2]"),
            ("type", "stream"),
            ("bogus", "1"),
        ])
        .unwrap();
        assert_eq!(e.name, "x");
        assert_eq!(e.count, 10);
        assert_eq!(e.flag, Some(true));
        assert_eq!(e.ids, Some(Json(vec![1, 2])));
        assert_eq!(e.r#type.as_deref(), Some("stream"));
        assert_eq!(ignored, vec!["bogus".to_owned()]);
    }

    #[test]
    fn missing_required_parameter_is_named() {
        let err = parse(&[]).unwrap_err();
        assert_eq!(err.code.as_str(), "REQUEST_VARIABLE_MISSING");
        assert_eq!(err.data["var_name"], "name");
    }

    #[test]
    fn wrong_types_are_bad_requests_naming_the_parameter() {
        for (pairs, var) in [
            (vec![("name", "x"), ("count", "ten")], "count"),
            (vec![("name", "x"), ("flag", "yes")], "flag"),
            (vec![("name", "x"), ("ids", "[1,")], "ids"),
            (vec![("name", "x"), ("ids", "{\"a\":1}")], "ids"),
            (vec![("name", "a\0b")], "name"),
            (vec![("name", "x"), ("ids", "[\"\\u0000\"]")], "ids"),
        ] {
            let err = parse(&pairs).unwrap_err();
            assert_eq!(err.code.as_str(), "BAD_REQUEST", "{pairs:?}");
            assert_eq!(err.data["var_name"], var, "{pairs:?}");
            assert_eq!(err.status, 400);
        }
    }

    #[test]
    fn form_decoding_handles_escapes_repeats_and_bad_utf8() {
        let mut map = ParamMap::default();
        map.add_form(b"a=1&b=hello+world%21&a=2&empty=&flag")
            .unwrap();
        assert_eq!(map.raw("a"), Some("2"));
        assert_eq!(map.raw("b"), Some("hello world!"));
        assert_eq!(map.raw("empty"), Some(""));
        assert_eq!(map.raw("flag"), Some(""));
        let mut map = ParamMap::default();
        assert!(map.add_form(b"a=%ff%fe").is_err());
    }

    #[test]
    fn roles_must_be_known_codes() {
        assert_eq!(
            Role::from_param("role", "200").unwrap(),
            Role::Administrator
        );
        assert_eq!(
            Role::from_param("role", "250").unwrap_err().data["var_name"],
            "role"
        );
    }
}
