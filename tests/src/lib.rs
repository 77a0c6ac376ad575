//! The end-to-end test harness: [`TestApp`] runs the real application (the same `parley_api::app`
//! the binary serves) in-process over a fresh database, and sends it real HTTP requests.
//!
//! Every test runs once per available backend: SQLite always (a fresh file per test), and
//! PostgreSQL when `TEST_DATABASE_URL` is set (a fresh schema per test, dropped afterwards), so
//! tests run in parallel without sharing state.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

pub mod bench;
pub mod images;
pub mod openapi;
pub mod pages;
pub mod s3;
pub mod statements;

use actix_web::http::Method;
use actix_web::test::{call_service, init_service, read_body, TestRequest};
use base64::Engine;
use futures_util::future::LocalBoxFuture;
use parley_actions::bootstrap::{do_ensure_realm, RealmInit};
use parley_actions::event_log::NodeIdentity;
use parley_actions::mail::MemoryMailer;
use parley_actions::publish::EventHub;
use parley_actions::rate_limit::RateLimits;
use parley_actions::users::{do_create_user, CreateUser};
use parley_actions::{Context, RealmAddress};
use parley_domain::{Role, UserId};
pub use parley_events::EngineConfig;
pub use parley_storage::testing::Backend;
use parley_storage::testing::{scratch_database, ScratchDatabase};
use parley_storage::PoolOptions;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::Value;
use std::rc::Rc;
use std::sync::Arc;

/// A user's credentials in a test.
#[derive(Debug, Clone)]
pub struct Account {
    pub user_id: UserId,
    /// The API address (what clients authenticate with).
    pub email: String,
    pub api_key: String,
    pub password: String,
}

/// A response, with its body parsed as JSON (or `Value::Null` with `text` set when it is not).
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub json: Value,
    pub text: String,
    /// The body as it came (images and other binary files).
    pub bytes: Vec<u8>,
    pub headers: actix_web::http::header::HeaderMap,
}

impl Response {
    /// Asserts a success envelope and returns the body.
    pub fn success(self) -> Value {
        assert_eq!(self.status, 200, "expected success, got {}", self.text);
        assert_eq!(self.json["result"], "success", "{}", self.text);
        assert_eq!(self.json["msg"], "", "{}", self.text);
        self.json
    }

    /// Asserts an error envelope with this status and code, and returns the body.
    pub fn error(self, status: u16, code: &str) -> Value {
        assert_eq!(self.status, status, "wrong status: {}", self.text);
        assert_eq!(self.json["result"], "error", "{}", self.text);
        assert_eq!(self.json["code"], code, "{}", self.text);
        assert!(
            self.json["msg"].as_str().is_some_and(|m| !m.is_empty()),
            "{}",
            self.text
        );
        self.json
    }
}

type Caller = Rc<dyn Fn(actix_http::Request) -> LocalBoxFuture<'static, Response>>;

/// A small deterministic generator for randomized tests, so that a failure reproduces from its
/// seed.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number below `n`.
    pub fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// The application over a fresh database, with its owner account.
pub struct TestApp {
    pub ctx: Context,
    /// Mail the application sent.
    pub mail: Arc<MemoryMailer>,
    pub owner: Account,
    pub backend: Backend,
    /// Check every success body and event against the API description (see [`openapi`]);
    /// benchmarks turn it off so that they time the server alone.
    pub check_shapes: bool,
    caller: Caller,
    /// The scratch database, owned by the first node of a cluster (None on the others).
    _database: Option<ScratchDatabase>,
    /// The HTTP server of a cluster node, which other nodes forward to.
    server: Option<actix_web::dev::ServerHandle>,
}

