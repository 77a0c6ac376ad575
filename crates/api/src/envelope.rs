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

/// A successful response's data fields: JSON values, and parts already written as JSON text
/// (a register snapshot's large parts, or a typed answer's members), which are copied into the
/// body as they are.
#[derive(Debug, Default)]
pub struct Success(Map<String, Value>, Vec<(String, String)>, String);

impl Success {
    /// A success with no data.
    pub fn empty() -> Self {
        Success::default()
    }

    /// A success whose data are a register snapshot's parts, taken as they are.
    pub fn from_snapshot(snapshot: parley_actions::register::Snapshot) -> Self {
        let (fields, written) = snapshot.into_parts();
        Success(fields, written, String::new())
    }

    /// A success whose data are the members of `data`, written as JSON text at once (no
    /// generic JSON tree in between, for large answers); `data` must serialize to an object.
    pub fn written(data: impl Serialize) -> Self {
        let text = serde_json::to_string(&data).unwrap_or_default();
        let members = text
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or_default();
        Success(Map::new(), Vec::new(), members.to_owned())
    }

    /// A success whose data are the fields of `data`, which must serialize to an object.
    pub fn from_fields(data: impl Serialize) -> Self {
        match serde_json::to_value(data) {
            Ok(Value::Object(map)) => Success(map, Vec::new(), String::new()),
            _ => Success::default(),
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

    /// The envelope for a request that ignored these parameters, as JSON text: the values
    /// written, then the parts written already.
    pub fn into_body(self, ignored: &[String]) -> Vec<u8> {
        let Success(mut body, written, members) = self;
        body.insert("result".into(), "success".into());
        body.insert("msg".into(), "".into());
        if !ignored.is_empty() {
            body.insert("ignored_parameters_unsupported".into(), ignored.into());
        }
        let mut text = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
        if written.is_empty() && members.is_empty() {
            return text;
        }
        text.pop(); // the closing brace; `result` and `msg` are always before it
        if !members.is_empty() {
            text.push(b',');
            text.extend(members.into_bytes());
        }
        for (key, part) in written {
            text.push(b',');
            text.extend(serde_json::to_vec(&key).unwrap_or_default());
            text.push(b':');
            text.extend(part.into_bytes());
        }
        text.push(b'}');
        text
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
        HttpResponse::Ok()
            .content_type(actix_web::http::header::ContentType::json())
            .body(self.into_body(&ignored))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(body: Vec<u8>) -> Value {
        serde_json::from_slice(&body).unwrap()
    }

    #[test]
    fn envelope_merges_data_and_ignored_parameters() {
        let body = Success::empty().with("id", 7).into_body(&["foo".into()]);
        assert_eq!(
            parsed(body),
            json!({"result": "success", "msg": "", "id": 7, "ignored_parameters_unsupported": ["foo"]})
        );
        let body = Success::from_fields(json!({"a": 1})).into_body(&[]);
        assert_eq!(
            parsed(body),
            json!({"result": "success", "msg": "", "a": 1})
        );
    }

    #[test]
    fn envelope_copies_parts_written_already() {
        let success = Success(
            Map::from_iter([("a".to_owned(), json!(1))]),
            vec![("users".to_owned(), r#"[{"id":1,"name":"a\"b"}]"#.to_owned())],
            String::new(),
        );
        assert_eq!(
            parsed(success.into_body(&["x".into()])),
            json!({"result": "success", "msg": "", "a": 1, "users": [{"id": 1, "name": "a\"b"}],
                   "ignored_parameters_unsupported": ["x"]})
        );
    }

    #[test]
    fn envelope_takes_a_typed_answer_written_at_once() {
        #[derive(Serialize)]
        struct Page {
            anchor: i64,
            messages: Vec<&'static str>,
        }
        let page = Page {
            anchor: 3,
            messages: vec!["a}", "{b"],
        };
        assert_eq!(
            parsed(
                Success::written(page)
                    .with("id", 1)
                    .into_body(&["x".into()])
            ),
            json!({"result": "success", "msg": "", "anchor": 3, "messages": ["a}", "{b"], "id": 1,
                   "ignored_parameters_unsupported": ["x"]})
        );
        assert_eq!(
            parsed(Success::written(json!({})).into_body(&[])),
            json!({"result": "success", "msg": ""})
        );
    }
}
