//! Outgoing webhook bots: a mention in a channel or a direct message POSTs the message to the
//! bot's URL (a fake bot server on a local port), and the answer comes back as the bot's reply;
//! failures are told to the conversation and to the bot's owner.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, openapi, Account, TestApp};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A request the fake bot server received.
#[derive(Debug, Clone)]
struct Received {
    content_type: String,
    body: String,
}

/// A bot's server: records each request and answers with the status and body it is told to.
struct FakeBotServer {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
    answer: Arc<Mutex<(u16, String)>>,
}

impl FakeBotServer {
    fn start() -> FakeBotServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/bot", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(Mutex::new((
            200,
            r#"{"response_not_required": true}"#.to_owned(),
        )));
        let (log, reply) = (received.clone(), answer.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let (mut length, mut content_type) = (0, String::new());
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    if header.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = header.split_once(':') {
                        if name.eq_ignore_ascii_case("content-length") {
                            length = value.trim().parse().unwrap();
                        } else if name.eq_ignore_ascii_case("content-type") {
                            content_type = value.trim().to_owned();
                        }
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                log.lock().unwrap().push(Received {
                    content_type,
                    body: String::from_utf8(body).unwrap(),
                });
                let (status, text) = reply.lock().unwrap().clone();
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
            }
        });
        FakeBotServer {
            url,
            received,
            answer,
        }
    }

    fn answer(&self, status: u16, body: &str) {
        *self.answer.lock().unwrap() = (status, body.to_owned());
    }

    /// The next request, waiting up to 10 s for it.
    async fn next(&self) -> Received {
        for _ in 0..200 {
            if let Some(first) = {
                let mut log = self.received.lock().unwrap();
                (!log.is_empty()).then(|| log.remove(0))
            } {
                return first;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the bot server got no request");
    }

    fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }
}

/// An outgoing webhook bot owned by `owner`, calling `server` in `interface` (1 Zulip, 2 Slack);
/// its account and its token.
async fn outgoing_bot(
    app: &TestApp,
    owner: &Account,
    server: &FakeBotServer,
    interface: i64,
) -> (Account, String) {
    let created = app
        .post("/bots")
        .as_user(owner)
        .param("full_name", "Echo")
        .param("short_name", "echo")
        .param("bot_type", 3)
        .param("payload_url", json!(server.url))
        .param("interface_type", interface)
        .send()
        .await
        .success();
    let id = created["user_id"].as_i64().unwrap();
    let settings = app
        .ctx
        .db
        .run(move |c| parley_storage::bots::get(c, parley_domain::UserId(id)))
        .await
        .unwrap();
    let token = settings.service_token.expect("a token");
    assert!(!token.is_empty());
    let account = Account {
        user_id: parley_domain::UserId(id),
        email: format!("echo-bot@{}", app.ctx.realm.host),
        api_key: created["api_key"].as_str().unwrap().to_owned(),
        password: String::new(),
    };
    (account, token)
}

/// The messages of a narrow, newest last.
async fn messages(app: &TestApp, who: &Account, narrow: Value) -> Vec<Value> {
    let page = app
        .get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 50)
        .param("num_after", 0)
        .param("apply_markdown", false)
        .param("narrow", narrow.to_string())
        .send()
        .await
        .success();
    page["messages"].as_array().unwrap().clone()
}