/// Runs a test body once per available backend, each time against a fresh [`TestApp`].
#[macro_export]
macro_rules! backend_test {
    ($(#[$meta:meta])* async fn $name:ident($app:ident) $body:block) => {
        $crate::backend_test_with!(::std::default::Default::default(), $(#[$meta])* async fn $name($app) $body);
    };
}

/// Like [`backend_test!`], with the per-user request limit lifted, for tests that make hundreds
/// of requests as one user.
#[macro_export]
macro_rules! busy_backend_test {
    ($(#[$meta:meta])* async fn $name:ident($app:ident) $body:block) => {
        $crate::backend_test_with!($crate::lifted_api_limit(), $(#[$meta])* async fn $name($app) $body);
    };
}

/// The body of [`backend_test!`] and [`busy_backend_test!`]: the app starts with `$limits`.
#[macro_export]
#[doc(hidden)]
macro_rules! backend_test_with {
    ($limits:expr, $(#[$meta:meta])* async fn $name:ident($app:ident) $body:block) => {
        $(#[$meta])*
        #[actix_web::test]
        async fn $name() {
            for backend in $crate::Backend::available() {
                let $app = $crate::TestApp::start_with_limits(backend, $limits).await;
                $body
            }
        }
    };
}

/// The default rate limits without the per-user API limit.
pub fn lifted_api_limit() -> RateLimits {
    RateLimits {
        api_by_user: parley_actions::rate_limit::RateLimiter::new(
            u32::MAX,
            std::time::Duration::from_secs(1),
        ),
        ..RateLimits::default()
    }
}

/// Pool options of the tests: test databases need not survive a power loss, so no fsync at
/// every commit (the binary's own tests run the FULL default).
fn test_pool() -> PoolOptions {
    PoolOptions {
        max_size: 4,
        sqlite_synchronous: parley_storage::SqliteSynchronous::Normal,
        ..PoolOptions::default()
    }
}

impl TestApp {
    /// The application on a fresh database of `backend`, organization and owner created.
    pub async fn start(backend: Backend) -> TestApp {
        TestApp::start_with_limits(backend, RateLimits::default()).await
    }

    /// The same, with other rate limits.
    pub async fn start_with_limits(backend: Backend, limits: RateLimits) -> TestApp {
        TestApp::start_configured(backend, limits, EngineConfig::default()).await
    }

    /// The same, with an event engine of this configuration (short heartbeats, say).
    pub async fn start_with_engine(backend: Backend, engine: EngineConfig) -> TestApp {
        TestApp::start_configured(backend, RateLimits::default(), engine).await
    }

    /// The application with these rate limits and event engine.
    pub async fn start_configured(
        backend: Backend,
        limits: RateLimits,
        engine: EngineConfig,
    ) -> TestApp {
        parley_actions::secrets::use_cheap_password_hashing();
        let database = scratch_database(&backend);
        let url = database.url.clone();
        TestApp::start_node(
            backend,
            limits,
            engine,
            url,
            Some(database),
            None,
            test_pool(),
        )
        .await
    }

    /// A cluster of `count` nodes on one fresh PostgreSQL database (`backend` must be
    /// PostgreSQL): each node is its own context, event hub and queues, as a server process
    /// is, serving HTTP on a local port so that the others forward requests for its queues to
    /// it; requests made through a node's `TestApp` reach that node. The per-user API limit
    /// is lifted.
    pub async fn start_cluster(backend: Backend, count: usize) -> Vec<TestApp> {
        assert!(
            matches!(backend, Backend::Postgres(_)),
            "a cluster needs PostgreSQL"
        );
        let database = scratch_database(&backend);
        let url = database.url.clone();
        let mut nodes = Vec::new();
        let first = TestApp::start_node(
            backend.clone(),
            lifted_api_limit(),
            EngineConfig::default(),
            url.clone(),
            Some(database),
            Some(std::net::TcpListener::bind("127.0.0.1:0").unwrap()),
            test_pool(),
        )
        .await;
        for _ in 1..count {
            nodes.push(first.another_node().await);
        }
        nodes.insert(0, first);
        nodes
    }

    /// Stops this cluster node's HTTP server (requests forwarded to it find nothing listening);
    /// its queues and its entry in the cluster stay, as in a process that is going away.
    pub async fn stop_serving(&self) {
        if let Some(server) = &self.server {
            server.stop(false).await;
        }
    }

    /// Another node (server process) on this app's PostgreSQL database, with its own event
    /// hub, serving HTTP on a local port; same organization and owner.
    pub async fn another_node(&self) -> TestApp {
        let url = self.ctx.db.url().clone();
        let mut node = TestApp::start_node(
            self.backend.clone(),
            lifted_api_limit(),
            self.ctx.events.engine().config().clone(),
            url,
            None,
            Some(std::net::TcpListener::bind("127.0.0.1:0").unwrap()),
            test_pool(),
        )
        .await;
        node.owner = self.owner.clone();
        node
    }

    /// On PostgreSQL (None without it): the application on a scratch database with its logged
    /// writes committed in batches (the writer, `--postgres-group-commit on`), API rate limit
    /// lifted.
    pub async fn start_with_group_commit() -> Option<TestApp> {
        let backend = Backend::postgres()?;
        let database = parley_storage::testing::scratch_database(&backend);
        let url = database.url.clone();
        let pool = parley_storage::PoolOptions {
            postgres_group_commit: true,
            ..parley_storage::PoolOptions::default()
        };
        let engine = EngineConfig::default();
        let app = TestApp::start_on(
            Some(database),
            url,
            backend,
            lifted_api_limit(),
            engine,
            pool,
        )
        .await;
        assert!(app.ctx.db.commits_in_batches());
        Some(app)
    }

    /// The application on an empty database at `url` (a benchmark's, kept after the run) with
    /// these pool options, organization and owner created.
    pub async fn start_on(
        database: Option<ScratchDatabase>,
        url: parley_storage::DatabaseUrl,
        backend: Backend,
        limits: RateLimits,
        engine: EngineConfig,
        pool: PoolOptions,
    ) -> TestApp {
        TestApp::start_node(backend, limits, engine, url, database, None, pool).await
    }

    /// One node on the database at `url` (created by `database`, which the node keeps), served
    /// over HTTP on `listener` when one is given.
    async fn start_node(
        backend: Backend,
        limits: RateLimits,
        engine: EngineConfig,
        url: parley_storage::DatabaseUrl,
        database: Option<ScratchDatabase>,
        listener: Option<std::net::TcpListener>,
        pool: PoolOptions,
    ) -> TestApp {
        parley_actions::secrets::use_cheap_password_hashing();
        let realm = RealmAddress::parse("http://parley.test").unwrap();
        let ctx = parley_server::startup::connect(url, realm, pool)
            .await
            .expect("open test database");
        // On PostgreSQL the limits are kept in the database, as a server on it keeps them.
        let limits = limits.shared_in(&ctx.db);
        let ctx = ctx.with_limits(limits);
        // PostgreSQL runs the event log, as a server on it does; SQLite the in-process hub.
        let address = listener
            .as_ref()
            .map(|l| format!("http://{}", l.local_addr().unwrap()))
            .unwrap_or_default();
        let hub = EventHub::for_database(engine, &ctx.db, NodeIdentity::random(address));
        let ctx = ctx.with_events(hub);
        ctx.events.follow().await.expect("follow the event log");
        let server = listener.map(|listener| {
            let server = parley_api::h1::serve(
                ctx.clone(),
                parley_api::ops::AppOptions::default(),
                listener,
                std::time::Duration::from_secs(1),
            )
            .unwrap();
            let handle = server.handle();
            actix_web::rt::spawn(server);
            handle
        });
        let mail = Arc::new(MemoryMailer::default());
        let ctx = ctx.with_mailer(mail.clone());
        let bootstrap = do_ensure_realm(
            &ctx,
            RealmInit {
                name: "Test Org".into(),
                owner_email: "owner@parley.test".into(),
            },
        )
        .await
        .expect("bootstrap");
        // A second node of a cluster finds the organization made; the caller sets its owner.
        let owner = match bootstrap.created_owner {
            Some(created) => Account {
                user_id: created.user.id,
                email: created.user.api_email(&ctx.realm.host),
                api_key: created.api_key,
                password: created.password,
            },
            None => Account {
                user_id: UserId(0),
                email: String::new(),
                api_key: String::new(),
                password: String::new(),
            },
        };
        let service = Rc::new(init_service(parley_api::app(ctx.clone())).await);
        let caller: Caller = Rc::new(move |request| {
            let service = service.clone();
            Box::pin(async move {
                let response = call_service(&*service, request).await;
                let status = response.status().as_u16();
                let headers = response.headers().clone();
                let body = read_body(response).await;
                let text = String::from_utf8_lossy(&body).into_owned();
                let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
                Response {
                    status,
                    json,
                    text,
                    bytes: body.to_vec(),
                    headers,
                }
            })
        });
        TestApp {
            ctx,
            mail,
            owner,
            backend,
            check_shapes: true,
            caller,
            _database: database,
            server,
        }
    }

    /// The same application (same database, accounts and mail) served through a context
    /// changed by `change`, such as `|ctx| ctx.with_push(Some(..))`.
    pub async fn reconfigured(mut self, change: impl FnOnce(Context) -> Context) -> TestApp {
        self.ctx = change(self.ctx.clone());
        let service = Rc::new(init_service(parley_api::app(self.ctx.clone())).await);
        self.caller = Rc::new(move |request| {
            let service = service.clone();
            Box::pin(async move {
                let response = call_service(&*service, request).await;
                let status = response.status().as_u16();
                let headers = response.headers().clone();
                let body = read_body(response).await;
                let text = String::from_utf8_lossy(&body).into_owned();
                let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
                Response {
                    status,
                    json,
                    text,
                    bytes: body.to_vec(),
                    headers,
                }
            })
        });
        self
    }

    /// The usual cast of a test: Ann and Bob, members, both in the channel `channel` that Ann
    /// created; returns them and the channel's ID.
    pub async fn ann_and_bob_in(&self, channel: &str) -> (Account, Account, i64) {
        let ann = self
            .create_user("ann@parley.test", "Ann", Role::Member)
            .await;
        let bob = self
            .create_user("bob@parley.test", "Bob", Role::Member)
            .await;
        let id = self.create_channel(&ann, channel, &[&ann, &bob], &[]).await;
        (ann, bob, id)
    }

    /// Creates a user through the actions layer and returns their credentials.
    pub async fn create_user(&self, email: &str, full_name: &str, role: Role) -> Account {
        let password = format!("pw-{email}");
        let created = do_create_user(
            &self.ctx,
            CreateUser {
                email: email.into(),
                full_name: full_name.into(),
                password: Some(password.clone()),
                role,
            },
        )
        .await
        .expect("create user");
        Account {
            user_id: created.user.id,
            email: created.user.api_email(&self.ctx.realm.host),
            api_key: created.api_key,
            password,
        }
    }

    /// Creates a channel as `owner` with these subscribers and extra JSON parameters; returns
    /// its ID.
    pub async fn create_channel(
        &self,
        owner: &Account,
        name: &str,
        members: &[&Account],
        extra: &[(&str, Value)],
    ) -> i64 {
        let ids: Vec<i64> = members.iter().map(|a| a.user_id.0).collect();
        let mut request = self
            .post("/channels/create")
            .as_user(owner)
            .param("name", name)
            .json_param("subscribers", &Value::from(ids));
        for (key, value) in extra {
            request = request.json_param(key, value);
        }
        request.send().await.success()["id"]
            .as_i64()
            .expect("channel id")
    }

    /// The newest message `who` may read (their page of one at `anchor=newest`), or null.
    pub async fn newest_message(&self, who: &Account) -> Value {
        let page = self
            .get("/messages")
            .as_user(who)
            .param("anchor", "newest")
            .param("num_before", "1")
            .param("num_after", "0")
            .send()
            .await
            .success();
        page["messages"].get(0).cloned().unwrap_or(Value::Null)
    }

    /// Sends a channel message as `who`; returns its ID.
    pub async fn send_to_channel(
        &self,
        who: &Account,
        channel: &str,
        topic: &str,
        content: &str,
    ) -> i64 {
        self.post("/messages")
            .as_user(who)
            .param("type", "stream")
            .param("to", channel)
            .param("topic", topic)
            .param("content", content)
            .send()
            .await
            .success()["id"]
            .as_i64()
            .expect("message id")
    }

    /// Sends a direct message as `who` to `to` (a JSON list of user IDs or addresses); returns
    /// its ID.
    pub async fn send_direct(&self, who: &Account, to: Value, content: &str) -> i64 {
        self.post("/messages")
            .as_user(who)
            .param("type", "direct")
            .json_param("to", &to)
            .param("content", content)
            .send()
            .await
            .success()["id"]
            .as_i64()
            .expect("message id")
    }

    /// Inserts `count` members straight into storage (no password hashing, no events), for
    /// benchmarks that need many users; their API keys are their index, zero-padded. Other
    /// nodes of a cluster must invalidate their organization cache themselves.
    pub async fn create_users_fast(&self, prefix: &str, count: usize) -> Vec<Account> {
        let prefix = prefix.to_owned();
        let host = self.ctx.realm.host.clone();
        let key = |i: usize| format!("{:0>32}", i);
        let made = self
            .ctx
            .db
            .transaction(move |conn| {
                let mut made = Vec::new();
                for i in 0..count {
                    let new = parley_storage::users::NewUser {
                        delivery_email: format!("{prefix}{i}@{host}"),
                        full_name: format!("{prefix} {i}"),
                        password_hash: None,
                        api_key: key(i),
                        role: Role::Member,
                        bot_type: None,
                        bot_owner_id: None,
                        timezone: String::new(),
                        date_joined: 0,
                        email_address_visibility:
                            parley_domain::user::EmailAddressVisibility::Everyone,
                        can_create_users: false,
                    };
                    let id = parley_storage::users::insert(conn, &new)?;
                    made.push(Account {
                        user_id: id,
                        email: new.delivery_email,
                        api_key: key(i),
                        password: String::new(),
                    });
                }
                Ok::<_, parley_storage::StorageError>(made)
            })
            .await;
        // Written around the actions, so the organization cache (role groups) must forget.
        self.ctx.events.realm_cache().invalidate();
        made.expect("insert users")
    }

    /// Registers an event queue for `who` with these extra parameters (JSON values); returns
    /// the register response.
    pub async fn register(&self, who: &Account, params: &[(&str, Value)]) -> Value {
        let mut request = self.post("/register").as_user(who);
        for (key, value) in params {
            request = request.json_param(key, value);
        }
        request.send().await.success()
    }

    /// Registers an event queue for `who` with `params`; returns its ID.
    pub async fn register_queue(&self, who: &Account, params: &[(&str, Value)]) -> String {
        self.register(who, params).await["queue_id"]
            .as_str()
            .expect("queue_id")
            .to_owned()
    }

    /// The events of a queue after `last_event_id`, without waiting.
    pub async fn events(&self, who: &Account, queue_id: &str, last_event_id: i64) -> Vec<Value> {
        let response = self
            .get("/events")
            .as_user(who)
            .param("queue_id", queue_id)
            .param("last_event_id", last_event_id)
            .param("dont_block", "true")
            .send()
            .await
            .success();
        response["events"].as_array().cloned().unwrap_or_default()
    }

    /// Events of a queue of these types only (heartbeats and others dropped).
    pub async fn events_of(&self, who: &Account, queue_id: &str, types: &[&str]) -> Vec<Value> {
        self.events(who, queue_id, -1)
            .await
            .into_iter()
            .filter(|e| types.contains(&e["type"].as_str().unwrap_or("")))
            .collect()
    }

    /// A request to `/api/v1{path}`.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder<'_> {
        RequestBuilder {
            app: self,
            method,
            path: format!("/api/v1{path}"),
            params: Vec::new(),
            auth: None,
            body: None,
            content_type: None,
            headers: Vec::new(),
        }
    }

    /// A request to `/json{path}`, the web client's scope of the API (no credentials: add a
    /// session cookie, or use a [`Browser`]).
    pub fn json_request(&self, method: Method, path: &str) -> RequestBuilder<'_> {
        let mut builder = self.request(method, "");
        builder.path = format!("/json{path}");
        builder
    }

    /// A browser with an empty cookie jar, to use the web client's pages and `/json`.
    pub fn browser(&self) -> Browser<'_> {
        Browser {
            app: self,
            jar: std::cell::RefCell::new(std::collections::BTreeMap::new()),
        }
    }

    /// A request of any method to a path as given (outside `/api/v1` or raw).
    pub fn page(&self, method: Method, path: &str) -> RequestBuilder<'_> {
        let mut builder = self.request(method, "");
        builder.path = path.to_owned();
        builder
    }

    /// A GET of a path outside `/api/v1` (pages such as confirmation links).
    pub fn get_page(&self, path: &str) -> RequestBuilder<'_> {
        let mut builder = self.request(Method::GET, "");
        builder.path = path.to_owned();
        builder
    }

    /// A POST of a path outside `/api/v1` (form submissions of pages such as `/join/{key}/`).
    pub fn post_page(&self, path: &str) -> RequestBuilder<'_> {
        let mut builder = self.request(Method::POST, "");
        builder.path = path.to_owned();
        builder
    }

    pub fn get(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::GET, path)
    }

    pub fn post(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::POST, path)
    }

    pub fn patch(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::PATCH, path)
    }

    pub fn delete(&self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::DELETE, path)
    }
}

