"""The Zulip mobile app (zulip-flutter) against the real `parley` binary: the requests it sends,
checked against what its decoders demand.

The app decodes answers strictly (see mobile_app_model.py, a model written from reading the
app's lib/api sources): one required field missing, null or of the wrong type and the answer is
"malformed" — a failed login, a /register retried forever, an event queue that stops. This script
starts `parley` on an empty database, lets the owner set up an organization with plain API calls
(people, channels, a custom profile field, a custom emoji, a user group, channel and direct
messages with edits, moves, reactions, stars, mentions and an empty topic), then plays the app for
one member, sending each request exactly as the app encodes it (form bodies and query strings
whose non-string values are JSON, the app's User-Agent):

- login: GET /server_settings, POST /fetch_api_key (and a wrong password), everything after that
  at the `realm_uri` the server announced;
- loading: POST /register with the app's parameters (`idle_queue_timeout`, `apply_markdown`,
  `client_gravatar`, `slim_presence`, `client_capabilities`), the `server_emoji_data_url`
  download, POST /users/me/presence;
- message lists: GET /messages for the combined feed (newest and first unread), a channel, a
  topic (also with `with`), a direct-message and a group conversation, mentions, starred, a
  keyword search, and the fetch-older / fetch-newer pages; GET /messages/{id}; channel topics;
- actions: sending (with `queue_id` and `local_id`), reactions, flags, mark as read for a narrow
  and as unread from a message, editing (with `prev_content_sha256`), moving and deleting,
  subscription settings, joining and leaving, user settings, typing, status, topic visibility,
  an upload and its temporary URL, the legacy push-token registration;
- GET /events long-polls after each change (the app's own and others': edits, moves, channel
  permissions, renames and archiving, roles, deactivation, groups, emoji, profile fields, a
  notification setting reset to inherit from another client), and every event is checked with
  the decoder the app picks for its type and op; a heartbeat, `dont_block`, a bad queue id, a
  wrong API key; a second /register at the end.

Every answer body is checked recursively; a failure names the JSON path, what the app expects
and what came. Ends with the line "mobile-app: N passed, M failed".

Usage: test_mobile_app.py --parley PATH [--database-url URL]
"""

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import re
import traceback
import urllib.parse

import requests

import checks
import mobile_app_model as model
from checks import Server, check, finish, free_port

# What the app sends as User-Agent (ApiConnection.addUserAgent), and its override for sending.
APP_USER_AGENT = "ZulipFlutter/30.0.262+262 (Android 14)"
SEND_USER_AGENT = "ZulipMobile/flutter"
HEARTBEAT_SECONDS = 2
TIMEOUT = 15  # seconds for an ordinary request
WATCHDOG_SECONDS = 150  # the whole script; normally it takes a few seconds
# The app's registerQueue parameters (lib/api/route/events.dart).
CLIENT_CAPABILITIES = {
    "notification_settings_null": True,
    "bulk_message_deletion": True,
    "user_avatar_url_field_optional": True,
    "stream_typing_notifications": True,
    "user_settings_object": True,
    "include_deactivated_groups": True,
    "empty_topic_name": True,
    "individual_emoji_changes": True,
}
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0000003010100c9fe92ef"
    "0000000049454e44ae426082"
)


class Raw(str):
    """A parameter the app sends as it is (RawParameter); everything else is JSON-encoded."""


def app_encode(params):
    """ApiConnection's encodeParameters: RawParameter as is, anything else through jsonEncode
    (compact, non-ASCII kept)."""
    out = {}
    for key, value in (params or {}).items():
        if value is None:
            continue  # the app's `'key': ?value` leaves the key out
        out[key] = str(value) if isinstance(value, Raw) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return out


def read_zuliprc(path):
    values = {}
    for line in open(path, encoding="utf-8"):
        if "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values




class Plain:
    """Setup calls as an ordinary API user (not the app): form bodies, JSON for non-strings."""

    def __init__(self, site, email, key):
        self.site = site.rstrip("/")
        self.email = email
        self.session = requests.Session()
        self.session.auth = (email, key)

    def call(self, method, path, files=None, **params):
        data = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
        kwargs = {"params": data} if method == "GET" else {"data": data}
        res = self.session.request(method, f"{self.site}/api/v1/{path}", files=files, timeout=TIMEOUT, **kwargs)
        try:
            return res.json()
        except ValueError:
            return {"result": "error", "status": res.status_code, "body": res.text[:500]}

    def ok(self, label, method, path, files=None, **params):
        res = self.call(method, path, files=files, **params)
        check(f"setup: {label}", res.get("result") == "success", res)
        return res


def api_key(site, email, password):
    res = requests.post(f"{site}/api/v1/fetch_api_key", data={"username": email, "password": password}, timeout=TIMEOUT)
    try:
        return res.json().get("api_key", "")
    except ValueError:
        return ""


class App:
    """The app's ApiConnection: Basic auth, its User-Agent, GET parameters in the query string,
    POST/PATCH/DELETE parameters as an application/x-www-form-urlencoded body (package:http's
    bodyFields, which adds `charset=utf-8`)."""

    def __init__(self, realm_url, email=None, api_key=None):
        self.realm_url = realm_url.rstrip("/")
        self.auth = (email, api_key) if email else None
        self.session = requests.Session()

    def request(self, method, path, params=None, timeout=TIMEOUT, user_agent=None, files=None, url=None, auth=True):
        headers = {"User-Agent": user_agent or APP_USER_AGENT}
        url = url or f"{self.realm_url}/api/v1/{path}"
        body = None
        if method == "GET":
            query = urllib.parse.urlencode(app_encode(params))
            if query:
                url = f"{url}?{query}"
        elif files is None and params is not None:
            body = urllib.parse.urlencode(app_encode(params)).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8"
        res = self.session.request(method, url, data=body, files=files, headers=headers,
                                   auth=self.auth if auth else None, timeout=timeout)
        try:
            body = res.json()
        except ValueError:
            body = None
        return res.status_code, body, res.text


def decode(label, type_, status, body, text, expect_status=200):
    """The app's ApiConnection.send: the status, a JSON object body, then fromJson."""
    ok = status == expect_status and isinstance(body, dict)
    check(f"{label}: HTTP {expect_status} with a JSON object", ok, f"HTTP {status}: {text[:1500]}")
    if not ok:
        return body if isinstance(body, dict) else {}
    errors = model.validate(type_, body)
    detail = "\n" + model.format_errors(errors)
    if errors and type_ is model.GET_EVENTS:
        # Show the events the app would choke on, whole.
        bad = sorted({int(m.group(1)) for p, _, _ in errors for m in [re.match(r"\$\.events\[(\d+)\]", p)] if m})
        detail += "".join(f"\n  event {i}: {json.dumps(body['events'][i], ensure_ascii=False)[:1500]}" for i in bad)
    check(f"{label}: the app decodes it as {type_.name}", not errors, detail)
    return body


