//! The Unicode emoji table clients download: the mobile app reads `server_emoji_data_url` from
//! `POST /register` and fetches `{"code_to_names": {...}}` from it to offer emoji by name.

use std::sync::OnceLock;

/// Where the table is served, relative to the server's URL. The reference puts a content hash
/// in the name; Parley's table changes only with the binary, so the path names the version.
pub const EMOJI_DATA_PATH: &str = "/static/generated/emoji/emoji_api.json";

/// The table as JSON text, built once.
pub fn server_emoji_data() -> &'static str {
    static DATA: OnceLock<String> = OnceLock::new();
    DATA.get_or_init(|| {
        let table = serde_json::json!({ "code_to_names": parley_markdown::emoji_code_to_names() });
        table.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_canonical_name_first() {
        let data: serde_json::Value = serde_json::from_str(server_emoji_data()).unwrap();
        let table = data["code_to_names"].as_object().unwrap();
        assert!(table.len() > 1000, "{} codes", table.len());
        assert_eq!(table["1f44d"][0], "+1");
        let thumbs: Vec<&str> = table["1f44d"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(thumbs.contains(&"thumbs_up"), "{thumbs:?}");
        for (code, names) in table {
            let first = names[0].as_str().unwrap();
            assert_eq!(
                parley_markdown::emoji_code_for_name(first).as_deref(),
                Some(code.as_str())
            );
        }
    }
}
