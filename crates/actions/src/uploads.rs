//! Uploaded files (`/user_uploads`, `/attachments`): storing a file, deciding who may read it,
//! claiming it for the messages that link it, and what an edit detaches.
//!
//! A file is readable by its owner and by whoever may read a message that links it (a channel
//! message whose history they may read, or a direct message they are in): the message access
//! rules of [`crate::messages_read`] are reused, not repeated.

use crate::access::accessible_message;
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::file_store::{FileReader, FileStore, FileWriter};
use crate::image_previews::stored_thumbnails;
use crate::notify::uploads::{attachment_changed, attachment_removed};
use crate::policy;
use crate::present::realm::attachment as attachment_object;
use crate::publish::Events;
use crate::time::now;
use parley_domain::thumbnail::{is_accepted_type, parse_format, StoredThumbnail};
use parley_domain::upload::{
    content_type, is_valid_path_id, linked_path_ids, path_id, sanitize_filename, too_large,
    MAX_FILE_UPLOAD_SIZE_MIB,
};
use parley_domain::user::User;
use parley_domain::{MessageId, RequestError, UserId};
use parley_storage::attachments::{self, Attachment, NewAttachment};
use parley_storage::image_attachments::{self, ImageAttachment};
use parley_storage::DbConn;
use parley_wire::realm::Attachment as WireAttachment;
use rand::distributions::{Alphanumeric, DistString};
use rand::Rng;
use sha2::Sha256;
use std::sync::Arc;

/// How long a temporary file URL stays valid, in seconds.
pub const TEMPORARY_URL_SECONDS: i64 = 60;

/// A file as it is served: content, type and the (sanitized) name to offer for download.
#[derive(Debug)]
pub struct ServedFile {
    /// The content.
    pub content: FileContent,
    /// The MIME type.
    pub content_type: String,
    /// The file name.
    pub name: String,
}

/// The content of a served file: small files (thumbnails, avatars, emoji) at hand, uploads
/// read from the store piece by piece as they are sent ([`crate::file_store::pieces`]).
pub enum FileContent {
    /// The whole file.
    Bytes(Vec<u8>),
    /// The file being read.
    Reader(Box<dyn FileReader>),
}

impl std::fmt::Debug for FileContent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileContent::Bytes(bytes) => write!(f, "Bytes({} bytes)", bytes.len()),
            FileContent::Reader(reader) => write!(f, "Reader({} bytes)", reader.size()),
        }
    }
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
        content: FileContent::Bytes(bytes),
        content_type,
        name,
    }))
}

/// The organization's ID (the first segment of every upload path).
pub(crate) fn realm_id(conn: &mut DbConn) -> ActionResult<i64> {
    Ok(crate::present::realm::realm_id(conn)?)
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
fn with_messages(conn: &mut DbConn, list: &[Attachment]) -> ActionResult<Vec<WireAttachment>> {
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
            attachment_object(a, &messages)
        })
        .collect())
}

fn one_object(conn: &mut DbConn, attachment: &Attachment) -> ActionResult<WireAttachment> {
    Ok(with_messages(conn, std::slice::from_ref(attachment))?
        .pop()
        .unwrap_or_else(|| attachment_object(attachment, &[])))
}

/// Files are written to the store in pieces of about this many bytes.
const WRITE_CHUNK: usize = 1024 * 1024;

/// An upload being received (`POST /user_uploads`): its bytes go to the file store as they
/// arrive, so that memory stays bounded (about [`WRITE_CHUNK`]) whatever the file's size.
/// Dropping it unfinished leaves nothing behind.
pub struct IncomingUpload {
    user: User,
    name: String,
    kind: String,
    path: String,
    writer: Option<Box<dyn FileWriter>>,
    buffer: Vec<u8>,
    size: u64,
}

/// Starts receiving a file of `user` named `filename` with the declared MIME type.
pub async fn begin_upload(
    ctx: &Context,
    user: User,
    filename: &str,
    declared_type: Option<&str>,
) -> ActionResult<IncomingUpload> {
    let realm = ctx.run(realm_id).await?;
    let name = sanitize_filename(filename);
    let (hex, random) = {
        let mut rng = rand::rngs::OsRng;
        let hex = format!("{:02x}", rng.gen::<u8>());
        let random = Alphanumeric.sample_string(&mut rng, 24);
        (hex, random)
    };
    let path = path_id(realm, &hex, &random, &name);
    let kind = content_type(declared_type, &name);
    let target = path.clone();
    let writer = blocking(&ctx.files, move |files| files.create(&target)).await?;
    Ok(IncomingUpload {
        user,
        name,
        kind,
        path,
        writer: Some(writer),
        buffer: Vec::with_capacity(WRITE_CHUNK),
        size: 0,
    })
}