/// Waits up to 10 s for a message from `sender` in the narrow whose content satisfies `test`.
async fn wait_for(
    app: &TestApp,
    who: &Account,
    narrow: Value,
    sender: &Account,
    test: impl Fn(&str) -> bool,
) -> Value {
    for _ in 0..200 {
        let found = messages(app, who, narrow.clone())
            .await
            .into_iter()
            .find(|m| {
                m["sender_id"] == sender.user_id.0 && test(m["content"].as_str().unwrap_or(""))
            });
        if let Some(found) = found {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no such message from {} in {narrow}", sender.email);
}

/// The fields of a form-encoded body.
fn form_fields(body: &str) -> std::collections::HashMap<String, String> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8()
            .unwrap()
            .into_owned()
    };
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

fn topic_narrow(topic: &str) -> Value {
    json!([{"operator": "channel", "operand": "general"}, {"operator": "topic", "operand": topic}])
}

backend_test! {
    async fn a_mention_posts_the_message_to_the_bot_and_its_answer_is_the_reply(app) {
        let server = FakeBotServer::start();
        let ann = app.create_user("ann@x.test", "Ann", Role::Member).await;
        let (bot, token) = outgoing_bot(&app, &ann, &server, 1).await;
        server.answer(200, r#"{"content": "pong **back**"}"#);
        // The bot is not subscribed to the channel: a mention still reaches it.
        let sent = app.send_to_channel(&app.owner, "general", "webhooks", "@**Echo** ping").await;
        let request = server.next().await;
        assert_eq!(request.content_type, "application/json");
        let payload: Value = serde_json::from_str(&request.body).unwrap();
        openapi::check_response("POST", "/zulip-outgoing-webhook", &payload).unwrap();
        assert_eq!(payload["data"], "@**Echo** ping");
        assert_eq!(payload["trigger"], "mention");
        assert_eq!(payload["token"], token.as_str());
        assert_eq!(payload["bot_email"], bot.email.as_str());
        assert_eq!(payload["bot_full_name"], "Echo");
        assert_eq!(payload["message"]["id"], sent);
        assert_eq!(payload["message"]["content"], "@**Echo** ping");
        assert_eq!(payload["message"]["sender_id"], app.owner.user_id.0);
        assert_eq!(payload["message"]["display_recipient"], "general");
        assert_eq!(payload["message"]["subject"], "webhooks");
        assert!(payload["message"]["rendered_content"].as_str().unwrap().contains("user-mention"));
        let reply = wait_for(&app, &app.owner, topic_narrow("webhooks"), &bot, |c| c == "pong **back**").await;
        assert_eq!(reply["client"], "OutgoingWebhookResponse");
        // The bot's own reply triggers nothing, even if it mentions itself.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(server.count(), 0);
    }
}

backend_test! {
    async fn a_direct_message_reaches_the_bot_and_the_reply_goes_to_the_conversation(app) {
        let server = FakeBotServer::start();
        let ann = app.create_user("ann@x.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@x.test", "Bob", Role::Member).await;
        let (bot, _) = outgoing_bot(&app, &ann, &server, 1).await;
        server.answer(200, r#"{"response_string": "hello both"}"#);
        app.post("/messages")
            .as_user(&bob)
            .param("type", "direct")
            .param("to", json!([ann.user_id.0, bot.user_id.0]).to_string())
            .param("content", "hi echo")
            .send()
            .await
            .success();
        let payload: Value = serde_json::from_str(&server.next().await.body).unwrap();
        assert_eq!(payload["trigger"], "direct_message");
        assert_eq!(payload["data"], "hi echo");
        let ids = json!([ann.user_id.0, bob.user_id.0, bot.user_id.0]);
        let narrow = json!([{"operator": "dm", "operand": ids}]);
        wait_for(&app, &ann, narrow.clone(), &bot, |c| c == "hello both").await;
        wait_for(&app, &bob, narrow, &bot, |c| c == "hello both").await;
    }
}

backend_test! {
    async fn silent_mentions_bots_and_declined_answers_post_nothing(app) {
        let server = FakeBotServer::start();
        let ann = app.create_user("ann@x.test", "Ann", Role::Member).await;
        let (bot, _) = outgoing_bot(&app, &ann, &server, 1).await;
        let other = app
            .post("/bots")
            .as_user(&ann)
            .param("full_name", "Other")
            .param("short_name", "other")
            .send()
            .await
            .success();
        let other = Account {
            user_id: parley_domain::UserId(other["user_id"].as_i64().unwrap()),
            email: format!("other-bot@{}", app.ctx.realm.host),
            api_key: other["api_key"].as_str().unwrap().to_owned(),
            password: String::new(),
        };
        app.send_to_channel(&ann, "general", "quiet", "@_**Echo** silently").await;
        app.send_to_channel(&other, "general", "quiet", "@**Echo** from a bot").await;
        app.send_to_channel(&ann, "general", "quiet", "`@**Echo**` in code").await;
        // The only call: this one, which the bot declines to answer.
        app.send_to_channel(&ann, "general", "quiet", "@**Echo** no answer needed").await;
        let payload: Value = serde_json::from_str(&server.next().await.body).unwrap();
        assert_eq!(payload["data"], "@**Echo** no answer needed");
        server.answer(200, r#"{"content": "   "}"#);
        app.send_to_channel(&ann, "general", "quiet", "@**Echo** blank answer").await;
        server.next().await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(server.count(), 0);
        let from_bot = messages(&app, &ann, topic_narrow("quiet")).await;
        assert!(from_bot.iter().all(|m| m["sender_id"] != bot.user_id.0), "{from_bot:?}");
    }
}

backend_test! {
    async fn failures_are_told_to_the_conversation_and_the_bots_owner(app) {
        let server = FakeBotServer::start();
        let ann = app.create_user("ann@x.test", "Ann", Role::Member).await;
        let (bot, _) = outgoing_bot(&app, &ann, &server, 1).await;
        server.answer(500, "oops");
        app.send_to_channel(&app.owner, "general", "broken", "@**Echo** fail please").await;
        server.next().await;
        wait_for(&app, &app.owner, topic_narrow("broken"), &bot, |c| c == "Failure! Third party responded with 500").await;
        let owner_dm = json!([{"operator": "dm", "operand": [bot.user_id.0]}]);
        let notice = wait_for(&app, &ann, owner_dm.clone(), &bot, |c| c.contains("status code *500*")).await;
        let text = notice["content"].as_str().unwrap();
        assert!(text.starts_with("[A message]("), "{text}");
        assert!(text.contains("triggered an outgoing webhook"), "{text}");
        assert!(text.contains("oops"), "{text}");
        server.answer(200, "not json");
        app.send_to_channel(&app.owner, "general", "broken", "@**Echo** garbled").await;
        server.next().await;
        wait_for(&app, &app.owner, topic_narrow("broken"), &bot, |c| c == "Failure! Invalid JSON in response").await;
        wait_for(&app, &ann, owner_dm, &bot, |c| c.contains("> Invalid JSON in response")).await;
    }
}

backend_test! {
    async fn an_unreachable_bot_is_tried_again_then_reported(app) {
        let server = FakeBotServer::start();
        let ann = app.create_user("ann@x.test", "Ann", Role::Member).await;
        let (bot, _) = outgoing_bot(&app, &ann, &server, 1).await;
        // A port nobody listens on.
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", closed.local_addr().unwrap());
        drop(closed);
        app.patch(&format!("/bots/{}", bot.user_id.0))
            .as_user(&ann)
            .param("service_payload_url", json!(url))
            .send()
            .await
            .success();
        app.send_to_channel(&app.owner, "general", "gone", "@**Echo** anyone?").await;
        wait_for(&app, &app.owner, topic_narrow("gone"), &bot, |c| c == "Failure! Bot is unavailable").await;
        let owner_dm = json!([{"operator": "dm", "operand": [bot.user_id.0]}]);
        wait_for(&app, &ann, owner_dm, &bot, |c| c.contains("connection error")).await;
    }
}

backend_test! {
    async fn slack_format_bots_get_a_form_and_answer_with_text(app) {
        let server = FakeBotServer::start();
        let ann = app.create_user("ann@x.test", "Ann", Role::Member).await;
        let (bot, token) = outgoing_bot(&app, &ann, &server, 2).await;
        server.answer(200, r#"{"text": "slack says hi"}"#);
        let sent = app.send_to_channel(&ann, "general", "slack", "@**Echo** hey").await;
        let request = server.next().await;
        assert_eq!(request.content_type, "application/x-www-form-urlencoded");
        let form = form_fields(&request.body);
        assert_eq!(form["token"], token);
        assert_eq!(form["text"], "@**Echo** hey");
        assert_eq!(form["trigger_word"], "mention");
        assert_eq!(form["channel_name"], "general");
        assert_eq!(form["user_id"], format!("U{}", ann.user_id.0));
        assert_eq!(form["user_name"], "Ann");
        assert!(form["channel_id"].starts_with('C'));
        assert!(!form["timestamp"].is_empty(), "{form:?}");
        assert!(sent > 0);
        wait_for(&app, &ann, topic_narrow("slack"), &bot, |c| c == "slack says hi").await;
        // Slack's format has no direct messages: the conversation is told so.
        app.post("/messages")
            .as_user(&ann)
            .param("type", "direct")
            .param("to", json!([bot.user_id.0]).to_string())
            .param("content", "private hey")
            .send()
            .await
            .success();
        let dm = json!([{"operator": "dm", "operand": [bot.user_id.0]}]);
        wait_for(&app, &ann, dm, &bot, |c| c == "Failure! Slack outgoing webhooks don't support direct messages.").await;
        assert_eq!(server.count(), 0);
    }
}
