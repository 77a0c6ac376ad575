//! Serving HTTP/1.1 so that even requests the HTTP parser refuses get the JSON error envelope.
//!
//! actix-http answers a request head it cannot parse (invalid bytes in the request line or a
//! header, too many headers, a head over 128 KiB) itself, before any application code runs,
//! with a fixed bodiless `400 Bad Request` or `431 Request Header Fields Too Large`, and offers
//! no hook to change them. [`serve`] therefore runs the application behind a connection wrapper,
//! [`EnvelopeIo`], that recognises exactly those two answers as they are written and writes the
//! envelope instead. The application's own 400s always carry a JSON body, so they never match.

use crate::error::error_body;
use actix_http::HttpService;
use actix_server::Server;
use actix_service::{fn_service, map_config, ServiceFactoryExt};
use actix_web::dev::AppConfig;
use parley_actions::Context;
use parley_domain::RequestError;
use std::io;
use std::pin::Pin;
use std::task::{self, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const BAD_REQUEST: &[u8] = b"HTTP/1.1 400 Bad Request\r\n";
const TOO_LARGE: &[u8] = b"HTTP/1.1 431 Request Header Fields Too Large\r\n";

/// The envelope that replaces a parser's bodiless answer at the start of `buf`, and how many
/// bytes of `buf` (the answer's head) it replaces; None for anything else.
pub fn envelope_for(buf: &[u8]) -> Option<(Vec<u8>, usize)> {
    let (status_line, status, msg) = if buf.starts_with(BAD_REQUEST) {
        (BAD_REQUEST, 400, "Malformed HTTP request")
    } else if buf.starts_with(TOO_LARGE) {
        (
            TOO_LARGE,
            431,
            "Request headers too large (at most 96 headers and 128 KiB)",
        )
    } else {
        return None;
    };
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = buf[..end].to_ascii_lowercase();
    if !head
        .windows(b"\r\ncontent-length: 0\r\n".len())
        .any(|w| w == b"\r\ncontent-length: 0\r\n")
    {
        return None;
    }
    let body = error_body(&RequestError::bad_request(msg).with_status(status)).to_string();
    let mut out = status_line.to_vec();
    out.extend_from_slice(
        format!(
            "content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(body.as_bytes());
    Some((out, end))
}

/// A connection whose writes pass through unchanged, except the HTTP parser's two bodiless
/// error answers, which become envelopes.
#[derive(Debug)]
pub struct EnvelopeIo<T> {
    inner: T,
    /// A replacement being written: its bytes, how many are written, how many bytes of the
    /// caller's buffer it stands for.
    pending: Option<(Vec<u8>, usize, usize)>,
}

impl<T> EnvelopeIo<T> {
    /// Wraps a connection.
    pub fn new(inner: T) -> Self {
        EnvelopeIo {
            inner,
            pending: None,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for EnvelopeIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for EnvelopeIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.pending.is_none() {
            match envelope_for(buf) {
                Some((bytes, replaces)) => this.pending = Some((bytes, 0, replaces)),
                None => return Pin::new(&mut this.inner).poll_write(cx, buf),
            }
        }
        // The caller writes the same buffer again until it is told it went out.
        while let Some((bytes, written, replaces)) = this.pending.as_mut() {
            if *written == bytes.len() {
                let replaced = *replaces;
                this.pending = None;
                return Poll::Ready(Ok(replaced));
            }
            match Pin::new(&mut this.inner).poll_write(cx, &bytes[*written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(0))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut task::Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut task::Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Serves [`crate::app`] over HTTP/1.1 on `listener` with the envelope for parser errors, as
/// `HttpServer` would otherwise (its 5 s keep-alive and request-head timeouts, 1 s to close);
/// signals are left to the caller, who stops the server through its handle, waiting up to
/// `shutdown_timeout`.
pub fn serve(
    ctx: Context,
    options: crate::ops::AppOptions,
    listener: std::net::TcpListener,
    shutdown_timeout: Duration,
) -> io::Result<Server> {
    let builder = Server::build();
    // As HttpServer: on a graceful stop, keep-alive connections close after their current
    // response instead of keeping the workers alive until the timeout.
    let stopping = builder.graceful_shutdown_signal();
    Ok(builder
        .shutdown_timeout(shutdown_timeout.as_secs())
        .disable_signals()
        .listen("parley", listener, move || {
            let ctx = ctx.clone();
            let options = options.clone();
            let stopping = stopping.clone();
            fn_service(|io: actix_rt::net::TcpStream| async move {
                let _ = io.set_nodelay(true);
                let peer = io.peer_addr().ok();
                Ok::<_, actix_http::error::DispatchError>((EnvelopeIo::new(io), peer))
            })
            .and_then(
                HttpService::build()
                    .graceful_shutdown_signal(move || {
                        let stopping = stopping.clone();
                        async move { stopping.notified().await }
                    })
                    .client_request_timeout(Duration::from_secs(5))
                    .client_disconnect_timeout(Duration::from_secs(1))
                    .h1(map_config(crate::app_with(ctx, options), |_| {
                        AppConfig::default()
                    })),
            )
        })?
        .run())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_the_parsers_bodiless_answers() {
        let parser = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\ndate: x\r\n\r\n";
        let (bytes, replaced) = envelope_for(parser).unwrap();
        assert_eq!(replaced, parser.len());
        let text = String::from_utf8(bytes).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(json["result"], "error");
        assert_eq!(json["code"], "BAD_REQUEST");
        let large = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n";
        assert!(envelope_for(large).is_some());
        // The application's 400s have bodies; other answers and partial heads pass.
        let app = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 60\r\n\r\n{\"result\":\"error\"}";
        assert!(envelope_for(app).is_none());
        assert!(envelope_for(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(envelope_for(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n").is_none());
    }
}