impl IncomingUpload {
    /// Takes the next piece of the file (of any size: it is copied on in pieces of at most
    /// [`WRITE_CHUNK`]); fails once the file passes the size limit.
    pub async fn write(&mut self, bytes: &[u8]) -> ActionResult<()> {
        self.size += bytes.len() as u64;
        if self.size > MAX_FILE_UPLOAD_SIZE_MIB * 1024 * 1024 {
            return Err(too_large(MAX_FILE_UPLOAD_SIZE_MIB).into());
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = WRITE_CHUNK - self.buffer.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.buffer.extend_from_slice(now);
            rest = later;
            if self.buffer.len() >= WRITE_CHUNK {
                self.flush().await?;
            }
        }
        Ok(())
    }

    /// Writes the buffered bytes to the store (on the blocking pool).
    async fn flush(&mut self) -> ActionResult<()> {
        let mut writer = self.writer.take().ok_or_else(writer_gone)?;
        let buffer = std::mem::take(&mut self.buffer);
        let (writer, mut buffer) = tokio::task::spawn_blocking(move || {
            let written = writer.write(&buffer);
            (written.map(|()| writer), buffer)
        })
        .await
        .map_err(|e| ActionError::Internal(format!("file store task failed: {e}")))?;
        self.writer = Some(writer.map_err(store_error)?);
        buffer.clear();
        self.buffer = buffer;
        Ok(())
    }

    /// Completes the upload: the file becomes visible, images get their thumbnails, and the
    /// attachment is recorded; the owner's clients get `attachment` `add`.
    pub async fn finish(mut self, ctx: &Context) -> ActionResult<Uploaded> {
        self.flush().await?;
        let writer = self.writer.take().ok_or_else(writer_gone)?;
        tokio::task::spawn_blocking(move || writer.finish())
            .await
            .map_err(|e| ActionError::Internal(format!("file store task failed: {e}")))?
            .map_err(store_error)?;
        let IncomingUpload {
            user,
            name,
            kind,
            path,
            size,
            ..
        } = self;
        let image = thumbnail_upload(ctx, &path, &kind).await;
        let recorded = record_upload(ctx, &user, &path, &name, &kind, size as i64, &image).await;
        if let Err(e) = recorded {
            let mut orphans = vec![path.clone()];
            if let Some(image) = &image {
                orphans.extend(
                    image
                        .thumbnails
                        .iter()
                        .map(|t| thumbnail_store_path(&path, t)),
                );
            }
            let _ = blocking(&ctx.files, move |files| {
                orphans.iter().try_for_each(|p| files.delete(p).map(|_| ()))
            })
            .await;
            return Err(e);
        }
        Ok(Uploaded {
            url: format!("/user_uploads/{path}"),
            filename: name,
        })
    }
}

fn writer_gone() -> ActionError {
    ActionError::Internal("the upload was already finished".to_owned())
}

/// `POST /user_uploads` with the whole file at hand: the same as streaming it through
/// [`begin_upload`].
pub async fn do_upload_file(
    ctx: &Context,
    user: User,
    filename: String,
    declared_type: Option<String>,
    bytes: Vec<u8>,
) -> ActionResult<Uploaded> {
    let mut upload = begin_upload(ctx, user, &filename, declared_type.as_deref()).await?;
    upload.write(&bytes).await?;
    upload.finish(ctx).await
}

/// What thumbnailing found out about an uploaded image.
struct ImageInfo {
    width: u32,
    height: u32,
    frames: u32,
    thumbnails: Vec<StoredThumbnail>,
}

fn thumbnail_store_path(path: &str, thumbnail: &StoredThumbnail) -> String {
    format!("thumbnail/{path}/{}", thumbnail.name)
}

