//! Uploaded files (`/user_uploads`, `/attachments`): storing a file, deciding who may read it,
//! claiming it for the messages that link it, and what an edit detaches.
//!
//! A file is readable by its owner and by whoever may read a message that links it (a channel
//! message whose history they may read, or a direct message they are in): the message access
//! rules of [`crate::messages_read`] are reused, not repeated.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::file_store::FileStore;
use crate::messages_read::accessible_message;
use crate::notify::uploads::{attachment_changed, attachment_json, attachment_removed};
use crate::policy;
use crate::publish::Events;
use crate::time::now;
use parley_domain::upload::{
    content_type, is_valid_path_id, linked_path_ids, path_id, sanitize_filename, too_large,
    MAX_FILE_UPLOAD_SIZE_MIB,
};
use parley_domain::user::User;
use parley_domain::{MessageId, RequestError, UserId};
use parley_storage::attachments::{self, Attachment, NewAttachment};
use parley_storage::{realms, DbConn};
use rand::distributions::{Alphanumeric, DistString};
use rand::Rng;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::{Arc, OnceLock};

/// How long a temporary file URL stays valid, in seconds.
pub const TEMPORARY_URL_SECONDS: i64 = 60;

/// A file as it is served: bytes, type and the (sanitized) name to offer for download.
#[derive(Debug, Clone)]
pub struct ServedFile {
    /// The content.
    pub bytes: Vec<u8>,
    /// The MIME type.
    pub content_type: String,
    /// The file name.
    pub name: String,
}

/// What `POST /user_uploads` answers.
#[derive(Debug, Clone)]
pub struct Uploaded {
    /// `/user_uploads/<path_id>`.
    pub url: String,
    /// The stored file name.
    pub filename: String,
}

fn store_error(e: crate::file_store::FileStoreError) -> ActionError {
    ActionError::Internal(e.to_string())
}

/// Runs a file-store operation on the blocking pool.
pub(crate) async fn blocking<R: Send + 'static>(
    files: &Arc<dyn FileStore>,
    f: impl FnOnce(&dyn FileStore) -> Result<R, crate::file_store::FileStoreError> + Send + 'static,
) -> ActionResult<R> {
    let files = files.clone();
    tokio::task::spawn_blocking(move || f(files.as_ref()))
        .await
        .map_err(|e| ActionError::Internal(format!("file store task failed: {e}")))?
        .map_err(store_error)
}

/// A stored image (avatar, custom emoji) as served, its type read from its signature; None
/// when no such file is stored.
pub(crate) async fn stored_image(
    files: &Arc<dyn FileStore>,
    path: String,
    name: String,
) -> ActionResult<Option<ServedFile>> {
    let Some(bytes) = blocking(files, move |files| files.get(&path)).await? else {
        return Ok(None);
    };
    let content_type = parley_domain::upload::sniff_image(&bytes)
        .unwrap_or("application/octet-stream")
        .to_owned();
    Ok(Some(ServedFile {
        bytes,
        content_type,
        name,
    }))
}

/// The organization's ID (the first segment of every upload path).
pub(crate) fn realm_id(conn: &mut DbConn) -> ActionResult<i64> {
    Ok(realms::get(conn)?.map_or(1, |r| r.id))
}

fn file_not_found() -> ActionError {
    RequestError::bad_request("File not found")
        .with_status(404)
        .into()
}

fn not_authorized() -> ActionError {
    RequestError::bad_request("You are not authorized to view this file.")
        .with_status(403)
        .into()
}

fn invalid_attachment() -> ActionError {
    RequestError::bad_request("Invalid attachment").into()
}

/// The messages linking each attachment, as `(message id, date_sent)` pairs.
fn with_messages(conn: &mut DbConn, list: &[Attachment]) -> ActionResult<Vec<Value>> {
    let ids: Vec<i64> = list.iter().map(|a| a.id).collect();
    let links = attachments::messages_of(conn, &ids)?;
    Ok(list
        .iter()
        .map(|a| {
            let messages: Vec<(i64, i64)> = links
                .iter()
                .filter(|(att, _, _)| *att == a.id)
                .map(|(_, m, d)| (*m, *d))
                .collect();
            attachment_json(a, &messages)
        })
        .collect())
}

fn one_json(conn: &mut DbConn, attachment: &Attachment) -> ActionResult<Value> {
    Ok(with_messages(conn, std::slice::from_ref(attachment))?
        .pop()
        .unwrap_or(Value::Null))
}