/// Builds one request: parameters go in the query string for GET and in a form body otherwise.
pub struct RequestBuilder<'a> {
    app: &'a TestApp,
    method: Method,
    path: String,
    params: Vec<(String, String)>,
    auth: Option<String>,
    body: Option<Vec<u8>>,
    content_type: Option<String>,
    headers: Vec<(String, String)>,
}

impl RequestBuilder<'_> {
    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds a cookie (all cookies travel in one `Cookie` header).
    pub fn cookie(mut self, name: &str, value: &str) -> Self {
        match self.headers.iter_mut().find(|(n, _)| n == "Cookie") {
            Some((_, cookies)) => cookies.push_str(&format!("; {name}={value}")),
            None => self
                .headers
                .push(("Cookie".into(), format!("{name}={value}"))),
        }
        self
    }

    /// Authenticates as `account` with HTTP Basic.
    pub fn as_user(self, account: &Account) -> Self {
        self.basic_auth(&account.email, &account.api_key)
    }

    /// Sends this raw Basic username and password.
    pub fn basic_auth(mut self, user: &str, password: &str) -> Self {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        self.auth = Some(format!("Basic {token}"));
        self
    }

    /// Sends this raw `Authorization` header.
    pub fn authorization(mut self, value: &str) -> Self {
        self.auth = Some(value.to_owned());
        self
    }

    /// Adds a text parameter.
    pub fn param(mut self, name: &str, value: impl ToString) -> Self {
        self.params.push((name.to_owned(), value.to_string()));
        self
    }

    /// Adds a JSON-encoded parameter.
    pub fn json_param(self, name: &str, value: &Value) -> Self {
        self.param(name, value.to_string())
    }

    /// Replaces the body with a `multipart/form-data` body holding these `(file name, content
    /// type, bytes)` files, as clients upload them.
    pub fn files(self, files: &[(&str, &str, &[u8])]) -> Self {
        const BOUNDARY: &str = "parleyboundary42";
        let mut body = Vec::new();
        for (i, (name, kind, bytes)) in files.iter().enumerate() {
            body.extend_from_slice(
                format!(
                    "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file{i}\"; \
                     filename=\"{name}\"\r\nContent-Type: {kind}\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        self.raw_body(body, &format!("multipart/form-data; boundary={BOUNDARY}"))
    }

    /// Sends the parameters as the text fields of a `multipart/form-data` body, as zulip-js and
    /// `curl -F` do, instead of a form-urlencoded one.
    pub fn multipart(self) -> Self {
        const BOUNDARY: &str = "parleyfields7";
        let mut body = Vec::new();
        for (name, value) in &self.params {
            body.extend_from_slice(
                format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n")
                    .as_bytes(),
            );
            body.extend_from_slice(value.as_bytes());
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        let mut builder = self.raw_body(body, &format!("multipart/form-data; boundary={BOUNDARY}"));
        builder.params.clear();
        builder
    }

    /// Replaces the body with raw bytes.
    pub fn raw_body(mut self, body: impl Into<Vec<u8>>, content_type: &str) -> Self {
        self.body = Some(body.into());
        self.content_type = Some(content_type.to_owned());
        self
    }

    /// Sends the request to the app.
    pub async fn send(self) -> Response {
        let encoded: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    utf8_percent_encode(k, NON_ALPHANUMERIC),
                    utf8_percent_encode(v, NON_ALPHANUMERIC)
                )
            })
            .collect();
        let form = encoded.join("&");
        let in_query = self.method == Method::GET;
        let uri = if in_query && !form.is_empty() {
            format!("{}?{form}", self.path)
        } else {
            self.path.clone()
        };
        let mut request = TestRequest::default().method(self.method.clone()).uri(&uri);
        if let Some(auth) = &self.auth {
            request = request.insert_header(("Authorization", auth.as_str()));
        }
        for (name, value) in &self.headers {
            request = request.append_header((name.as_str(), value.as_str()));
        }
        match (self.body, in_query) {
            (Some(body), _) => {
                if let Some(content_type) = &self.content_type {
                    request = request.insert_header(("Content-Type", content_type.as_str()));
                }
                request = request.set_payload(body);
            }
            (None, false) if !form.is_empty() => {
                request = request
                    .insert_header(("Content-Type", "application/x-www-form-urlencoded"))
                    .set_payload(form);
            }
            _ => {}
        }
        let response = (self.app.caller)(request.to_request()).await;
        if self.app.check_shapes {
            check_shapes(&self.method, &self.path, &response);
        }
        response
    }
}

