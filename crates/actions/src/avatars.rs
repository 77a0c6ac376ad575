//! Uploaded avatars (`/users/me/avatar`): the image is kept in the file store under
//! `avatars/<user_id>` and served at `/user_avatars/<user_id>.png`, the URL every user record
//! already computes for `avatar_source` `U`.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::users::avatar_changed;
use crate::uploads::{blocking, stored_image, ServedFile};
use parley_domain::upload::{sniff_image, too_large, MAX_AVATAR_FILE_SIZE_MIB};
use parley_domain::user::{AvatarSource, User};
use parley_domain::RequestError;
use parley_storage::attachments::set_avatar;
use parley_storage::DbConn;

fn store_path(user: i64) -> String {
    format!("avatars/{user}")
}

/// `POST /users/me/avatar`: stores the caller's new avatar image; `avatar_source` becomes `U`
/// and `avatar_version` goes up. Everyone gets `realm_user` `update` with the new URL.
pub async fn do_upload_avatar(
    ctx: &Context,
    user: User,
    file_count: usize,
    bytes: Vec<u8>,
) -> ActionResult<String> {
    if file_count != 1 {
        return Err(RequestError::bad_request("You must upload exactly one avatar.").into());
    }
    if bytes.len() as u64 > MAX_AVATAR_FILE_SIZE_MIB * 1024 * 1024 {
        return Err(too_large(MAX_AVATAR_FILE_SIZE_MIB).into());
    }
    if sniff_image(&bytes).is_none() {
        return Err(RequestError::bad_request("Invalid image format").into());
    }
    let files = ctx.files.clone();
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        // This closure runs on a blocking thread; a failed write rolls the change back.
        files
            .put(&store_path(user.id.0), &bytes)
            .map_err(|e| ActionError::Internal(e.to_string()))?;
        let updated = changed(conn, &user, AvatarSource::Uploaded)?;
        events.push(avatar_changed(&ctx2, conn, &updated)?);
        Ok(avatar_url(&ctx2, &updated))
    })
    .await
}

/// Stores the new source with a bumped version; returns the user as they are now.
fn changed(conn: &mut DbConn, user: &User, source: AvatarSource) -> ActionResult<User> {
    let version = set_avatar(conn, user.id, source.code())?;
    Ok(User {
        avatar_source: source,
        avatar_version: version,
        ..user.clone()
    })
}

/// The avatar URL everyone sees for `user`.
fn avatar_url(ctx: &Context, user: &User) -> String {
    parley_wire::user::avatar_url(user, &ctx.realm.url, false).unwrap_or_default()
}

/// `DELETE /users/me/avatar`: back to the Gravatar of the caller's address (`G`), with a new
/// `avatar_version`; the stored image is removed. Everyone gets `realm_user` `update`.
pub async fn do_delete_avatar(ctx: &Context, user: User) -> ActionResult<()> {
    let id = user.id.0;
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let updated = changed(conn, &user, AvatarSource::Gravatar)?;
        events.push(avatar_changed(&ctx2, conn, &updated)?);
        Ok(())
    })
    .await?;
    blocking(&ctx.files, move |files| files.delete(&store_path(id))).await?;
    Ok(())
}

/// `GET /user_avatars/{user_id}.png` (or `{user_id}-medium.png`): an uploaded avatar, public as
/// in the reference.
pub async fn avatar_image(ctx: &Context, file: &str) -> ActionResult<ServedFile> {
    let not_found = || RequestError::bad_request("File not found").with_status(404);
    let stem = file.strip_suffix(".png").ok_or_else(not_found)?;
    let stem = stem.strip_suffix("-medium").unwrap_or(stem);
    let id: i64 = stem.parse().map_err(|_| not_found())?;
    Ok(stored_image(&ctx.files, store_path(id), file.to_owned())
        .await?
        .ok_or_else(not_found)?)
}