/// Makes and stores the thumbnails of the upload at `path` when its declared type is an image
/// type Parley thumbnails and its bytes decode as such; `None` otherwise (the file is then an
/// ordinary attachment, shown without a preview, as in the reference).
async fn thumbnail_upload(ctx: &Context, path: &str, kind: &str) -> Option<ImageInfo> {
    if !is_accepted_type(kind) {
        return None;
    }
    // One image at a time: decoding is where memory goes.
    let _permit = crate::images::ONE_AT_A_TIME.acquire().await.ok()?;
    let files = ctx.files.clone();
    let path = path.to_owned();
    let kind = kind.to_owned();
    let made = tokio::task::spawn_blocking(move || -> Result<ImageInfo, String> {
        let bytes = files
            .get(&path)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "the upload vanished".to_owned())?;
        let made = crate::images::make_thumbnails(&bytes, &kind).map_err(|e| e.to_string())?;
        drop(bytes);
        let mut thumbnails: Vec<StoredThumbnail> = Vec::new();
        for (_, stored, data) in made.files {
            if let Err(e) = files.put(&thumbnail_store_path(&path, &stored), &data) {
                // Leave no partial set behind.
                for written in &thumbnails {
                    let _ = files.delete(&thumbnail_store_path(&path, written));
                }
                return Err(e.to_string());
            }
            thumbnails.push(stored);
        }
        Ok(ImageInfo {
            width: made.width,
            height: made.height,
            frames: made.frames,
            thumbnails,
        })
    })
    .await;
    match made {
        Ok(Ok(info)) => Some(info),
        Ok(Err(why)) => {
            tracing::info!(%why, "upload not thumbnailed");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "thumbnailing failed");
            None
        }
    }
}

