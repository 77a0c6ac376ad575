//! The success envelope: `{"result":"success","msg":"", ...data}`, plus
//! `ignored_parameters_unsupported` when the request carried parameters the endpoint does not
//! know. The parameter layer records those on the request, so no handler has to remember them.

use actix_web::body::BoxBody;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, Responder};
use serde::Serialize;
use serde_json::{Map, Value};

/// Parameters of the current request that its endpoint did not read.
#[derive(Debug, Clone, Default)]
pub struct IgnoredParameters(pub Vec<String>);

/// A successful response's data fields.
#[derive(Debug, Default)]
pub struct Success(Map<String, Value>);

impl Success {
    /// A success with no data.
    pub fn empty() -> Self {
        Success(Map::new())
    }

    /// A success whose data are these fields, taken as they are (a large snapshot is not
    /// copied through serialization again).
    pub fn from_map(data: Map<String, Value>) -> Self {
        Success(data)
    }

    /// A success whose data are the fields of `data`, which must serialize to an object.
    pub fn from_fields(data: impl Serialize) -> Self {
        match serde_json::to_value(data) {
            Ok(Value::Object(map)) => Success(map),
            _ => Success(Map::new()),
        }
    }

    /// Adds one data field.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        self.0.insert(
            key.to_owned(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
        self
    }

    /// The envelope for a request that ignored these parameters.
    pub fn into_body(self, ignored: &[String]) -> Value {
        let mut body = self.0;
        body.insert("result".into(), "success".into());
        body.insert("msg".into(), "".into());
        if !ignored.is_empty() {
            body.insert("ignored_parameters_unsupported".into(), ignored.into());
        }
        Value::Object(body)
    }
}

impl Responder for Success {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse {
        let ignored = req
            .extensions()
            .get::<IgnoredParameters>()
            .map(|i| i.0.clone())
            .unwrap_or_default();
        HttpResponse::Ok().json(self.into_body(&ignored))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelope_merges_data_and_ignored_parameters() {
        let body = Success::empty().with("id", 7).into_body(&["foo".into()]);
        assert_eq!(
            body,
            json!({"result": "success", "msg": "", "id": 7, "ignored_parameters_unsupported": ["foo"]})
        );
        let body = Success::from_fields(json!({"a": 1})).into_body(&[]);
        assert_eq!(body, json!({"result": "success", "msg": "", "a": 1}));
    }
}
