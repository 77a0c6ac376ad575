//! Typesetting math with KaTeX, the library the reference renders math with, so that clients
//! get the exact HTML and MathML they know how to style and parse.
//!
//! KaTeX is JavaScript; the `katex` crate runs it in an embedded QuickJS engine. An engine
//! takes about 150 ms to load KaTeX and is not thread-safe, so one engine lives on a worker
//! thread of its own, started on first use (or by [`warm_up`]), and renderings are sent to it.
//! Results are cached, since the same formula is often rendered again (edits, previews).
//! A rendering that takes longer than [`TIMEOUT`] is given up (the math shows as a
//! `tex-error`) and a fresh worker takes over, so one pathological formula cannot stall
//! every later message.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// How long a caller waits for one formula (the first one includes loading KaTeX).
const TIMEOUT: Duration = Duration::from_secs(5);

/// How many results the cache keeps before it starts over.
const CACHE_ENTRIES: usize = 2048;

/// Formulas longer than this are not typeset (they show as written), which bounds the work
/// one message can ask for.
pub(crate) const MAX_TEX_LEN: usize = 10_000;

struct Request {
    tex: String,
    display: bool,
    reply: SyncSender<Option<String>>,
}

#[derive(Default)]
struct State {
    /// The current worker's channel and its number.
    worker: Option<(u64, Sender<Request>)>,
    /// How many workers were started.
    started: u64,
    cache: HashMap<(String, bool), Option<String>>,
}

fn state() -> MutexGuard<'static, State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn serve(requests: Receiver<Request>) {
    for request in requests {
        let html = katex::Opts::builder()
            .display_mode(request.display)
            .build()
            .ok()
            .and_then(|opts| katex::render_with_opts(&request.tex, opts).ok());
        // The caller may have given up waiting; that is fine.
        let _ = request.reply.send(html);
    }
}

/// The worker's number and request channel, starting a worker when there is none.
fn worker(state: &mut State) -> Option<(u64, Sender<Request>)> {
    if let Some(worker) = &state.worker {
        return Some(worker.clone());
    }
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .name("katex".to_owned())
        .spawn(move || serve(receiver))
        .ok()?;
    state.started += 1;
    state.worker = Some((state.started, sender));
    state.worker.clone()
}

/// Forgets worker `number` (stuck or gone), so that the next formula starts another.
fn retire(number: u64) {
    let mut state = state();
    if state.worker.as_ref().is_some_and(|(n, _)| *n == number) {
        state.worker = None;
    }
}

/// Typesets `tex` as KaTeX does (`display` for display math), or `None` when KaTeX rejects
/// it, it is too long, or typesetting failed.
pub(crate) fn typeset(tex: &str, display: bool) -> Option<String> {
    if tex.len() > MAX_TEX_LEN {
        return None;
    }
    let key = (tex.to_owned(), display);
    let (number, sender) = {
        let mut state = state();
        if let Some(hit) = state.cache.get(&key) {
            return hit.clone();
        }
        worker(&mut state)?
    };
    let (reply, answer) = mpsc::sync_channel(1);
    let request = Request {
        tex: key.0.clone(),
        display,
        reply,
    };
    if sender.send(request).is_err() {
        // The worker is gone (it panicked): the next call starts another.
        retire(number);
        return None;
    }
    let html = match answer.recv_timeout(TIMEOUT) {
        Ok(html) => html,
        Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
            // Leave a stuck worker to finish alone; later formulas go to a new one.
            retire(number);
            return None;
        }
    };
    let mut state = state();
    if state.cache.len() >= CACHE_ENTRIES {
        state.cache.clear();
    }
    state.cache.insert(key, html.clone());
    html
}

/// Starts the KaTeX worker and loads KaTeX in the background, so that the first message with
/// math does not wait for it.
pub fn warm_up() {
    std::thread::spawn(|| {
        let _ = typeset("x", false);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typesets_and_rejects_like_katex() {
        let html = typeset("x^2", false).unwrap();
        assert!(html.starts_with("<span class=\"katex\">"), "{html}");
        assert!(html.contains("<annotation encoding=\"application/x-tex\">x^2</annotation>"));
        let display = typeset("x^2", true).unwrap();
        assert!(display.starts_with("<span class=\"katex-display\">"));
        assert_eq!(typeset("\\error{x}", false), None);
        assert_eq!(typeset(&"x".repeat(MAX_TEX_LEN + 1), false), None);
        // Cached answers are the same answers.
        assert_eq!(typeset("x^2", false).unwrap(), html);
    }

    #[test]
    fn renders_from_many_threads() {
        let threads: Vec<_> = (0..4)
            .map(|i| std::thread::spawn(move || typeset(&format!("a_{i}"), false)))
            .collect();
        for t in threads {
            assert!(t.join().unwrap().is_some());
        }
    }
}