def app_call(app, label, method, path, params=None, type_=None, **kwargs):
    """An app request whose answer the app reads with `type_` (or ignores, `(_) {}`; then only
    the status and a JSON object matter, as in ApiConnection.send)."""
    status, body, text = app.request(method, path, params, **kwargs)
    if type_ is None:
        ok = status == 200 and isinstance(body, dict) and body.get("result") == "success"
        check(f"{label}: HTTP 200 success", ok, f"HTTP {status}: {text[:1500]}")
        return body if isinstance(body, dict) else {}
    return decode(label, type_, status, body, text)


def narrow_channel(stream_id):
    return {"operator": "channel", "operand": stream_id}


def narrow_topic(topic):
    return {"operator": "topic", "operand": topic}


def narrow_dm(user_ids):
    return {"operator": "dm", "operand": sorted(user_ids)}


def narrow_is(operand):
    return {"operator": "is", "operand": operand}


class EventPoller:
    """The app's UpdateMachine.poll: GET /events with queue_id (raw) and last_event_id (JSON),
    long-polling; every answer decoded as GetEventsResult."""

    def __init__(self, app, queue_id, last_event_id, longpoll_timeout):
        self.app = app
        self.queue_id = queue_id
        self.last_event_id = last_event_id
        self.timeout = max(longpoll_timeout, HEARTBEAT_SECONDS) + 10
        self.events = []
        self.polls = 0

    def poll(self, dont_block=None, label=None):
        self.polls += 1
        label = label or f"GET /events (poll {self.polls})"
        status, body, text = self.app.request("GET", "events", {
            "queue_id": Raw(self.queue_id),
            "last_event_id": self.last_event_id,
            "dont_block": dont_block,
        }, timeout=self.timeout)
        body = decode(label, model.GET_EVENTS, status, body, text)
        events = body.get("events") if isinstance(body.get("events"), list) else []
        ids = [e.get("id") for e in events if isinstance(e, dict)]
        if ids:
            check(f"{label}: event ids increase past last_event_id {self.last_event_id}",
                  all(isinstance(i, int) for i in ids) and ids == sorted(set(ids)) and ids[0] > self.last_event_id, ids)
            if all(isinstance(i, int) for i in ids):
                self.last_event_id = max(self.last_event_id, max(ids))
        self.events.extend(e for e in events if isinstance(e, dict))
        return events

    def until(self, label, expected, deadline_seconds=10):
        """Polls until every (name, predicate) in `expected` matched an event; one check each."""
        deadline = time.time() + deadline_seconds
        start = len(self.events)
        pending = dict(expected)
        while pending and time.time() < deadline:
            self.poll()
            for name, predicate in list(pending.items()):
                if any(safe(predicate, e) for e in self.events[start:]):
                    del pending[name]
        for name in expected:
            check(f"{label}: event {name}", name not in pending,
                  f"not seen in {json.dumps(self.events[start:], ensure_ascii=False)[:3000]}")


def safe(predicate, event):
    try:
        return bool(predicate(event))
    except Exception:
        return False


