//! Custom emoji (`/realm/emoji`): adding one (an image in the file store), deactivating it,
//! listing them, and the lookups rendering, reactions and statuses use.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::uploads::realm_emoji_updated;
use crate::policy;
use crate::uploads::{realm_id, stored_image, ServedFile};
use parley_domain::reaction::EmojiRef;
use parley_domain::realm_emoji::{check_name, normalize_name, store_path};
use parley_domain::upload::{image_extension, sniff_image, too_large, MAX_EMOJI_FILE_SIZE_MIB};
use parley_domain::user::User;
use parley_domain::RequestError;
use parley_storage::realm_emoji::{self, RealmEmojiRow};
use parley_storage::DbConn;
use parley_wire::realm::RealmEmojiMap;

fn does_not_exist(name: &str) -> RequestError {
    RequestError::bad_request(format!("Emoji '{name}' does not exist")).with_status(404)
}

/// Every custom emoji keyed by ID, as the API shows them.
fn all_json(conn: &mut DbConn) -> ActionResult<RealmEmojiMap> {
    Ok(crate::present::realm::realm_emoji(conn)?)
}

/// `GET /realm/emoji`: every custom emoji, active or deactivated, keyed by ID.
pub async fn get_realm_emoji(ctx: &Context) -> ActionResult<RealmEmojiMap> {
    ctx.run(all_json).await
}

/// `POST /realm/emoji/{emoji_name}`: adds a custom emoji with this image. The name is checked
/// as the reference does; the caller must be in `can_add_custom_emoji_group`; an active emoji
/// of the same name is an error; only administrators may shadow a built-in emoji; the image
/// must decode. An animated emoji also gets a still image (its first frame, as PNG), which
/// clients show when animation is off. Everyone gets `realm_emoji` `update`.
pub async fn do_add_realm_emoji(
    ctx: &Context,
    user: User,
    raw_name: String,
    file_count: usize,
    bytes: Vec<u8>,
) -> ActionResult<()> {
    let name = normalize_name(&raw_name);
    check_name(&name)?;
    let bytes = std::sync::Arc::new(bytes);
    let decoded = decode_emoji(&bytes, file_count).await?;
    let files = ctx.files.clone();
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        if !policy
            .groups
            .setting_contains(&policy.realm.can_add_custom_emoji_group, &user)
        {
            return Err(RequestError::bad_request("Insufficient permission").into());
        }
        if realm_emoji::active_by_name(conn, &name)?.is_some() {
            return Err(
                RequestError::bad_request("A custom emoji with this name already exists.").into(),
            );
        }
        if file_count != 1 {
            return Err(RequestError::bad_request("You must upload exactly one file.").into());
        }
        if parley_markdown::emoji_code_for_name(&name).is_some() && !user.role.is_admin() {
            return Err(RequestError::bad_request(
                "Only administrators can override built-in emoji.",
            )
            .into());
        }
        if bytes.len() as u64 > MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024 {
            return Err(too_large(MAX_EMOJI_FILE_SIZE_MIB).into());
        }
        let kind =
            sniff_image(&bytes).ok_or_else(|| RequestError::bad_request("Invalid image format"))?;
        let still = decoded.clone().map_err(RequestError::bad_request)?;
        let realm = realm_id(conn)?;
        crate::realm_cache::changing();
        let id = realm_emoji::insert(conn, &name, still.is_some(), user.id)?;
        let file_name = format!("{id}.{}", image_extension(kind));
        crate::realm_cache::changing();
        realm_emoji::set_file_name(conn, id, &file_name)?;
        // This closure runs on a blocking thread; a failed write rolls the row back.
        let store = |path: String, data: &[u8]| {
            files
                .put(&path, data)
                .map_err(|e| crate::error::ActionError::Internal(e.to_string()))
        };
        store(store_path(realm, &file_name), &bytes)?;
        if let Some(still) = &still {
            store(store_path(realm, &still_file_name(id)), still)?;
        }
        events.push(realm_emoji_updated(all_json(conn)?));
        Ok(())
    })
    .await
}

