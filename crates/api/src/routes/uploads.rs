//! Uploaded files: `POST /user_uploads` (streamed to the store), reading them back
//! (`/user_uploads/...`, also outside `/api/v1`, where message links point), their thumbnails
//! (`/user_uploads/thumbnail/...`, `/thumbnail`), temporary URLs and `/attachments`. Also the
//! multipart reader the emoji and avatar uploads share.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::{ApiError, ApiResult};
use crate::params;
use crate::params::{path_param, Params};
use actix_multipart::Multipart;
use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use futures_util::StreamExt;
use parley_actions::file_store;
use parley_actions::uploads::{self, FileContent, ServedFile};
use parley_actions::Context;
use parley_domain::upload::{serve_inline, too_large};
use parley_domain::RequestError;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

params! {
    /// `GET /attachments` and `DELETE /attachments/{attachment_id}`.
    pub struct NoParams {}
}

/// One file of a multipart body.
#[derive(Debug)]
pub struct FilePart {
    /// The name the client gave.
    pub filename: String,
    /// The declared MIME type.
    pub content_type: Option<String>,
    /// The content.
    pub bytes: Vec<u8>,
}

/// Reads the file fields of a multipart body (fields without a file name are skipped; a body
/// that is not multipart has no files), failing as soon as a file passes `limit_mib`, so an
/// oversized upload is never held whole.
pub async fn read_files(mut body: Multipart, limit_mib: u64) -> Result<Vec<FilePart>, ApiError> {
    let limit = (limit_mib * 1024 * 1024) as usize;
    let mut files = Vec::new();
    while let Some(field) = body.next().await {
        let Ok(mut field) = field else {
            // Not multipart at all, or malformed: whatever files were read are all there is.
            break;
        };
        let filename = field
            .content_disposition()
            .and_then(|d| d.get_filename())
            .map(str::to_owned);
        let content_type = field.content_type().map(|m| m.essence_str().to_owned());
        let mut bytes = Vec::new();
        while let Some(chunk) = field.next().await {
            let chunk = chunk
                .map_err(|e| ApiError(RequestError::bad_request(format!("Invalid upload: {e}"))))?;
            if bytes.len() + chunk.len() > limit {
                return Err(ApiError(too_large(limit_mib)));
            }
            bytes.extend_from_slice(&chunk);
        }
        if let Some(filename) = filename {
            files.push(FilePart {
                filename,
                content_type,
                bytes,
            });
        }
    }
    Ok(files)
}

/// The HTTP response of a served file: its type, `inline` for types browsers show safely and
/// `attachment` otherwise, with the file name encoded for the header.
pub fn file_response(file: ServedFile) -> HttpResponse {
    let disposition = if serve_inline(&file.content_type) {
        "inline"
    } else {
        "attachment"
    };
    let name = if file.name.is_ascii() && !file.name.contains(['"', '\\']) {
        format!("{disposition}; filename=\"{}\"", file.name)
    } else {
        format!(
            "{disposition}; filename*=UTF-8''{}",
            utf8_percent_encode(&file.name, NON_ALPHANUMERIC)
        )
    };
    let mut response = HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, file.content_type))
        .insert_header((header::CONTENT_DISPOSITION, name))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CACHE_CONTROL, "private, max-age=86400"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        ))
        .take();
    match file.content {
        FileContent::Bytes(bytes) => response.body(bytes),
        // Sent as it is read from the store, with its length.
        FileContent::Reader(reader) => {
            let size = reader.size();
            response
                .no_chunking(size)
                .streaming(file_store::pieces(reader).map(|piece| piece.map(Bytes::from)))
        }
    }
}

/// An error page for a file that cannot be served (the reference answers HTML, not JSON).
fn error_page(err: ApiError) -> HttpResponse {
    let status = actix_web::http::StatusCode::from_u16(err.0.status)
        .unwrap_or(actix_web::http::StatusCode::NOT_FOUND);
    if status.is_server_error() {
        return actix_web::ResponseError::error_response(&err);
    }
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(format!("<p>{}</p>", err.0.msg))
}