def run(site, zuliprc):
    rc = read_zuliprc(zuliprc)
    owner = Plain(site, rc["email"], rc["key"])
    me = owner.call("GET", "users/me")
    owner_id = me.get("user_id")

    # ---- The organization, set up with plain API calls.
    people = {}
    for short, name in [("ada", "Ada Lovelace"), ("bob", "Bob Builder"), ("cy", "Cy Young")]:
        made = owner.ok(f"create user {short}", "POST", "users",
                        email=f"{short}@parley.local", password=f"{short}-password-123", full_name=name)
        people[short] = made.get("user_id")
    ada_id, bob_id, cy_id = people["ada"], people["bob"], people["cy"]
    bob = Plain(site, "bob@parley.local", api_key(site, "bob@parley.local", "bob-password-123"))
    ada_plain = Plain(site, "ada@parley.local", api_key(site, "ada@parley.local", "ada-password-123"))

    field = owner.ok("a custom profile field", "POST", "realm/profile_fields", name="Team", hint="Your team", field_type=1)
    owner.ok("Ada's profile data", "PATCH", f"users/{ada_id}",
             profile_data=[{"id": field.get("id"), "value": "Core **apps**"}])
    owner.ok("channels mobile and random", "POST", "users/me/subscriptions",
             subscriptions=[{"name": "mobile", "description": "The **app** channel"}, {"name": "random"}],
             principals=[owner_id, ada_id, bob_id])
    owner.ok("a private channel", "POST", "users/me/subscriptions",
             subscriptions=[{"name": "secret"}], principals=[owner_id, ada_id], invite_only=True)
    streams = {s["name"]: s["stream_id"] for s in owner.call("GET", "streams").get("streams", [])}
    mobile, random_, secret = streams.get("mobile"), streams.get("random"), streams.get("secret")
    owner.ok("a custom emoji", "POST", "realm/emoji/parley_party", files={"f": ("party.png", PNG_1X1, "image/png")})
    owner.ok("a user group", "POST", "user_groups/create", name="apps", description="App people", members=[ada_id, bob_id])

    def send(client, label, **params):
        return client.ok(f"send {label}", "POST", "messages", **params).get("id")

    m_mention = send(owner, "a mention", type="stream", to="mobile", topic="greetings",
                     content="hello @**Ada Lovelace** :smile: see `code` and https://example.com")
    m_bob = send(bob, "a channel message", type="stream", to="mobile", topic="greetings", content="hi there, hello")
    m_edited = send(owner, "a message to edit", type="stream", to="mobile", topic="plans", content="first plan")
    owner.ok("edit its content", "PATCH", f"messages/{m_edited}", content="second plan")
    m_moved = send(owner, "a message to move", type="stream", to="random", topic="old topic", content="moving on")
    owner.ok("move its topic", "PATCH", f"messages/{m_moved}", topic="new topic", propagate_mode="change_all")
    m_resolved = send(owner, "a message to resolve", type="stream", to="random", topic="bug", content="fixed?")
    owner.ok("resolve its topic", "PATCH", f"messages/{m_resolved}", topic="\u2714 bug", propagate_mode="change_all")
    m_wildcard = send(owner, "a wildcard mention", type="stream", to="mobile", topic="greetings", content="@**all** meeting now")
    m_empty = send(owner, "a message with an empty topic", type="stream", to="mobile", topic="", content="general chat")
    m_secret = send(owner, "a private-channel message", type="stream", to="secret", topic="x", content="shh")
    m_dm = send(owner, "a direct message", type="direct", to=[ada_id], content="a direct **message**")
    m_group = send(bob, "a group direct message", type="direct", to=[ada_id, cy_id], content="group hello")
    m_own = send(ada_plain, "Ada's own message", type="stream", to="mobile", topic="greetings", content="my own message")
    owner.ok("a unicode reaction", "POST", f"messages/{m_mention}/reactions", emoji_name="smile")
    bob.ok("a custom emoji reaction", "POST", f"messages/{m_mention}/reactions", emoji_name="parley_party")
    ada_plain.ok("Ada stars a message", "POST", "messages/flags", messages=[m_bob], op="add", flag="starred")
    ada_plain.ok("Ada's status", "POST", "users/me/status", status_text="On the train",
                 emoji_name="train", emoji_code="1f686", reaction_type="unicode_emoji")
    ada_plain.ok("Ada's alert word", "POST", "users/me/alert_words", alert_words=["parley"])
    ada_plain.ok("Ada mutes a topic", "POST", "user_topics", stream_id=random_, topic="new topic", visibility_policy=1)
    ada_plain.ok("Ada's saved snippet", "POST", "saved_snippets", title="Thanks", content="Thank you!")
    bob.ok("Bob's presence", "POST", "users/me/presence", status="active", slim_presence="true")

    # ---- Login, as the app does it (lib/widgets/login.dart).
    anonymous = App(site)
    status, body, text = anonymous.request("GET", "server_settings", auth=False)
    settings = decode("GET /server_settings", model.SERVER_SETTINGS, status, body, text)
    realm_url = settings.get("realm_uri", "")
    parsed = urllib.parse.urlparse(realm_url if isinstance(realm_url, str) else "")
    check("server_settings: realm_uri is an absolute http(s) URL at this server",
          parsed.scheme in ("http", "https") and parsed.netloc == urllib.parse.urlparse(site).netloc, realm_url)
    check("server_settings: the app offers the password form (email_auth_enabled or ldap)",
          settings.get("email_auth_enabled") is True or settings.get("authentication_methods", {}).get("ldap") is True, settings)
    check("server_settings: feature level is allowed by the app (>= 277)",
          isinstance(settings.get("zulip_feature_level"), int) and settings["zulip_feature_level"] >= 277, settings.get("zulip_feature_level"))
    if parsed.scheme not in ("http", "https"):
        realm_url = site  # keep going to find more defects

    login = App(realm_url)
    status, body, text = login.request("POST", "fetch_api_key", {
        "username": Raw("ada@parley.local"), "password": Raw("wrong-password")}, auth=False)
    check("POST /fetch_api_key with a wrong password: a 4xx error", isinstance(status, int) and 400 <= status < 500, f"HTTP {status}: {text[:500]}")
    if isinstance(body, dict):
        errors = model.validate(model.API_ERROR, body)
        check("POST /fetch_api_key with a wrong password: the app reads the error message", not errors, "\n" + model.format_errors(errors))
    status, body, text = login.request("POST", "fetch_api_key", {
        "username": Raw("ada@parley.local"), "password": Raw("ada-password-123")}, auth=False)
    key = decode("POST /fetch_api_key", model.FETCH_API_KEY, status, body, text)
    check("fetch_api_key: user_id is Ada's", key.get("user_id") == ada_id, key)
    app = App(realm_url, key.get("email", "ada@parley.local"), key.get("api_key", ""))

    # ---- Loading (UpdateMachine.load).
    register_params = {
        "idle_queue_timeout": "mobile",
        "apply_markdown": True,
        "client_gravatar": False,
        "slim_presence": True,
        "client_capabilities": CLIENT_CAPABILITIES,
    }
    snapshot = app_call(app, "POST /register", "POST", "register", register_params, model.INITIAL_SNAPSHOT)
    check_snapshot(snapshot, settings, ada_id, owner_id, bob_id, cy_id,
                   {"mobile": mobile, "random": random_, "secret": secret}, m_bob, m_dm)

    emoji_url = snapshot.get("server_emoji_data_url")
    emoji_parsed = urllib.parse.urlparse(emoji_url if isinstance(emoji_url, str) else "")
    check("register: server_emoji_data_url is an absolute http(s) URL (the app GETs it as is)",
          emoji_parsed.scheme in ("http", "https") and bool(emoji_parsed.netloc), emoji_url)
    if emoji_parsed.scheme in ("http", "https"):
        status, body, text = app.request("GET", None, url=emoji_url, auth=False)
        data = decode("GET server_emoji_data_url", model.SERVER_EMOJI_DATA, status, body, text)
        names = data.get("code_to_names", {})
        check("emoji data: names common emoji (1f642 smile, 1f44d +1, 1f419 octopus)",
              isinstance(names, dict) and "smile" in names.get("1f642", []) and "+1" in names.get("1f44d", [])
              and "octopus" in names.get("1f419", []),
              {k: names.get(k) for k in ("1f642", "1f44d", "1f419")} if isinstance(names, dict) else names)

    presence = app_call(app, "POST /users/me/presence", "POST", "users/me/presence", {
        "ping_only": False, "status": Raw("active"), "new_user_input": True, "slim_presence": True,
    }, model.UPDATE_PRESENCE)
    check("presence: Bob is in presences", str(bob_id) in (presence.get("presences") or {}), presence)

    # ---- Message lists (MessageListView.fetchInitial / fetchOlder / fetchNewer).
    visible = [m_mention, m_bob, m_edited, m_moved, m_resolved, m_wildcard, m_empty, m_secret, m_dm, m_group, m_own]
    lists = [
        ("combined feed, newest", [], "newest", visible),
        ("combined feed, first unread", [], "first_unread", [m_dm]),
        ("channel", [narrow_channel(mobile)], "newest", [m_mention, m_bob, m_edited, m_wildcard, m_empty, m_own]),
        ("topic", [narrow_channel(mobile), narrow_topic("greetings")], "newest", [m_mention, m_bob, m_wildcard, m_own]),
        ("topic with `with`", [narrow_channel(mobile), narrow_topic("greetings"), {"operator": "with", "operand": m_bob}],
         "newest", [m_mention, m_bob, m_wildcard, m_own]),
        ("empty topic", [narrow_channel(mobile), narrow_topic("")], "newest", [m_empty]),
        ("resolved topic", [narrow_channel(random_), narrow_topic("\u2714 bug")], "newest", [m_resolved]),
        ("direct messages with the owner", [narrow_dm([ada_id, owner_id])], "newest", [m_dm]),
        ("group direct messages", [narrow_dm([ada_id, bob_id, cy_id])], "newest", [m_group]),
        ("mentions", [narrow_is("mentioned")], "newest", [m_mention, m_wildcard]),
        ("starred", [narrow_is("starred")], "newest", [m_bob]),
        ("keyword search", [{"operator": "search", "operand": "hello"}], "newest", [m_mention, m_bob]),
    ]
    for label, narrow, anchor, expected in lists:
        page = app_call(app, f"GET /messages ({label})", "GET", "messages", {
            "narrow": narrow, "anchor": Raw(anchor), "num_before": 100, "num_after": 100,
            "allow_empty_topic_name": True,
        }, model.GET_MESSAGES)
        ids = [m.get("id") for m in page.get("messages", []) if isinstance(m, dict)]
        check(f"GET /messages ({label}): ids ascending", ids == sorted(ids), ids)
        dms = [m for m in page.get("messages", []) if isinstance(m, dict) and m.get("type") == "private"]
        if dms:
            # DmMessage.allRecipientIds: everyone in the conversation, the self user included
            # (DmNarrow, unreads and the recipient header rely on it).
            check(f"GET /messages ({label}): direct messages list the self user and the sender in display_recipient",
                  all({ada_id, m.get("sender_id")} <= {r.get("id") for r in m.get("display_recipient") or [] if isinstance(r, dict)}
                      for m in dms), [(m.get("id"), m.get("display_recipient")) for m in dms])
        check(f"GET /messages ({label}): has the expected messages", set(expected) <= set(ids),
              f"expected {expected}, got {ids}")
    for label, before, after in [("fetch older", 100, 0), ("fetch newer", 0, 100)]:
        anchor = m_bob if before else m_mention
        page = app_call(app, f"GET /messages ({label})", "GET", "messages", {
            "narrow": [narrow_channel(mobile)], "anchor": Raw(str(anchor)), "include_anchor": False,
            "num_before": before, "num_after": after, "allow_empty_topic_name": True,
        }, model.GET_MESSAGES)
        ids = [m.get("id") for m in page.get("messages", []) if isinstance(m, dict)]
        check(f"GET /messages ({label}): excludes the anchor", anchor not in ids and ids == sorted(ids), ids)
    single = app_call(app, "GET /messages/{id}", "GET", f"messages/{m_edited}", {"allow_empty_topic_name": True}, model.GET_MESSAGE)
    check("GET /messages/{id}: the edited message", single.get("message", {}).get("id") == m_edited, single)
    topics = app_call(app, "GET /users/me/{channel}/topics", "GET", f"users/me/{mobile}/topics",
                      {"allow_empty_topic_name": True}, model.GET_CHANNEL_TOPICS)
    names = [t.get("name") for t in topics.get("topics", []) if isinstance(t, dict)]
    check("channel topics: greetings, plans and the empty topic", {"greetings", "plans", ""} <= set(names), names)
    if snapshot.get("realm_enable_read_receipts") is True:
        app_call(app, "GET /messages/{id}/read_receipts", "GET", f"messages/{m_bob}/read_receipts", None, model.GET_READ_RECEIPTS)
    status, body, text = app.request("POST", "user_uploads", files={"file": ("notes.txt", b"some notes", "text/plain")})
    upload = decode("POST /user_uploads", model.UPLOAD_FILE, status, body, text)
    # Opening it: UserUploadLink -> getFileTemporaryUrl -> a URL the browser opens without auth.
    match = re.fullmatch(r"/user_uploads/(\d+)/(.+)", upload.get("uri") or "")
    check("upload: uri is /user_uploads/REALM_ID/PATH (UserUploadLink)", match is not None, upload.get("uri"))
    if match:
        temp = app_call(app, "GET /user_uploads/{realm_id}/{path} (temporary URL)", "GET",
                        f"user_uploads/{match.group(1)}/{match.group(2)}", None, model.GET_FILE_TEMPORARY_URL)
        if isinstance(temp.get("url"), str):
            res = requests.get(urllib.parse.urljoin(realm_url + "/", temp["url"]), timeout=TIMEOUT)
            check("the temporary URL serves the file without credentials",
                  res.status_code == 200 and res.content == b"some notes", f"HTTP {res.status_code}")
    # Legacy push-token registration (the app's _legacyRegisterToken, below feature level 468).
    status, body, text = app.request("POST", "users/me/android_gcm_reg_id", {"token": Raw("fcm-token-" + "x" * 100)})
    ok = (status == 200 and isinstance(body, dict) and body.get("result") == "success") or (
        isinstance(status, int) and 400 <= status < 500 and isinstance(body, dict) and not model.validate(model.API_ERROR, body))
    check("POST /users/me/android_gcm_reg_id: success or an error the app reads", ok, f"HTTP {status}: {text[:500]}")

    # ---- The event queue, as the app's UpdateMachine polls it.
    poller = EventPoller(app, snapshot.get("queue_id") or "", snapshot.get("last_event_id", -1),
                         snapshot.get("event_queue_longpoll_timeout_seconds") or 90)
    run_events(app, owner, bob, ada_plain, poller, snapshot, people, owner_id,
               {"mobile": mobile, "random": random_, "secret": secret},
               {"mention": m_mention, "bob": m_bob, "edited": m_edited, "secret": m_secret, "own": m_own},
               upload.get("uri"))

    # ---- A second load, after all that.
    again = app_call(app, "POST /register again", "POST", "register", register_params, model.INITIAL_SNAPSHOT)
    policies = {(t.get("topic_name"), t.get("visibility_policy")) for t in again.get("user_topics") or [] if isinstance(t, dict)}
    check("register again: Cy unmuted, Ada's status cleared, the topic policies as left",
          again.get("muted_users") == [] and str(ada_id) not in (again.get("user_status") or {})
          and ("new topic", 1) in policies and not any(name == "moved plans" for name, _ in policies),
          {k: again.get(k) for k in ("muted_users", "user_status", "user_topics")})
    inactive = [u.get("email") for u in again.get("realm_non_active_users") or [] if isinstance(u, dict)]
    check("register again: the deactivated user is in realm_non_active_users", "dee@parley.local" in inactive, inactive)
    names = {s_.get("name") for s_ in again.get("streams") or [] if isinstance(s_, dict)}
    check("register again: the renamed channel, not the archived one", "random-renamed" in names and "announce" not in names, names)
    check("register again: a new queue", again.get("queue_id") not in (None, snapshot.get("queue_id")), again.get("queue_id"))

    bad = App(realm_url, "ada@parley.local", "x" * 32)
    status, body, text = bad.request("POST", "register", register_params)
    check("POST /register with a wrong key: HTTP 401 (the app then stops retrying)", status == 401, f"HTTP {status}: {text[:500]}")
    if isinstance(body, dict):
        errors = model.validate(model.API_ERROR, body)
        check("POST /register with a wrong key: an error the app reads", not errors, "\n" + model.format_errors(errors))