/// Fails the test when a success body under `/api/v1` or `/json` (the same endpoints), or an
/// event it carries, differs from the API description.
fn check_shapes(method: &Method, path: &str, response: &Response) {
    let Some(path) = path
        .strip_prefix("/api/v1")
        .or_else(|| path.strip_prefix("/json"))
    else {
        return;
    };
    if response.status != 200 || response.json["result"] != "success" {
        return;
    }
    if let Err(problem) = openapi::check_response(method.as_str(), path, &response.json) {
        panic!(
            "{problem}\nbody: {}",
            openapi::shorten(&response.text, 3000)
        );
    }
    if *method == Method::GET && path.split('?').next() == Some("/events") {
        for event in response.json["events"].as_array().into_iter().flatten() {
            if let Err(problem) = openapi::check_event(event) {
                panic!("{problem}");
            }
        }
    }
}

/// A browser: a cookie jar in front of the app. Responses' `Set-Cookie` headers fill the jar;
/// every request sends its cookies, and `/json` requests the `X-CSRFToken` header from the
/// `csrftoken` cookie, as the web client does.
pub struct Browser<'a> {
    app: &'a TestApp,
    jar: std::cell::RefCell<std::collections::BTreeMap<String, String>>,
}

/// The `Set-Cookie` headers of a response, as sent.
pub fn set_cookies(response: &Response) -> Vec<String> {
    response
        .headers
        .get_all("set-cookie")
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect()
}