/// POST /user_uploads — upload one file (multipart); answers its URL. The file is streamed to
/// the store as it arrives, never held whole in memory.
pub async fn upload(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    mut body: Multipart,
) -> ApiResult<Success> {
    let mut incoming: Option<uploads::IncomingUpload> = None;
    while let Some(field) = body.next().await {
        let Ok(mut field) = field else {
            // Not multipart at all, or malformed: what was read is all there is.
            break;
        };
        let filename = field
            .content_disposition()
            .and_then(|d| d.get_filename())
            .map(str::to_owned);
        let Some(filename) = filename else {
            // A field that is not a file: skip its content.
            while let Some(chunk) = field.next().await {
                chunk.map_err(invalid_upload)?;
            }
            continue;
        };
        if incoming.is_some() {
            // Dropping the first upload unfinished leaves nothing stored.
            return Err(ApiError(RequestError::bad_request(
                "You may only upload one file at a time",
            )));
        }
        let declared = field.content_type().map(|m| m.essence_str().to_owned());
        let mut upload =
            uploads::begin_upload(&ctx, me.clone(), &filename, declared.as_deref()).await?;
        while let Some(chunk) = field.next().await {
            upload.write(&chunk.map_err(invalid_upload)?).await?;
        }
        incoming = Some(upload);
    }
    let Some(upload) = incoming else {
        return Err(ApiError(RequestError::bad_request(
            "You must specify a file to upload",
        )));
    };
    let done = upload.finish(&ctx).await?;
    Ok(Success::empty()
        .with("uri", done.url.clone())
        .with("url", done.url)
        .with("filename", done.filename))
}

fn invalid_upload(e: actix_multipart::MultipartError) -> ApiError {
    ApiError(RequestError::bad_request(format!("Invalid upload: {e}")))
}

/// GET /user_uploads/thumbnail/{realm_id}/{path...}/{format} (outside `/api/v1`) — a
/// thumbnail of an uploaded image, for whoever may read the image.
pub async fn serve_thumbnail(
    ctx: web::Data<Context>,
    auth: Result<Auth, ApiError>,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    let Auth(me) = match auth {
        Ok(auth) => auth,
        Err(e) => return actix_web::ResponseError::error_response(&e),
    };
    let (realm, rest) = path.into_inner();
    let Some((file, format)) = rest.rsplit_once('/') else {
        return error_page(ApiError(
            RequestError::bad_request("File not found").with_status(404),
        ));
    };
    match uploads::access_thumbnail(&ctx, &me, &format!("{realm}/{file}"), format).await {
        Ok(file) => file_response(file),
        Err(e) => error_page(ApiError::from(e)),
    }
}

params! {
    /// `GET /thumbnail`.
    pub struct ThumbnailParams {
        url: String,
        size: String,
    }
}

/// GET /thumbnail — the image of a link preview: an upload (under its access rules) or a
/// redirect to an image elsewhere.
pub async fn thumbnail(
    ctx: web::Data<Context>,
    auth: Result<Auth, ApiError>,
    params: Result<Params<ThumbnailParams>, ApiError>,
) -> HttpResponse {
    let (Auth(me), Params(params)) = match (auth, params) {
        (Ok(auth), Ok(params)) => (auth, params),
        (Err(e), _) | (_, Err(e)) => return actix_web::ResponseError::error_response(&e),
    };
    match uploads::legacy_thumbnail(&ctx, &me, &params.url, &params.size).await {
        Ok(uploads::LegacyThumbnail::File(file)) => file_response(file),
        Ok(uploads::LegacyThumbnail::Redirect(to)) => HttpResponse::Found()
            .insert_header((header::LOCATION, to))
            .finish(),
        Err(e) => error_page(ApiError::from(e)),
    }
}

/// GET /user_uploads/{realm_id}/{path...} (outside `/api/v1`) — the file itself, for its owner
/// and whoever may read a message linking it.
pub async fn serve(
    ctx: web::Data<Context>,
    auth: Result<Auth, ApiError>,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    let Auth(me) = match auth {
        Ok(auth) => auth,
        Err(e) => return actix_web::ResponseError::error_response(&e),
    };
    let (realm, rest) = path.into_inner();
    match uploads::access_upload(&ctx, &me, &format!("{realm}/{rest}")).await {
        Ok(file) => file_response(file),
        Err(e) => error_page(ApiError::from(e)),
    }
}

/// GET /api/v1/user_uploads/{realm_id}/{path...} — a temporary URL for the file that needs no
/// authentication.
pub async fn temporary_url(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<(String, String)>,
) -> ApiResult<Success> {
    let (realm, rest) = path.into_inner();
    let url = uploads::temporary_url(&ctx, &me, &format!("{realm}/{rest}")).await?;
    Ok(Success::empty().with("url", url))
}

/// GET /user_uploads/temporary/{token}/{filename} — a file through a temporary URL.
pub async fn serve_temporary(
    ctx: web::Data<Context>,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    let (token, _) = path.into_inner();
    match uploads::access_temporary(&ctx, &token).await {
        Ok(file) => file_response(file),
        Err(e) => error_page(ApiError::from(e)),
    }
}

/// GET /attachments — the caller's uploaded files and the organization's used space.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let (attachments, space) = uploads::get_attachments(&ctx, me).await?;
    Ok(Success::empty()
        .with("attachments", attachments)
        .with("upload_space_used", space))
}

/// DELETE /attachments/{attachment_id} — delete one of the caller's files.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("attachment_id", &path)?;
    uploads::do_delete_attachment(&ctx, me, id).await?;
    Ok(Success::empty())
}