/// Where an animated emoji's still image is kept, beside the emoji's own file.
fn still_file_name(id: i64) -> String {
    format!("still/{id}.png")
}

/// Decodes an emoji image before its transaction (image work never holds the database): the
/// still image of an animated emoji, `None` for a still emoji, or the reference's message
/// when the file does not decode. Nothing is decoded for requests that will fail anyway.
async fn decode_emoji(
    bytes: &std::sync::Arc<Vec<u8>>,
    file_count: usize,
) -> ActionResult<Result<Option<Vec<u8>>, String>> {
    let plausible = file_count == 1
        && bytes.len() as u64 <= MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024
        && sniff_image(bytes).is_some();
    if !plausible {
        return Ok(Ok(None));
    }
    let _permit = crate::images::ONE_AT_A_TIME
        .acquire()
        .await
        .map_err(|e| crate::error::ActionError::Internal(e.to_string()))?;
    let bytes = bytes.clone();
    tokio::task::spawn_blocking(move || {
        let undecodable = |_| "Could not decode image; did you upload an image file?".to_owned();
        match crate::images::probe_animated(&bytes).map_err(undecodable)? {
            true => crate::images::emoji_still(&bytes)
                .map(Some)
                .map_err(undecodable),
            false => Ok(None),
        }
    })
    .await
    .map_err(|e| crate::error::ActionError::Internal(format!("image task failed: {e}")))
}

/// `DELETE /realm/emoji/{emoji_name}`: deactivates an active custom emoji; its author or an
/// administrator may. Everyone gets `realm_emoji` `update`.
pub async fn do_remove_realm_emoji(ctx: &Context, user: User, name: String) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let emoji =
            realm_emoji::active_by_name(conn, &name)?.ok_or_else(|| does_not_exist(&name))?;
        if !user.role.is_admin() && emoji.author_id != Some(user.id.0) {
            return Err(RequestError::bad_request(
                "Must be an organization administrator or emoji author",
            )
            .into());
        }
        crate::realm_cache::changing();
        realm_emoji::deactivate(conn, emoji.id)?;
        events.push(realm_emoji_updated(all_json(conn)?));
        Ok(())
    })
    .await
}

/// `GET /user_avatars/{realm_id}/emoji/images/{file}` (and `still/{id}.png`, an animated
/// emoji's still image): a custom emoji's image, public as in the reference.
pub async fn emoji_image(ctx: &Context, realm: i64, file: &str) -> ActionResult<ServedFile> {
    let not_found = || RequestError::bad_request("File not found").with_status(404);
    let is_still = file.starts_with("still/");
    let valid = match file.strip_prefix("still/") {
        Some(still) => still
            .strip_suffix(".png")
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())),
        None => !file.is_empty() && !file.contains('/'),
    };
    if !valid {
        return Err(not_found().into());
    }
    let path = store_path(realm, file);
    let name = file.rsplit('/').next().unwrap_or(file).to_owned();
    if let Some(found) = stored_image(&ctx.files, path, name).await? {
        return Ok(found);
    }
    if !is_still {
        return Err(not_found().into());
    }
    // An animated emoji stored before stills were made: its own image stands in.
    let id: i64 = file
        .trim_start_matches("still/")
        .trim_end_matches(".png")
        .parse()
        .map_err(|_| not_found())?;
    let emoji = ctx
        .run(move |conn| Ok::<_, crate::error::ActionError>(realm_emoji::by_id(conn, id)?))
        .await?
        .filter(|e| e.is_animated)
        .ok_or_else(not_found)?;
    let path = store_path(realm, &emoji.file_name);
    Ok(stored_image(&ctx.files, path, emoji.file_name)
        .await?
        .ok_or_else(not_found)?)
}

/// The active custom emoji of this name, if any (a name alone in a reaction or status means
/// the custom emoji first, as in the reference).
pub fn active_by_name(conn: &mut DbConn, name: &str) -> ActionResult<Option<RealmEmojiRow>> {
    Ok(crate::realm_cache::active_emoji_by_name(conn, name)?)
}