/// `POST /user_uploads`: stores a file of the caller (already read, within the limit) and
/// records it; the owner's clients get `attachment` `add`.
pub async fn do_upload_file(
    ctx: &Context,
    user: User,
    filename: String,
    declared_type: Option<String>,
    bytes: Vec<u8>,
) -> ActionResult<Uploaded> {
    if bytes.len() as u64 > MAX_FILE_UPLOAD_SIZE_MIB * 1024 * 1024 {
        return Err(too_large(MAX_FILE_UPLOAD_SIZE_MIB).into());
    }
    let realm = ctx.db.run(realm_id).await?;
    let name = sanitize_filename(&filename);
    let (hex, random) = {
        let mut rng = rand::rngs::OsRng;
        let hex = format!("{:02x}", rng.gen::<u8>());
        let random = Alphanumeric.sample_string(&mut rng, 24);
        (hex, random)
    };
    let path = path_id(realm, &hex, &random, &name);
    let kind = content_type(declared_type.as_deref(), &name);
    let size = bytes.len() as i64;
    let stored_path = path.clone();
    blocking(&ctx.files, move |files| files.put(&stored_path, &bytes)).await?;
    let row_path = path.clone();
    let row_name = name.clone();
    let written = ctx
        .write(move |conn, events| {
            let attachment = attachments::insert(
                conn,
                &NewAttachment {
                    path_id: &row_path,
                    name: &row_name,
                    size,
                    content_type: &kind,
                    owner: user.id,
                    create_time: now(),
                },
            )?;
            let space = attachments::space_used(conn)?;
            let json = attachment_json(&attachment, &[]);
            events.push(attachment_changed(user.id, "add", json, space));
            Ok(())
        })
        .await;
    if let Err(e) = written {
        let orphan = path.clone();
        let _ = blocking(&ctx.files, move |files| files.delete(&orphan)).await;
        return Err(e);
    }
    Ok(Uploaded {
        url: format!("/user_uploads/{path}"),
        filename: name,
    })
}