def check_snapshot(snapshot, settings, ada_id, owner_id, bob_id, cy_id, channels, starred, unread_dm):
    """What the app's stores do with the snapshot beyond decoding it."""
    check("register: queue_id is a string (the store throws without it)", isinstance(snapshot.get("queue_id"), str), snapshot.get("queue_id"))
    check("register: the same feature level as server_settings",
          snapshot.get("zulip_feature_level") == settings.get("zulip_feature_level"),
          (snapshot.get("zulip_feature_level"), settings.get("zulip_feature_level")))
    users = [u.get("user_id") for u in snapshot.get("realm_users", []) if isinstance(u, dict)]
    check("register: realm_users has the self user (UserStore asserts it)", ada_id in users, users)
    check("register: realm_users has everyone", {owner_id, bob_id, cy_id} <= set(users), users)
    subs = {s.get("stream_id") for s in snapshot.get("subscriptions", []) if isinstance(s, dict)}
    check("register: subscriptions are mobile, random and secret", set(channels.values()) <= subs, subs)
    check("register: starred_messages has the starred message", starred in (snapshot.get("starred_messages") or []),
          snapshot.get("starred_messages"))
    unread = snapshot.get("unread_msgs") or {}
    pms = [p for p in unread.get("pms", []) if isinstance(p, dict)]
    check("register: unread_msgs.pms has the owner's direct message",
          any(p.get("other_user_id") == owner_id and unread_dm in p.get("unread_message_ids", []) for p in pms), unread)
    huddles = [h.get("user_ids_string") for h in unread.get("huddles", []) if isinstance(h, dict)]
    check("register: unread_msgs.huddles has the group conversation",
          ",".join(map(str, sorted([ada_id, bob_id, cy_id]))) in huddles, huddles)
    check("register: realm_emoji has the custom emoji",
          any(e.get("name") == "parley_party" for e in (snapshot.get("realm_emoji") or {}).values() if isinstance(e, dict)),
          snapshot.get("realm_emoji"))
    me = next((u for u in snapshot.get("realm_users", []) if isinstance(u, dict) and u.get("user_id") == ada_id), {})
    check("register: Ada's profile_data has the custom field", bool(me.get("profile_data")), me)
    check("register: Ada's status", (snapshot.get("user_status") or {}).get(str(ada_id), {}).get("status_text") == "On the train",
          snapshot.get("user_status"))
    check("register: user_topics has the muted topic",
          any(t.get("topic_name") == "new topic" and t.get("visibility_policy") == 1 for t in snapshot.get("user_topics", []) if isinstance(t, dict)),
          snapshot.get("user_topics"))
    check("register: alert_words", snapshot.get("alert_words") == ["parley"], snapshot.get("alert_words"))
    check("register: event_queue_longpoll_timeout_seconds is positive",
          isinstance(snapshot.get("event_queue_longpoll_timeout_seconds"), int) and snapshot["event_queue_longpoll_timeout_seconds"] > 0,
          snapshot.get("event_queue_longpoll_timeout_seconds"))