/// Records an uploaded file (and its image row) in one transaction.
async fn record_upload(
    ctx: &Context,
    user: &User,
    path: &str,
    name: &str,
    kind: &str,
    size: i64,
    image: &Option<ImageInfo>,
) -> ActionResult<()> {
    let owner = user.id;
    let (path, name, kind) = (path.to_owned(), name.to_owned(), kind.to_owned());
    let image = image.as_ref().map(|i| {
        (
            i.width as i32,
            i.height as i32,
            i.frames as i32,
            serde_json::to_string(&i.thumbnails).unwrap_or_else(|_| "[]".to_owned()),
        )
    });
    ctx.write(move |conn, events| {
        let attachment = attachments::insert(
            conn,
            &NewAttachment {
                path_id: &path,
                name: &name,
                size,
                content_type: &kind,
                owner,
                create_time: now(),
            },
        )?;
        if let Some((width, height, frames, thumbnails)) = image {
            image_attachments::insert(
                conn,
                &ImageAttachment {
                    attachment_id: attachment.id,
                    original_width_px: width,
                    original_height_px: height,
                    frames,
                    thumbnails,
                },
            )?;
        }
        let space = attachments::space_used(conn)?;
        let object = attachment_object(&attachment, &[]);
        events.push(attachment_changed(owner, true, object, space));
        Ok(())
    })
    .await
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
    ctx.run(move |conn| {
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
    let reader = blocking(&ctx.files, move |files| files.open(&path))
        .await?
        .ok_or_else(file_not_found)?;
    Ok(ServedFile {
        content: FileContent::Reader(reader),
        content_type: attachment.content_type,
        name: attachment.name,
    })
}

/// `GET /user_uploads/{realm_id}/{path...}`: the file at `path_id`, when `user` may read it.
pub async fn access_upload(ctx: &Context, user: &User, path_id: &str) -> ActionResult<ServedFile> {
    let attachment = access_attachment(ctx, user, path_id).await?;
    read_file(ctx, attachment).await
}

/// `GET /user_uploads/thumbnail/{realm_id}/{path...}/{format}`: a thumbnail of the image at
/// `path_id`, for whoever may read the image itself. A still image asked for in an animated
/// format gets its still thumbnail of that size; unknown formats are not found.
pub async fn access_thumbnail(
    ctx: &Context,
    user: &User,
    path_id: &str,
    format_name: &str,
) -> ActionResult<ServedFile> {
    let attachment = access_attachment(ctx, user, path_id).await?;
    let format = parse_format(format_name).ok_or_else(file_not_found)?;
    let id = attachment.id;
    let image = ctx
        .run(move |conn| Ok::<_, ActionError>(image_attachments::of_attachment(conn, id)?))
        .await?
        .ok_or_else(file_not_found)?;
    let stored = stored_thumbnails(&image);
    let still = {
        let mut still = format;
        still.animated = false;
        still.to_string()
    };
    let thumbnail = stored
        .iter()
        .find(|t| t.name == format.to_string())
        .or_else(|| stored.iter().find(|t| t.name == still))
        .ok_or_else(file_not_found)?
        .clone();
    let path = thumbnail_store_path(&attachment.path_id, &thumbnail);
    let bytes = blocking(&ctx.files, move |files| files.get(&path))
        .await?
        .ok_or_else(file_not_found)?;
    Ok(ServedFile {
        content: FileContent::Bytes(bytes),
        content_type: thumbnail.content_type,
        name: thumbnail.name,
    })
}

/// Where `GET /thumbnail` sends a client.
#[derive(Debug)]
pub enum LegacyThumbnail {
    /// An uploaded file the caller may read, served as it is.
    File(ServedFile),
    /// An image elsewhere: a redirect to it (through the image proxy when one is configured).
    Redirect(String),
}

/// `GET /thumbnail?url=...&size=...`, the thumbnail URL of image previews of links: uploads
/// are served under the usual access rules; other http(s) images redirect to their address
/// (through the camo proxy when one is configured), as the reference's endpoint does.
pub async fn legacy_thumbnail(
    ctx: &Context,
    user: &User,
    url: &str,
    size: &str,
) -> ActionResult<LegacyThumbnail> {
    if !matches!(size, "thumbnail" | "full") {
        return Err(RequestError::bad_request("Invalid size.")
            .with_status(403)
            .into());
    }
    let local = url.strip_prefix(&ctx.realm.url).unwrap_or(url);
    if let Some(path_id) = local.trim_start_matches('/').strip_prefix("user_uploads/") {
        return Ok(LegacyThumbnail::File(
            access_upload(ctx, user, path_id).await?,
        ));
    }
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://"))
        || url.contains(['\r', '\n'])
    {
        return Err(not_authorized());
    }
    Ok(LegacyThumbnail::Redirect(match &ctx.camo {
        Some(camo) => camo.url(url),
        None => url.to_owned(),
    }))
}

/// The key that signs temporary URLs, kept in the database (made on first use), so that URLs
/// handed out before a restart still work after it.
async fn url_key(ctx: &Context) -> ActionResult<Vec<u8>> {
    let stored = ctx
        .run(|conn| -> ActionResult<_> {
            Ok(parley_storage::realms::stored_url_signing_key(conn)?)
        })
        .await?;
    let text = match stored {
        Some(key) => key,
        None => {
            let generated = hex::encode(rand::rngs::OsRng.gen::<[u8; 32]>());
            ctx.transaction(move |conn| -> ActionResult<_> {
                Ok(parley_storage::realms::url_signing_key(conn, &generated)?)
            })
            .await?
        }
    };
    hex::decode(text.trim())
        .map_err(|_| ActionError::Internal("the stored URL signing key is not hex".into()))
}

type HmacSha256 = hmac::Hmac<Sha256>;

/// HMAC-SHA-256 of `message` under `key`.
fn mac(key: &[u8], message: &str) -> HmacSha256 {
    use hmac::Mac;
    // HMAC takes keys of any length.
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(message.as_bytes());
    mac
}

/// `GET /api/v1/user_uploads/{realm_id}/{path...}`: a URL for the file that works without
/// authentication for [`TEMPORARY_URL_SECONDS`] (when `user` may read it now).
pub async fn temporary_url(ctx: &Context, user: &User, path_id: &str) -> ActionResult<String> {
    let attachment = access_attachment(ctx, user, path_id).await?;
    let payload = format!("{}:{}", attachment.path_id, now() + TEMPORARY_URL_SECONDS);
    let key = url_key(ctx).await?;
    let signature = {
        use hmac::Mac;
        hex::encode(mac(&key, &payload).finalize().into_bytes())
    };
    let token = format!("{}:{}", hex::encode_upper(&payload), signature);
    Ok(format!(
        "/user_uploads/temporary/{token}/{}",
        attachment.name
    ))
}

/// `GET /user_uploads/temporary/{token}/{filename}`: the file a temporary URL names, while it
/// is valid.
pub async fn access_temporary(ctx: &Context, token: &str) -> ActionResult<ServedFile> {
    let (payload_hex, signature) = token.split_once(':').ok_or_else(file_not_found)?;
    let payload = hex::decode(payload_hex)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(file_not_found)?;
    let signature = hex::decode(signature).map_err(|_| file_not_found())?;
    let key = url_key(ctx).await?;
    {
        use hmac::Mac;
        // Compared in constant time.
        mac(&key, &payload)
            .verify_slice(&signature)
            .map_err(|_| file_not_found())?;
    }
    let (path, expires) = payload.rsplit_once(':').ok_or_else(file_not_found)?;
    if expires.parse::<i64>().map_or(true, |e| e < now()) {
        return Err(file_not_found());
    }
    let path = path.to_owned();
    let attachment = ctx
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
    let object = one_object(conn, attachment)?;
    let space = attachments::space_used(conn)?;
    events.push(attachment_changed(
        UserId(attachment.owner_id),
        false,
        object,
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
) -> ActionResult<Vec<WireAttachment>> {
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
            detached.push(attachment_object(&attachment, &[]));
        }
    }
    claim_attachments(conn, events, editor, realm_url, message, content)?;
    Ok(detached)
}

/// `GET /attachments`: the caller's attachments with the messages linking them, and the
/// organization's used upload space in bytes.
pub async fn get_attachments(
    ctx: &Context,
    user: User,
) -> ActionResult<(Vec<WireAttachment>, i64)> {
    ctx.run(move |conn| {
        let list = attachments::of_owner(conn, user.id)?;
        let json = with_messages(conn, &list)?;
        Ok((json, attachments::space_used(conn)?))
    })
    .await
}

/// `DELETE /attachments/{attachment_id}`: deletes an attachment of the caller and its file
/// (messages keep their now-broken links); "Invalid attachment" for anyone else's or unknown.
pub async fn do_delete_attachment(ctx: &Context, user: User, id: i64) -> ActionResult<()> {
    let paths = ctx
        .write(move |conn, events| {
            let attachment = attachments::by_id(conn, id)?
                .filter(|a| a.owner_id == user.id.0)
                .ok_or_else(invalid_attachment)?;
            delete_row(conn, events, &attachment)
        })
        .await?;
    delete_files(ctx, paths).await
}

/// Deletes an attachment's row (and image row) inside a transaction, tells its owner, and
/// returns the store paths of its file and thumbnails, to delete after the commit.
fn delete_row(
    conn: &mut DbConn,
    events: &mut Events,
    attachment: &Attachment,
) -> ActionResult<Vec<String>> {
    let mut paths = vec![attachment.path_id.clone()];
    if let Some(image) = image_attachments::of_attachment(conn, attachment.id)? {
        paths.extend(
            stored_thumbnails(&image)
                .iter()
                .map(|t| thumbnail_store_path(&attachment.path_id, t)),
        );
    }
    // Deleted by another process meanwhile (two servers cleaning up at once): its files and
    // its event are that one's.
    if !attachments::delete(conn, attachment.id)? {
        return Ok(Vec::new());
    }
    let space = attachments::space_used(conn)?;
    events.push(attachment_removed(
        UserId(attachment.owner_id),
        attachment.id,
        space,
    ));
    Ok(paths)
}

async fn delete_files(ctx: &Context, paths: Vec<String>) -> ActionResult<()> {
    blocking(&ctx.files, move |files| {
        paths.iter().try_for_each(|p| files.delete(p).map(|_| ()))
    })
    .await
}

/// How many unclaimed uploads one pass of [`delete_unclaimed_uploads`] looks at per batch.
const UNCLAIMED_BATCH: i64 = 100;

/// Deletes the uploads made before `cutoff` (Unix seconds) that no message links (the
/// reference's `delete_old_unclaimed_attachments`): their rows, files and thumbnails. Each
/// owner's clients get `attachment` `remove`. Returns how many were deleted. An upload that a
/// message claims while this runs is kept: the check and the delete share one transaction.
pub async fn delete_unclaimed_uploads(ctx: &Context, cutoff: i64) -> ActionResult<usize> {
    let mut deleted = 0;
    loop {
        let batch = ctx
            .run(move |conn| {
                Ok::<_, ActionError>(attachments::unclaimed_before(
                    conn,
                    cutoff,
                    UNCLAIMED_BATCH,
                )?)
            })
            .await?;
        if batch.is_empty() {
            return Ok(deleted);
        }
        let full = batch.len() as i64 == UNCLAIMED_BATCH;
        for attachment in batch {
            let paths = ctx
                .write(move |conn, events| {
                    if !attachments::message_ids(conn, attachment.id)?.is_empty() {
                        return Ok(Vec::new());
                    }
                    delete_row(conn, events, &attachment)
                })
                .await?;
            if !paths.is_empty() {
                deleted += 1;
                delete_files(ctx, paths).await?;
            }
        }
        if !full {
            return Ok(deleted);
        }
    }
}

/// Runs [`delete_unclaimed_uploads`] every `interval` (first one `interval` after start),
/// deleting uploads no message has linked for `max_age`. Failures are logged and retried at
/// the next round.
pub fn spawn_unclaimed_cleanup(
    ctx: Context,
    max_age: std::time::Duration,
    interval: std::time::Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        loop {
            ticker.tick().await;
            let age = i64::try_from(max_age.as_secs()).unwrap_or(i64::MAX);
            match delete_unclaimed_uploads(&ctx, now().saturating_sub(age)).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "deleted unclaimed uploads"),
                Err(e) => tracing::warn!(error = %e, "cannot delete unclaimed uploads"),
            }
        }
    })
}