/// Checks a `realm_emoji` reference (`code` is the emoji's ID) as the reference server does:
/// the emoji must exist and be active, and the name must be its name.
pub fn check_custom_emoji(conn: &mut DbConn, name: &str, code: &str) -> ActionResult<()> {
    let emoji = code
        .parse::<i64>()
        .ok()
        .map(|id| crate::realm_cache::emoji_by_id(conn, id))
        .transpose()?
        .flatten()
        .ok_or_else(|| RequestError::bad_request("Invalid custom emoji."))?;
    if emoji.name != name {
        return Err(RequestError::bad_request("Invalid custom emoji name.").into());
    }
    if emoji.deactivated {
        return Err(RequestError::bad_request("This custom emoji has been deactivated.").into());
    }
    Ok(())
}

/// A reaction naming a custom emoji, checked: `Some((name, code, "realm_emoji"))` when the
/// reaction is of type `realm_emoji`, or names an active custom emoji without type or code (a
/// name alone means the custom emoji first, as in the reference); `None` for other emoji.
pub fn custom_reaction(
    conn: &mut DbConn,
    emoji: &EmojiRef,
) -> ActionResult<Option<(String, String, String)>> {
    const KIND: &str = "realm_emoji";
    let Some(name) = emoji.emoji_name.clone() else {
        return Ok(None);
    };
    match (emoji.reaction_type.as_deref(), emoji.emoji_code.as_deref()) {
        (Some(KIND), Some(code)) => {
            check_custom_emoji(conn, &name, code)?;
            Ok(Some((name, code.to_owned(), KIND.to_owned())))
        }
        (Some(KIND), None) | (None, None) => match active_by_name(conn, &name)? {
            Some(found) => Ok(Some((name, found.id.to_string(), KIND.to_owned()))),
            None if emoji.reaction_type.is_some() => {
                Err(RequestError::bad_request(format!("Emoji '{name}' does not exist")).into())
            }
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

/// The namespace of a reaction sent without `reaction_type`: `realm_emoji` when it names an
/// active custom emoji by name alone, else `unicode_emoji`.
pub fn default_reaction_type(conn: &mut DbConn, emoji: &EmojiRef) -> ActionResult<String> {
    let custom = match (&emoji.emoji_name, &emoji.emoji_code) {
        (Some(name), None) => active_by_name(conn, name)?.is_some(),
        _ => false,
    };
    Ok(if custom {
        "realm_emoji"
    } else {
        "unicode_emoji"
    }
    .to_owned())
}

/// An emoji set that knows the organization's custom emoji besides another set's Unicode
/// emoji, for checking statuses.
pub struct EmojiWithCustom<'a> {
    unicode: &'a dyn parley_domain::user_status::EmojiSet,
    custom: Vec<RealmEmojiRow>,
}

impl<'a> EmojiWithCustom<'a> {
    /// Loads the custom emoji; Unicode questions go to `unicode`.
    pub fn load(
        conn: &mut DbConn,
        unicode: &'a dyn parley_domain::user_status::EmojiSet,
    ) -> ActionResult<Self> {
        Ok(EmojiWithCustom {
            unicode,
            custom: realm_emoji::all(conn)?,
        })
    }
}

impl parley_domain::user_status::EmojiSet for EmojiWithCustom<'_> {
    fn code_for_name(&self, name: &str) -> Option<String> {
        self.unicode.code_for_name(name)
    }

    fn is_code(&self, code: &str) -> bool {
        self.unicode.is_code(code)
    }

    fn custom_code_for_name(&self, name: &str) -> Option<String> {
        self.custom
            .iter()
            .find(|e| e.name == name && !e.deactivated)
            .map(|e| e.id.to_string())
    }

    fn custom_emoji(&self, code: &str) -> Option<(String, bool)> {
        self.custom
            .iter()
            .find(|e| e.id.to_string() == code)
            .map(|e| (e.name.clone(), e.deactivated))
    }
}
