"""The official Python client (`pip install zulip`) against the real `parley` binary.

Starts `parley serve` on a fresh data directory (and, with --database-url, a given database),
then drives it the way a bot would: build `zulip.Client` from the generated owner.zuliprc, list
users, create a user, fetch that user's API key with /fetch_api_key, and act as that user.

Usage: test_python_client.py --parley PATH [--database-url URL]
"""

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

import zulip

from checks import check, finish, free_port


def wait_for(port, proc):
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"parley exited early: {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("parley did not start")


def run_against_server(zuliprc, site):
    owner = zulip.Client(config_file=zuliprc)
    check("client reads the zuliprc site", owner.base_url.startswith(site), owner.base_url)

    settings = owner.get_server_settings()
    check("server_settings succeeds", settings["result"] == "success", settings)
    check("feature level is 417", settings.get("zulip_feature_level") == 417, settings)

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