def run_events(app, owner, bob, ada_plain, poller, snapshot, people, owner_id, channels, messages, upload_uri):
    ada_id, bob_id, cy_id = people["ada"], people["bob"], people["cy"]
    mobile, random_ = channels["mobile"], channels["random"]
    queue_id = snapshot.get("queue_id") or ""

    # Sending, as the app's outbox does (with queue_id and local_id; read_by_sender true).
    sent = app_call(app, "POST /messages (channel, with local_id)", "POST", "messages", {
        "type": Raw("channel"), "to": mobile, "topic": Raw("greetings"), "content": Raw("sent from the app"),
        "queue_id": Raw(queue_id), "local_id": Raw("1001"), "read_by_sender": True,
    }, model.SEND_MESSAGE)
    dm = app_call(app, "POST /messages (direct)", "POST", "messages", {
        "type": Raw("direct"), "to": [bob_id], "content": Raw("a direct message from the app"),
    }, model.SEND_MESSAGE, user_agent=SEND_USER_AGENT)
    incoming = owner.ok("the owner mentions Ada", "POST", "messages", type="stream", to="mobile",
                        topic="greetings", content="ping @**Ada Lovelace**").get("id")
    bob_dm = bob.ok("Bob writes to Ada", "POST", "messages", type="direct", to=[ada_id], content="psst").get("id")
    poller.until("messages", {
        "message (own channel message, local_message_id 1001, flagged read)": lambda e: e["type"] == "message"
            and e["message"]["id"] == sent.get("id") and e.get("local_message_id") == "1001" and "read" in e["flags"],
        "message (own direct message)": lambda e: e["type"] == "message" and e["message"]["id"] == dm.get("id"),
        "message (mention, flagged mentioned)": lambda e: e["type"] == "message" and e["message"]["id"] == incoming
            and "mentioned" in e["flags"],
        "message (direct, from Bob)": lambda e: e["type"] == "message" and e["message"]["id"] == bob_dm
            and e["message"]["type"] == "private",
    })

    # Reactions (addReaction / removeReaction: DELETE with a form body).
    own = messages["own"]
    app_call(app, "POST /messages/{id}/reactions", "POST", f"messages/{own}/reactions", {
        "emoji_name": Raw("thumbs_up"), "emoji_code": Raw("1f44d"), "reaction_type": Raw("unicode_emoji")})
    app_call(app, "DELETE /messages/{id}/reactions", "DELETE", f"messages/{own}/reactions", {
        "emoji_name": Raw("thumbs_up"), "emoji_code": Raw("1f44d"), "reaction_type": Raw("unicode_emoji")})
    bob.ok("Bob reacts with the custom emoji", "POST", f"messages/{own}/reactions", emoji_name="parley_party")
    poller.until("reactions", {
        "reaction add (Ada)": lambda e: e["type"] == "reaction" and e["op"] == "add" and e["user_id"] == ada_id,
        "reaction remove (Ada)": lambda e: e["type"] == "reaction" and e["op"] == "remove" and e["user_id"] == ada_id,
        "reaction add (Bob, realm_emoji)": lambda e: e["type"] == "reaction" and e["user_id"] == bob_id
            and e["reaction_type"] == "realm_emoji",
    })

    # Flags (updateMessageFlags) and mark-as-read for a narrow (updateMessageFlagsForNarrow).
    for op, flag, ids in [("add", "starred", [messages["mention"]]), ("remove", "starred", [messages["mention"]]),
                          ("remove", "read", [messages["mention"], bob_dm]), ("add", "read", [bob_dm])]:
        app_call(app, f"POST /messages/flags ({op} {flag})", "POST", "messages/flags",
                 {"messages": ids, "op": Raw(op), "flag": Raw(flag)}, model.UPDATE_MESSAGE_FLAGS)
    result = app_call(app, "POST /messages/flags/narrow (mark topic as read)", "POST", "messages/flags/narrow", {
        "anchor": Raw("oldest"), "include_anchor": False, "num_before": 0, "num_after": 1000,
        "narrow": [narrow_channel(mobile), narrow_topic("greetings"), narrow_is("unread")],
        "op": Raw("add"), "flag": Raw("read"),
    }, model.UPDATE_MESSAGE_FLAGS_FOR_NARROW)
    check("mark topic as read: found_newest and updated the mention", result.get("found_newest") is True
          and isinstance(result.get("updated_count"), int) and result["updated_count"] >= 1, result)
    poller.until("flags", {
        "update_message_flags add starred": lambda e: e["type"] == "update_message_flags" and e["op"] == "add" and e["flag"] == "starred",
        "update_message_flags remove starred": lambda e: e["type"] == "update_message_flags" and e["op"] == "remove" and e["flag"] == "starred",
        "update_message_flags remove read (with message_details)": lambda e: e["type"] == "update_message_flags"
            and e["op"] == "remove" and e["flag"] == "read" and isinstance(e.get("message_details"), dict),
        "update_message_flags add read (mark as read)": lambda e: e["type"] == "update_message_flags" and e["op"] == "add"
            and e["flag"] == "read" and messages["mention"] in e["messages"],
    })

    # Edits, moves and deletes by someone else.
    owner.ok("the owner edits a message", "PATCH", f"messages/{messages['mention']}", content="hello again @**Ada Lovelace**")
    owner.ok("the owner moves a message", "PATCH", f"messages/{messages['edited']}", topic="moved plans", propagate_mode="change_one")
    owner.ok("the owner moves a message to another channel", "PATCH", f"messages/{messages['bob']}",
             stream_id=random_, propagate_mode="change_one")
    owner.ok("the owner deletes a message", "DELETE", f"messages/{messages['secret']}")
    poller.until("edits", {
        "update_message (content)": lambda e: e["type"] == "update_message" and e["message_id"] == messages["mention"]
            and isinstance(e.get("rendered_content"), str),
        "update_message (topic move)": lambda e: e["type"] == "update_message" and e["message_id"] == messages["edited"]
            and e.get("subject") == "moved plans",
        "update_message (channel move)": lambda e: e["type"] == "update_message" and e.get("new_stream_id") == random_,
        "delete_message (stream)": lambda e: e["type"] == "delete_message" and messages["secret"] in e["message_ids"],
    })

    # Channels and subscriptions.
    for prop, value in [("is_muted", True), ("color", "#aabbcc"), ("pin_to_top", True),
                        ("desktop_notifications", False)]:
        app_call(app, f"POST /users/me/subscriptions/properties ({prop})", "POST", "users/me/subscriptions/properties",
                 {"subscription_data": [{"stream_id": mobile, "property": prop, "value": value}]})
    owner.ok("the owner creates a channel", "POST", "users/me/subscriptions", subscriptions=[{"name": "announce"}])
    app_call(app, "POST /users/me/subscriptions (join)", "POST", "users/me/subscriptions",
             {"subscriptions": [{"name": "announce"}]})
    app_call(app, "DELETE /users/me/subscriptions (leave)", "DELETE", "users/me/subscriptions",
             {"subscriptions": ["announce"]})
    owner.ok("the owner adds Cy to mobile", "POST", "users/me/subscriptions",
             subscriptions=[{"name": "mobile"}], principals=[cy_id])
    owner.ok("the owner describes mobile", "PATCH", f"streams/{mobile}", description="Where the **app** talks")
    poller.until("channels", {
        "subscription update is_muted": lambda e: e["type"] == "subscription" and e["op"] == "update" and e["property"] == "is_muted",
        "subscription update color": lambda e: e["type"] == "subscription" and e["op"] == "update" and e["property"] == "color",
        "subscription update pin_to_top": lambda e: e["type"] == "subscription" and e["op"] == "update" and e["property"] == "pin_to_top",
        "stream create": lambda e: e["type"] == "stream" and e["op"] == "create",
        "subscription add": lambda e: e["type"] == "subscription" and e["op"] == "add",
        "subscription remove": lambda e: e["type"] == "subscription" and e["op"] == "remove",
        "subscription peer_add": lambda e: e["type"] == "subscription" and e["op"] == "peer_add" and cy_id in e["user_ids"],
        "stream update description": lambda e: e["type"] == "stream" and e["op"] == "update" and e["property"] == "description",
    })

    # Personal settings (updateSettings), typing (setTypingStatus), status, topics, muting.
    app_call(app, "PATCH /settings", "PATCH", "settings", {
        "twenty_four_hour_time": True, "display_emoji_reaction_users": False,
        "emojiset": Raw("twitter"), "starred_message_counts": False, "presence_enabled": True,
    })
    app_call(app, "POST /typing (channel)", "POST", "typing",
             {"op": Raw("start"), "type": Raw("channel"), "stream_id": mobile, "topic": Raw("greetings")})
    app_call(app, "POST /typing (direct)", "POST", "typing", {"op": Raw("start"), "type": Raw("direct"), "to": [bob_id]})
    bob_app = App(app.realm_url, "bob@parley.local", bob.session.auth[1])
    app_call(bob_app, "POST /typing to Ada (direct, Bob)", "POST", "typing", {"op": Raw("start"), "type": Raw("direct"), "to": [ada_id]})
    app_call(bob_app, "POST /typing in mobile (channel, Bob)", "POST", "typing",
             {"op": Raw("stop"), "type": Raw("channel"), "stream_id": mobile, "topic": Raw("greetings")})
    app_call(app, "POST /users/me/status", "POST", "users/me/status", {
        "status_text": Raw("In the sea"), "emoji_name": Raw("octopus"), "emoji_code": Raw("1f419"),
        "reaction_type": Raw("unicode_emoji")})
    app_call(app, "POST /user_topics (follow)", "POST", "user_topics",
             {"stream_id": mobile, "topic": Raw("moved plans"), "visibility_policy": 3})
    ada_plain.ok("Ada mutes Cy", "POST", f"users/me/muted_users/{cy_id}")
    poller.until("settings", {
        "user_settings update twenty_four_hour_time": lambda e: e["type"] == "user_settings" and e["property"] == "twenty_four_hour_time",
        "user_settings update emojiset": lambda e: e["type"] == "user_settings" and e["property"] == "emojiset",
        "user_settings update display_emoji_reaction_users": lambda e: e["type"] == "user_settings" and e["property"] == "display_emoji_reaction_users",
        "typing start (direct, from Bob)": lambda e: e["type"] == "typing" and e["op"] == "start" and e["sender"]["user_id"] == bob_id,
        "typing stop (channel, from Bob)": lambda e: e["type"] == "typing" and e["op"] == "stop" and e.get("stream_id") == mobile,
        "user_status (Ada)": lambda e: e["type"] == "user_status" and e["user_id"] == ada_id,
        "user_topic (followed)": lambda e: e["type"] == "user_topic" and e["visibility_policy"] == 3,
        "muted_users": lambda e: e["type"] == "muted_users" and any(u["id"] == cy_id for u in e["muted_users"]),
    })

    # The organization changes around Ada.
    owner.ok("the owner renames Bob", "PATCH", f"users/{bob_id}", full_name="Robert Builder")
    dee = owner.ok("the owner creates a user", "POST", "users", email="dee@parley.local",
                   password="dee-password-123", full_name="Dee").get("user_id")
    group = owner.ok("the owner creates a group", "POST", "user_groups/create", name="reviewers",
                     description="Review people", members=[ada_id])
    owner.ok("the owner adds Bob to it", "POST", f"user_groups/{group.get('group_id')}/members", add=[bob_id])
    field = owner.ok("the owner adds a profile field", "POST", "realm/profile_fields", name="Phone", hint="", field_type=1)
    ada_plain.ok("Ada fills it in", "PATCH", "users/me/profile_data", data=[{"id": field.get("id"), "value": "555"}])
    ada_plain.ok("Ada adds an alert word", "POST", "users/me/alert_words", alert_words=["mobile"])
    ada_plain.ok("Ada saves a snippet", "POST", "saved_snippets", title="Bye", content="See you")
    owner.ok("the owner adds a custom emoji", "POST", "realm/emoji/second_party", files={"f": ("p.png", PNG_1X1, "image/png")})
    poller.until("organization", {
        "realm_user update full_name": lambda e: e["type"] == "realm_user" and e["op"] == "update"
            and e["person"].get("full_name") == "Robert Builder",
        "realm_user add": lambda e: e["type"] == "realm_user" and e["op"] == "add" and e["person"]["user_id"] == dee,
        "user_group add": lambda e: e["type"] == "user_group" and e["op"] == "add",
        "user_group add_members": lambda e: e["type"] == "user_group" and e["op"] == "add_members",
        "custom_profile_fields": lambda e: e["type"] == "custom_profile_fields",
        "realm_user update custom_profile_field": lambda e: e["type"] == "realm_user" and e["op"] == "update"
            and e["person"].get("custom_profile_field") is not None,
        "alert_words": lambda e: e["type"] == "alert_words",
        "saved_snippets add": lambda e: e["type"] == "saved_snippets" and e["op"] == "add",
        "realm_emoji": lambda e: e["type"] == "realm_emoji",
    })

    # The app's own edits: content (with prev_content_sha256), a topic move, mark as unread
    # from a message, a delete (DELETE with an empty form body).
    edited_by_app = sent.get("id")
    app_call(app, "PATCH /messages/{id} (edit content)", "PATCH", f"messages/{edited_by_app}", {
        "content": Raw("sent from the app, edited"),
        "prev_content_sha256": Raw(hashlib.sha256("sent from the app".encode()).hexdigest()),
    }, model.UPDATE_MESSAGE)
    app_call(app, "PATCH /messages/{id} (move topic)", "PATCH", f"messages/{edited_by_app}", {
        "topic": Raw("app topic"), "propagate_mode": Raw("change_one"),
        "send_notification_to_old_thread": False, "send_notification_to_new_thread": True,
    }, model.UPDATE_MESSAGE)
    app_call(app, "POST /messages/flags/narrow (mark as unread from a message)", "POST", "messages/flags/narrow", {
        "anchor": Raw(str(messages["mention"])), "include_anchor": True, "num_before": 0, "num_after": 1000,
        "narrow": [narrow_channel(mobile)], "op": Raw("remove"), "flag": Raw("read"),
    }, model.UPDATE_MESSAGE_FLAGS_FOR_NARROW)
    app_call(app, "DELETE /messages/{id}", "DELETE", f"messages/{dm.get('id')}", {})
    poller.until("the app's edits", {
        "update_message (own edit)": lambda e: e["type"] == "update_message" and e["message_id"] == edited_by_app
            and e.get("content") == "sent from the app, edited",
        "update_message (own move)": lambda e: e["type"] == "update_message" and e["message_id"] == edited_by_app
            and e.get("subject") == "app topic",
        "update_message_flags remove read (from a message on)": lambda e: e["type"] == "update_message_flags"
            and e["op"] == "remove" and e["flag"] == "read" and messages["mention"] in e["messages"],
        "delete_message (direct)": lambda e: e["type"] == "delete_message" and dm.get("id") in e["message_ids"],
    })

    # More changes by others: channel permissions, rename and archive, a peer leaving, roles,
    # deactivation, groups, emoji; and Ada undoing her personal settings from another client
    # (a notification setting reset to inherit with null, as Parley allows).
    groups = {g.get("name"): g.get("id") for g in snapshot.get("realm_user_groups", []) if isinstance(g, dict)}
    owner.ok("the owner restricts who may post in mobile", "PATCH", f"streams/{mobile}",
             can_send_message_group={"new": groups.get("apps")})
    owner.ok("the owner renames random", "PATCH", f"streams/{random_}", new_name="random-renamed")
    announce = next((s_.get("stream_id") for s_ in owner.call("GET", "streams").get("streams", []) if s_.get("name") == "announce"), None)
    owner.ok("the owner archives announce", "DELETE", f"streams/{announce}")
    owner.ok("the owner removes Cy from mobile", "DELETE", "users/me/subscriptions", subscriptions=["mobile"], principals=[cy_id])
    owner.ok("the owner makes Bob a moderator", "PATCH", f"users/{bob_id}", role=300)
    owner.ok("the owner deactivates Dee", "DELETE", f"users/{dee}")
    owner.ok("the owner renames the group", "PATCH", f"user_groups/{group.get('group_id')}", name="code-reviewers")
    owner.ok("the owner removes Bob from the group", "POST", f"user_groups/{group.get('group_id')}/members", delete=[bob_id])
    owner.ok("the owner deactivates a custom emoji", "DELETE", "realm/emoji/second_party")
    ada_plain.ok("Ada resets a channel notification setting to inherit", "POST", "users/me/subscriptions/properties",
                 subscription_data=[{"stream_id": mobile, "property": "desktop_notifications", "value": None}])
    ada_plain.ok("Ada clears her status", "POST", "users/me/status", status_text="", emoji_name="", emoji_code="", reaction_type="")
    ada_plain.ok("Ada unmutes Cy", "DELETE", f"users/me/muted_users/{cy_id}")
    ada_plain.ok("Ada stops following the topic", "POST", "user_topics", stream_id=mobile, topic="moved plans", visibility_policy=0)
    ada_plain.ok("Ada removes an alert word", "DELETE", "users/me/alert_words", alert_words=["mobile"])
    snippets = ada_plain.call("GET", "saved_snippets").get("saved_snippets", [])
    if snippets:
        ada_plain.ok("Ada deletes a snippet", "DELETE", f"saved_snippets/{snippets[-1]['id']}")
    poller.until("more changes", {
        "stream update can_send_message_group": lambda e: e["type"] == "stream" and e["op"] == "update"
            and e["property"] == "can_send_message_group",
        "stream update name": lambda e: e["type"] == "stream" and e["op"] == "update" and e["property"] == "name",
        "stream delete": lambda e: e["type"] == "stream" and e["op"] == "delete",
        "subscription peer_remove": lambda e: e["type"] == "subscription" and e["op"] == "peer_remove",
        "realm_user update role": lambda e: e["type"] == "realm_user" and e["op"] == "update" and e["person"].get("role") == 300,
        "realm_user update is_active": lambda e: e["type"] == "realm_user" and e["op"] == "update"
            and e["person"].get("is_active") is False,
        "user_group update": lambda e: e["type"] == "user_group" and e["op"] == "update",
        "user_group remove_members": lambda e: e["type"] == "user_group" and e["op"] == "remove_members",
        "realm_emoji (deactivated)": lambda e: e["type"] == "realm_emoji" and e["op"] in ("update", "update_one")
            and e is not None,
        "subscription update desktop_notifications (reset)": lambda e: e["type"] == "subscription" and e["op"] == "update"
            and e["property"] == "desktop_notifications",
        "user_status (cleared)": lambda e: e["type"] == "user_status" and e.get("status_text") == "",
        "muted_users (none)": lambda e: e["type"] == "muted_users" and e["muted_users"] == [],
        "user_topic (inherit)": lambda e: e["type"] == "user_topic" and e["visibility_policy"] == 0,
        "alert_words (removed)": lambda e: e["type"] == "alert_words" and "mobile" not in e["alert_words"],
        "saved_snippets remove": lambda e: e["type"] == "saved_snippets" and e["op"] == "remove",
    })

    # Nothing happening: a heartbeat; dont_block answers at once; a bad queue id.
    started = time.time()
    poller.poll(label="GET /events (idle, heartbeat)")
    check("an idle poll answers with a heartbeat", any(e.get("type") == "heartbeat" for e in poller.events[-3:]),
          poller.events[-3:])
    check("the heartbeat comes within heartbeat-seconds", time.time() - started < HEARTBEAT_SECONDS + 5, time.time() - started)
    started = time.time()
    poller.poll(dont_block=True, label="GET /events (dont_block)")
    check("dont_block answers at once", time.time() - started < 2, time.time() - started)
    status, body, text = app.request("GET", "events", {"queue_id": Raw("no-such-queue"), "last_event_id": 0})
    check("GET /events with a bad queue id: HTTP 400", status == 400, f"HTTP {status}: {text[:500]}")
    errors = model.validate(model.API_ERROR, body) if isinstance(body, dict) else [("$", "JSON object", text[:200])]
    check("GET /events with a bad queue id: an error the app reads", not errors, "\n" + model.format_errors(errors))
    check("GET /events with a bad queue id: code BAD_EVENT_QUEUE_ID (the app re-registers on it)",
          isinstance(body, dict) and body.get("code") == "BAD_EVENT_QUEUE_ID", body)
    kinds = sorted({f"{e.get('type')}/{e.get('op')}" if "op" in e else str(e.get("type")) for e in poller.events})
    print(f"events decoded: {len(poller.events)} in {poller.polls} polls: {', '.join(kinds)}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parley", required=True)
    parser.add_argument("--database-url")
    args = parser.parse_args()

    started = time.time()

    def watchdog(signum, frame):
        raise TimeoutError(f"the script ran longer than {WATCHDOG_SECONDS} s")

    signal.signal(signal.SIGALRM, watchdog)
    signal.alarm(WATCHDOG_SECONDS)
    with tempfile.TemporaryDirectory() as data_dir, tempfile.TemporaryDirectory() as log_dir:
        port = free_port()
        site = f"http://127.0.0.1:{port}"
        server = Server(args.parley, data_dir, port, args.database_url, os.path.join(log_dir, "parley.log"),
                        extra_args=("--heartbeat-seconds", str(HEARTBEAT_SECONDS)))
        try:
            server.start()
            run(site, os.path.join(data_dir, "owner.zuliprc"))
        except Exception:
            traceback.print_exc()
            check("no exception", False, server.log_tail())
        finally:
            signal.alarm(0)
            code = server.stop()
            check("parley shuts down cleanly on SIGTERM", code == 0, f"{code}\n{server.log_tail()}")
        if checks.FAILED:
            print(f"--- parley log (last lines) ---\n{server.log_tail(60)}", flush=True)
    backend = "PostgreSQL" if args.database_url else "SQLite"
    print(f"Mobile app (zulip-flutter) requests against parley on {backend} ({time.time() - started:.1f} s):")
    return finish("mobile-app")


if __name__ == "__main__":
    sys.exit(main())