/// Whether `user` may read `attachment`: they own it, or they may read a message linking it.
fn may_read(conn: &mut DbConn, user: &User, attachment: &Attachment) -> ActionResult<bool> {
    if attachment.owner_id == user.id.0 {
        return Ok(true);
    }
    let message_ids = attachments::message_ids(conn, attachment.id)?;
    if message_ids.is_empty() {
        return Ok(false);
    }
    let policy = policy::load(conn)?;
    for id in message_ids {
        if accessible_message(conn, &policy, user, MessageId(id))?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Finds the attachment at `path_id` and checks that `user` may read it: 404 when there is no
/// such file, 403 when there is one they may not read (as the reference answers).
async fn access_attachment(ctx: &Context, user: &User, path: &str) -> ActionResult<Attachment> {
    if !is_valid_path_id(path) {
        return Err(file_not_found());
    }
    let user = user.clone();
    let path = path.to_owned();
    ctx.db
        .run(move |conn| {
            let attachment = attachments::by_path(conn, &path)?.ok_or_else(file_not_found)?;
            if !may_read(conn, &user, &attachment)? {
                return Err(not_authorized());
            }
            Ok(attachment)
        })
        .await
}

async fn read_file(ctx: &Context, attachment: Attachment) -> ActionResult<ServedFile> {
    let path = attachment.path_id.clone();
    let bytes = blocking(&ctx.files, move |files| files.get(&path))
        .await?
        .ok_or_else(file_not_found)?;
    Ok(ServedFile {
        bytes,
        content_type: attachment.content_type,
        name: attachment.name,
    })
}

/// `GET /user_uploads/{realm_id}/{path...}`: the file at `path_id`, when `user` may read it.
pub async fn access_upload(ctx: &Context, user: &User, path_id: &str) -> ActionResult<ServedFile> {
    let attachment = access_attachment(ctx, user, path_id).await?;
    read_file(ctx, attachment).await
}

/// A key known only to this process, for signing temporary URLs.
fn url_key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(|| rand::rngs::OsRng.gen())
}

/// HMAC-SHA-256 of `message` under this process's key, hex-encoded.
fn sign(message: &str) -> String {
    let key = url_key();
    let mut inner = Sha256::new();
    inner.update(key.map(|b| b ^ 0x36));
    inner.update([0x36u8; 32]);
    inner.update(message.as_bytes());
    let mut outer = Sha256::new();
    outer.update(key.map(|b| b ^ 0x5c));
    outer.update([0x5cu8; 32]);
    outer.update(inner.finalize());
    outer
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn hex_encode(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02X}")).collect()
}

fn hex_decode(hex: &str) -> Option<String> {
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// `GET /api/v1/user_uploads/{realm_id}/{path...}`: a URL for the file that works without
/// authentication for [`TEMPORARY_URL_SECONDS`] (when `user` may read it now).
pub async fn temporary_url(ctx: &Context, user: &User, path_id: &str) -> ActionResult<String> {
    let attachment = access_attachment(ctx, user, path_id).await?;
    let payload = format!("{}:{}", attachment.path_id, now() + TEMPORARY_URL_SECONDS);
    let token = format!("{}:{}", hex_encode(&payload), sign(&payload));
    Ok(format!(
        "/user_uploads/temporary/{token}/{}",
        attachment.name
    ))
}

/// `GET /user_uploads/temporary/{token}/{filename}`: the file a temporary URL names, while it
/// is valid.
pub async fn access_temporary(ctx: &Context, token: &str) -> ActionResult<ServedFile> {
    let (payload_hex, signature) = token.split_once(':').ok_or_else(file_not_found)?;
    let payload = hex_decode(payload_hex).ok_or_else(file_not_found)?;
    let expected = sign(&payload);
    if !crate::secrets::api_keys_match(signature, &expected) {
        return Err(file_not_found());
    }
    let (path, expires) = payload.rsplit_once(':').ok_or_else(file_not_found)?;
    if expires.parse::<i64>().map_or(true, |e| e < now()) {
        return Err(file_not_found());
    }
    let path = path.to_owned();
    let attachment = ctx
        .db
        .run(move |conn| attachments::by_path(conn, &path)?.ok_or_else(file_not_found))
        .await?;
    read_file(ctx, attachment).await
}

/// Records that `message` links the uploads its `content` names, for those the sender owns or
/// may already read (resharing); each newly linked attachment's owner gets `attachment`
/// `update`. Called by sending and editing, inside their transaction.
pub fn claim_attachments(
    conn: &mut DbConn,
    events: &mut Events,
    sender: &User,
    realm_url: &str,
    message: MessageId,
    content: &str,
) -> ActionResult<()> {
    let paths = linked_path_ids(content, realm_url);
    if paths.is_empty() {
        return Ok(());
    }
    for attachment in attachments::by_paths(conn, &paths)? {
        if !may_read(conn, sender, &attachment)? {
            continue;
        }
        if attachments::link(conn, attachment.id, message)? {
            notify_update(conn, events, &attachment)?;
        }
    }
    Ok(())
}

fn notify_update(
    conn: &mut DbConn,
    events: &mut Events,
    attachment: &Attachment,
) -> ActionResult<()> {
    let json = one_json(conn, attachment)?;
    let space = attachments::space_used(conn)?;
    events.push(attachment_changed(
        UserId(attachment.owner_id),
        "update",
        json,
        space,
    ));
    Ok(())
}

/// After an edit set a message's content to `new_content` (`None`: the content did not
/// change): links the uploads it now names, unlinks those it no longer names, and returns the
/// editor's attachments that this left referenced by no message (`detached_uploads`).
pub fn update_claims_after_edit(
    conn: &mut DbConn,
    events: &mut Events,
    editor: &User,
    realm_url: &str,
    message: MessageId,
    new_content: Option<&str>,
) -> ActionResult<Vec<Value>> {
    let Some(content) = new_content else {
        return Ok(Vec::new());
    };
    let now_linked = linked_path_ids(content, realm_url);
    let mut detached = Vec::new();
    for attachment in attachments::of_message(conn, message)? {
        if now_linked.contains(&attachment.path_id) {
            continue;
        }
        attachments::unlink(conn, attachment.id, message)?;
        notify_update(conn, events, &attachment)?;
        if attachment.owner_id == editor.id.0
            && attachments::message_ids(conn, attachment.id)?.is_empty()
        {
            detached.push(attachment_json(&attachment, &[]));
        }
    }
    claim_attachments(conn, events, editor, realm_url, message, content)?;
    Ok(detached)
}

/// `GET /attachments`: the caller's attachments with the messages linking them, and the
/// organization's used upload space in bytes.
pub async fn get_attachments(ctx: &Context, user: User) -> ActionResult<(Vec<Value>, i64)> {
    ctx.db
        .run(move |conn| {
            let list = attachments::of_owner(conn, user.id)?;
            let json = with_messages(conn, &list)?;
            Ok((json, attachments::space_used(conn)?))
        })
        .await
}

/// `DELETE /attachments/{attachment_id}`: deletes an attachment of the caller and its file
/// (messages keep their now-broken links); "Invalid attachment" for anyone else's or unknown.
pub async fn do_delete_attachment(ctx: &Context, user: User, id: i64) -> ActionResult<()> {
    let path = ctx
        .write(move |conn, events| {
            let attachment = attachments::by_id(conn, id)?
                .filter(|a| a.owner_id == user.id.0)
                .ok_or_else(invalid_attachment)?;
            attachments::delete(conn, id)?;
            let space = attachments::space_used(conn)?;
            events.push(attachment_removed(user.id, id, space));
            Ok(attachment.path_id)
        })
        .await?;
    blocking(&ctx.files, move |files| files.delete(&path)).await?;
    Ok(())
}
