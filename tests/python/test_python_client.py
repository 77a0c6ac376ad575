"""The official Python client (`pip install zulip`) against the real `parley` binary.

Starts `parley serve` on a fresh data directory (and, with --database-url, a given database),
then drives it the way a bot would: build `zulip.Client` from the generated owner.zuliprc, list
users, create a user, fetch that user's API key with /fetch_api_key, and act as that user; then
sets up an organization (roles, a bot, groups deciding a permission, an invitation link followed
through its sign-up page, a linkifier, an upload, a custom emoji) through the client's own calls.

Usage: test_python_client.py --parley PATH [--database-url URL]
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import traceback

import requests
import zulip

from checks import check, finish, free_port


def wait_for(port, proc):
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"parley exited early: {proc.returncode}")
        try:
            # /health answers once start-up is done (the port is bound before it)
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("parley did not start")


def run_against_server(zuliprc, site):
    owner = zulip.Client(config_file=zuliprc)
    check("client reads the zuliprc site", owner.base_url.startswith(site), owner.base_url)

    settings = owner.get_server_settings()
    check("server_settings succeeds", settings["result"] == "success", settings)
    check("feature level is 420", settings.get("zulip_feature_level") == 420, settings)

    members = owner.get_members()
    check("get_members succeeds", members["result"] == "success", members)
    check("the owner is listed", any(m["role"] == 100 for m in members.get("members", [])), members)

    profile = owner.get_profile()
    check("get_profile is the owner", profile.get("is_owner") is True, profile)

    created = owner.create_user(
        {"email": "bot-made@parley.local", "password": "made-by-a-bot", "full_name": "Made By Bot"}
    )
    check("create_user succeeds", created["result"] == "success", created)
    duplicate = owner.create_user(
        {"email": "bot-made@parley.local", "password": "made-by-a-bot", "full_name": "Again"}
    )
    check("duplicate email is BAD_REQUEST", duplicate.get("code") == "BAD_REQUEST", duplicate)

    fetched = owner.call_endpoint(
        url="fetch_api_key",
        method="POST",
        request={"username": "bot-made@parley.local", "password": "made-by-a-bot"},
    )
    check("fetch_api_key succeeds", fetched["result"] == "success", fetched)
    check("fetch_api_key returns the new user", fetched.get("user_id") == created.get("user_id"), fetched)

    new_user = zulip.Client(email=fetched["email"], api_key=fetched["api_key"], site=site)
    me = new_user.get_profile()
    check("the new user's key works", me.get("full_name") == "Made By Bot", me)
    check("the new user is a member", me.get("role") == 400, me)

    forbidden = new_user.create_user(
        {"email": "nope@parley.local", "password": "whatever1", "full_name": "Nope"}
    )
    check("members may not create users", forbidden["result"] == "error", forbidden)

    wrong = zulip.Client(email=fetched["email"], api_key="x" * 32, site=site)
    answer = wrong.get_profile()
    check("a wrong key is INVALID_API_KEY", answer.get("code") == "INVALID_API_KEY", answer)

    user = owner.get_user_by_id(created["user_id"])
    check("get_user_by_id finds the new user", user.get("user", {}).get("full_name") == "Made By Bot", user)

    run_messages(owner, new_user, created["user_id"])
    run_organization(owner, site)


def run_messages(owner, member, member_id):
    """Channels, subscriptions and messages the way a bot uses them."""
    added = owner.add_subscriptions(
        streams=[{"name": "bots", "description": "Where bots talk"}], principals=[member_id]
    )
    check("add_subscriptions creates and subscribes", added["result"] == "success", added)
    stream_id = owner.get_stream_id("bots")
    check("get_stream_id", stream_id.get("result") == "success", stream_id)
    subs = member.get_subscriptions()
    names = sorted(s["name"] for s in subs.get("subscriptions", []))
    check("the member sees the channel in subscriptions", "bots" in names, subs)

    sent = owner.send_message({"type": "stream", "to": "bots", "topic": "greetings", "content": "hello @**Made By Bot**"})
    check("send_message to a channel", sent["result"] == "success", sent)
    dm = member.send_message({"type": "private", "to": [owner.email], "content": "hi owner"})
    check("send_message direct", dm["result"] == "success", dm)
    missing = owner.send_message({"type": "stream", "to": "no-such-channel", "topic": "x", "content": "x"})
    check("STREAM_DOES_NOT_EXIST", missing.get("code") == "STREAM_DOES_NOT_EXIST" and missing.get("stream") == "no-such-channel", missing)

    page = member.get_messages({
        "anchor": "newest", "num_before": 10, "num_after": 0,
        "narrow": [{"operator": "channel", "operand": "bots"}, {"operator": "topic", "operand": "greetings"}],
    })
    messages = page.get("messages", [])
    check("get_messages with a narrow", [m["id"] for m in messages] == [sent["id"]], page)
    check("the member was mentioned", messages and "mentioned" in messages[0]["flags"], page)
    dms = owner.get_messages({"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": [["is", "dm"]]})
    check("is:dm narrow", [m["id"] for m in dms.get("messages", [])] == [dm["id"]], dms)
    found = member.get_messages({"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": [["search", "hello"]]})
    check("search narrow", [m["id"] for m in found.get("messages", [])] == [sent["id"]], found)

    edited = owner.update_message({"message_id": sent["id"], "content": "hello again"})
    check("update_message content", edited["result"] == "success", edited)
    moved = owner.update_message({"message_id": sent["id"], "topic": "moved", "propagate_mode": "change_all"})
    check("update_message moves the topic", moved["result"] == "success", moved)
    resolved = owner.update_message({"message_id": sent["id"], "topic": "\u2714 moved", "propagate_mode": "change_all"})
    check("resolving a topic", resolved["result"] == "success", resolved)
    reaction = member.add_reaction({"message_id": sent["id"], "emoji_name": "smile"})
    check("add_reaction", reaction["result"] == "success", reaction)
    starred = member.update_message_flags({"messages": [sent["id"]], "op": "add", "flag": "starred"})
    check("update_message_flags", starred["result"] == "success", starred)
    fetched = member.get_raw_message(sent["id"])
    message = fetched.get("message", {})
    check("the edit, move, reaction and star are visible",
          fetched.get("raw_content") == "hello again" and message.get("subject") == "\u2714 moved"
          and message.get("reactions") and "starred" in message.get("flags", []), fetched)
    read_all = member.call_endpoint(url="mark_all_as_read", method="POST")
    check("mark_all_as_read", read_all["result"] == "success", read_all)
    deleted = owner.delete_message(sent["id"])
    check("delete_message", deleted["result"] == "success", deleted)
    gone = member.get_raw_message(sent["id"])
    check("a deleted message is gone", gone.get("result") == "error", gone)


PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0000003010100c9fe92ef"
    "0000000049454e44ae426082"
)


def find_group(client, name):
    groups = client.get_user_groups().get("user_groups", [])
    return next((g for g in groups if g["name"] == name), None)


def as_user(site, email, password):
    """A client for an account, by email and password through /fetch_api_key."""
    fetched = requests.post(f"{site}/api/v1/fetch_api_key", data={"username": email, "password": password}).json()
    return zulip.Client(email=fetched.get("email", email), api_key=fetched.get("api_key", ""), site=site), fetched


def run_organization(owner, site):
    """An administrator sets up the organization entirely over the API with the official client:
    people and roles, a bot, groups with subgroups that decide a permission, an invitation link a
    new person follows, a linkifier that changes rendering, and an upload only the right people
    can fetch."""
    people = {}
    for short, name in [("lead", "Lena Lead"), ("senior", "Sam Senior"), ("plain", "Pat Plain")]:
        made = owner.create_user({"email": f"{short}@parley.local", "password": f"{short}-password", "full_name": name})
        check(f"create_user {short}", made["result"] == "success", made)
        people[short] = made.get("user_id")
    lead, lead_info = as_user(site, "lead@parley.local", "lead-password")
    senior, _ = as_user(site, "senior@parley.local", "senior-password")
    plain, _ = as_user(site, "plain@parley.local", "plain-password")

    # Roles.
    promoted = owner.update_user_by_id(people["lead"], role=300)
    check("update_user_by_id sets the role", promoted["result"] == "success", promoted)
    check("the lead is now a moderator", owner.get_user_by_id(people["lead"]).get("user", {}).get("role") == 300)
    renamed = owner.update_user_by_id(people["plain"], full_name="Pat Plainly")
    check("update_user_by_id renames", renamed["result"] == "success"
          and owner.get_user_by_id(people["plain"]).get("user", {}).get("full_name") == "Pat Plainly", renamed)
    off = owner.deactivate_user_by_id(people["plain"])
    check("deactivate_user_by_id", off["result"] == "success", off)
    refused = plain.get_profile()
    check("a deactivated user's key stops working", refused["result"] == "error", refused)
    on = owner.reactivate_user_by_id(people["plain"])
    check("reactivate_user_by_id", on["result"] == "success", on)

    # A bot of the owner's that posts with its own key.
    bot = owner.call_endpoint(url="bots", method="POST",
                              request={"full_name": "Helper Bot", "short_name": "helper", "bot_type": 1})
    check("create a bot", bot["result"] == "success" and bot.get("api_key"), bot)
    bot_user = owner.get_user_by_id(bot.get("user_id", 0)).get("user", {})
    check("the bot is listed with its owner", bot_user.get("is_bot") and bot_user.get("bot_owner_id") == owner.get_profile()["user_id"], bot_user)
    bots = owner.call_endpoint(url="bots", method="GET")
    check("GET /bots lists it", any(b.get("user_id") == bot.get("user_id") for b in bots.get("bots", [])), bots)

    # Groups with a subgroup deciding who may create channels.
    made = owner.create_user_group({"name": "leads", "description": "Team leads", "members": [people["lead"]]})
    check("create_user_group", made["result"] == "success", made)
    made = owner.create_user_group({"name": "seniors", "description": "Seniors", "members": [people["senior"]]})
    check("create a second group", made["result"] == "success", made)
    leads, seniors = find_group(owner, "leads"), find_group(owner, "seniors")
    check("get_user_groups lists both", leads and seniors, owner.get_user_groups())
    if not (leads and seniors):
        return
    nested = owner.call_endpoint(url=f"user_groups/{leads['id']}/members", method="POST",
                                 request={"add_subgroups": json.dumps([seniors["id"]])})
    check("seniors become a subgroup of leads", nested["result"] == "success", nested)
    cycle = owner.call_endpoint(url=f"user_groups/{seniors['id']}/members", method="POST",
                                request={"add_subgroups": json.dumps([leads["id"]])})
    check("a cycle of subgroups is refused", cycle["result"] == "error", cycle)
    members = owner.get_user_groups()
    check("the group lists its subgroup", seniors["id"] in find_group(owner, "leads").get("direct_subgroup_ids", []), members)
    made = owner.add_subscriptions(streams=[{"name": "engineering"}])
    check("the owner creates a channel", made["result"] == "success", made)
    old = owner.register(event_types=["realm"]).get("realm_can_create_public_channel_group")
    changed = owner.call_endpoint(url="realm", method="PATCH", request={
        "can_create_public_channel_group": json.dumps({"new": leads["id"], "old": old})})
    check("the realm's channel-creation permission goes to the leads group", changed["result"] == "success", changed)
    by_senior = senior.add_subscriptions(streams=[{"name": "senior-made"}])
    check("a member of the subgroup may create a channel", by_senior["result"] == "success", by_senior)
    by_plain = plain.add_subscriptions(streams=[{"name": "plain-made"}])
    check("someone outside the groups may not", by_plain["result"] == "error", by_plain)

    # An invitation link a new person follows.
    engineering = owner.get_stream_id("engineering").get("stream_id")
    invite = owner.call_endpoint(url="invites/multiuse", method="POST", request={
        "invite_as": 300, "stream_ids": json.dumps([engineering]), "group_ids": json.dumps([leads["id"]]),
        "welcome_message_custom_text": "Welcome to **engineering**!"})
    check("create a reusable invitation link", invite["result"] == "success" and invite.get("invite_link"), invite)
    link = invite.get("invite_link")
    if not link:
        return
    browser = requests.Session()
    page = browser.get(link)
    check("the link serves a sign-up page", page.status_code == 200 and "<form" in page.text, page.text[:500])
    # The form carries its CSRF token, matched against the csrftoken cookie the page set.
    token = re.search(r'name="csrfmiddlewaretoken"[^>]*value="([^"]+)"', page.text) or \
        re.search(r'value="([^"]+)"[^>]*name="csrfmiddlewaretoken"', page.text)
    check("the sign-up form has a CSRF token", token is not None, page.text[:500])
    joined = browser.post(link, data={"email": "newcomer@parley.local", "full_name": "New Comer",
                                      "password": "newcomer-password",
                                      "csrfmiddlewaretoken": token.group(1) if token else ""})
    check("the sign-up form creates the account and signs the person in",
          joined.status_code == 200 and joined.url.rstrip("/") == site.rstrip("/")
          and "sessionid" in browser.cookies, (joined.status_code, joined.url, joined.text[:300]))
    newcomer, info = as_user(site, "newcomer@parley.local", "newcomer-password")
    me = newcomer.get_profile()
    check("the newcomer has the invitation's role", me.get("role") == 300, me)
    subs = [s["name"] for s in newcomer.get_subscriptions().get("subscriptions", [])]
    check("the newcomer is in the invitation's channel", "engineering" in subs, subs)
    check("the newcomer is in the invitation's group", me.get("user_id") in find_group(owner, "leads").get("members", []))
    welcome = newcomer.get_messages({"anchor": "newest", "num_before": 5, "num_after": 0, "narrow": [["is", "dm"]]})
    check("the newcomer got the welcome message",
          any("Welcome to <strong>engineering</strong>!" in m["content"] for m in welcome.get("messages", [])), welcome)
    invites = owner.call_endpoint(url="invites", method="GET")
    listed = [i for i in invites.get("invites", []) if i.get("is_multiuse")]
    check("GET /invites lists the link", len(listed) == 1, invites)
    if listed:
        revoked = owner.call_endpoint(url=f"invites/multiuse/{listed[0]['id']}", method="DELETE")
        check("the link is revoked", revoked["result"] == "success", revoked)
        again = requests.get(link)
        check("a revoked link says so", again.status_code >= 400 and "revoked" in again.text.lower(), again.text[:500])

    # A linkifier changes how messages render.
    added = owner.add_realm_filter("#(?P<id>[0-9]+)", "https://tracker.example/issues/{id}")
    check("add_realm_filter", added["result"] == "success", added)
    linkifiers = owner.get_realm_linkifiers()
    check("get_realm_linkifiers lists it", any(l.get("pattern") == "#(?P<id>[0-9]+)" for l in linkifiers.get("linkifiers", [])), linkifiers)
    sent = owner.send_message({"type": "stream", "to": "engineering", "topic": "bugs", "content": "see #42"})
    rendered = owner.get_messages({"anchor": sent.get("id", 0), "num_before": 0, "num_after": 0, "apply_markdown": True})
    content = (rendered.get("messages") or [{}])[0].get("content", "")
    check("the message links the issue", 'href="https://tracker.example/issues/42"' in content, content)

    # An upload only the right people can fetch.
    with tempfile.NamedTemporaryFile(suffix=".txt") as f:
        f.write(b"the secret plan")
        f.flush()
        f.seek(0)
        uploaded = lead.upload_file(f)
    check("upload_file", uploaded["result"] == "success" and uploaded.get("uri", "").startswith("/user_uploads/"), uploaded)
    uri = uploaded.get("uri", "/user_uploads/none")
    lead.send_message({"type": "private", "to": [senior.email], "content": f"[plan.txt]({uri})"})
    for who, client, allowed in [("its owner", lead, True), ("the DM's recipient", senior, True), ("an outsider", plain, False)]:
        got = requests.get(site + uri, auth=(client.email, client.api_key))
        if allowed:
            check(f"{who} can fetch the upload", got.status_code == 200 and got.content == b"the secret plan", got.status_code)
        else:
            check(f"{who} cannot fetch the upload", got.status_code in (403, 404) and b"secret" not in got.content, got.status_code)
    attachments = lead.get_attachments()
    check("get_attachments lists it with its message",
          any(a.get("path_id") and a.get("messages") for a in attachments.get("attachments", [])), attachments)

    # A custom emoji.
    with tempfile.NamedTemporaryFile(suffix=".png") as f:
        f.write(PNG_1X1)
        f.flush()
        f.seek(0)
        emoji = owner.upload_custom_emoji("parley_party", f)
    check("upload_custom_emoji", emoji["result"] == "success", emoji)
    listed = owner.get_realm_emoji().get("emoji", {})
    check("get_realm_emoji lists it", any(e.get("name") == "parley_party" for e in listed.values()), listed)
    removed = owner.delete_custom_emoji("parley_party")
    check("delete_custom_emoji", removed["result"] == "success", removed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parley", required=True)
    parser.add_argument("--database-url")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as data_dir:
        port = free_port()
        site = f"http://127.0.0.1:{port}"
        command = [args.parley, "--data-dir", data_dir, "--bind", f"127.0.0.1:{port}"]
        if args.database_url:
            command += ["--database-url", args.database_url]
        env = dict(os.environ, PARLEY_LOG="warn")
        env.pop("DATABASE_URL", None)
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            wait_for(port, proc)
            run_against_server(os.path.join(data_dir, "owner.zuliprc"), site)
        except Exception:
            traceback.print_exc()
            check("no exception", False)
        finally:
            proc.send_signal(signal.SIGTERM)
            output, _ = proc.communicate(timeout=60)
            check("parley shuts down cleanly on SIGTERM", proc.returncode == 0, output.decode())
    backend = "PostgreSQL" if args.database_url else "SQLite"
    print(f"Python client against parley on {backend}:")
    return finish("python-client")


if __name__ == "__main__":
    sys.exit(main())