/// The `Set-Cookie` header of the cookie `name`, if the response sets it.
pub fn set_cookie(response: &Response, name: &str) -> Option<String> {
    set_cookies(response)
        .into_iter()
        .find(|c| c.starts_with(&format!("{name}=")))
}

impl<'a> Browser<'a> {
    /// The value of a cookie in the jar.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.jar.borrow().get(name).cloned()
    }

    /// Puts a cookie in the jar (or takes it out with None).
    pub fn set(&self, name: &str, value: Option<&str>) {
        let mut jar = self.jar.borrow_mut();
        match value {
            Some(value) => jar.insert(name.to_owned(), value.to_owned()),
            None => jar.remove(name),
        };
    }

    /// A request to a path as given, carrying the jar's cookies.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder<'a> {
        let mut builder = self.app.page(method, path);
        for (name, value) in self.jar.borrow().iter() {
            builder = builder.cookie(name, value);
        }
        builder
    }

    /// A request to `/json{path}` with the cookies and, from the `csrftoken` cookie, the
    /// `X-CSRFToken` header.
    pub fn json(&self, method: Method, path: &str) -> RequestBuilder<'a> {
        let mut builder = self.request(method, &format!("/json{path}"));
        if let Some(token) = self.cookie("csrftoken") {
            builder = builder.header("X-CSRFToken", &token);
        }
        builder
    }

    /// Sends a request and keeps the cookies its response sets.
    pub async fn send(&self, builder: RequestBuilder<'_>) -> Response {
        let response = builder.send().await;
        for header in set_cookies(&response) {
            let pair = header.split(';').next().unwrap_or_default();
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let removed = value.is_empty() || header.to_ascii_lowercase().contains("max-age=0");
            self.set(name.trim(), (!removed).then_some(value.trim()));
        }
        response
    }

    /// GET a page.
    pub async fn get(&self, path: &str) -> Response {
        self.send(self.request(Method::GET, path)).await
    }

    /// POST a form to a page.
    pub async fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> Response {
        let mut builder = self.request(Method::POST, path);
        for (name, value) in fields {
            builder = builder.param(name, value);
        }
        self.send(builder).await
    }

    /// Opens the login page and submits it with these credentials (and the page's CSRF
    /// token); returns the answer to the submission.
    pub async fn log_in(&self, username: &str, password: &str) -> Response {
        let page = self.get("/login/").await;
        assert_eq!(page.status, 200, "{}", page.text);
        let token = self
            .cookie("csrftoken")
            .expect("the login page sets csrftoken");
        assert!(
            page.text.contains(&token),
            "the form carries the cookie's token"
        );
        self.post_form(
            "/login/",
            &[
                ("username", username),
                ("password", password),
                ("csrfmiddlewaretoken", &token),
            ],
        )
        .await
    }

    /// Logs in as `account`, asserting that it worked.
    pub async fn log_in_as(&self, account: &Account) -> &Self {
        let response = self.log_in(&account.email, &account.password).await;
        assert_eq!(response.status, 303, "{}", response.text);
        assert!(self.cookie("sessionid").is_some());
        self
    }
}
