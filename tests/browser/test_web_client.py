"""The web client in a real browser (Playwright for Python driving the system's Chromium) against
the real binary: two browser contexts, two users, talking to each other.

Checks: sign-in through /login/; a channel message appears live for the other user; the other
user's unread counts rise and fall as the message is seen; a DM and its reply (`r`); a reaction
through the emoji picker; an edit seen by the other side; search with narrow operators; an image
uploaded through the button and shown inline; a server restart in the middle, after which the same
page keeps chatting; sign-out. A failing check saves both pages' screenshots under
target/browser-screenshots/.

Usage: test_web_client.py --parley PATH [--database-url URL] [--chromium /usr/bin/chromium]
"""

import argparse
import base64
import configparser
import json
import os
import struct
import sys
import tempfile
import time
import traceback
import urllib.parse
import urllib.request
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from checks import Server, check, finish, free_port  # noqa: E402

from playwright.sync_api import sync_playwright, TimeoutError as PlaywrightTimeout  # noqa: E402

SHOTS = os.path.join(os.path.dirname(__file__), "..", "..", "target", "browser-screenshots")
TIMEOUT_MS = 10000
PAGES = {}

def png(width, height, rgb):
    """A valid PNG of one colour (the server thumbnails it, so it must decode)."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def api(site, creds, method, path, data=None):
    """One call to /api/v1 with HTTP Basic (setting up the scene, not what is tested)."""
    body = urllib.parse.urlencode(data or {}).encode() if method != "GET" else None
    url = f"{site}/api/v1{path}"
    if method == "GET" and data:
        url += "?" + urllib.parse.urlencode(data)
    req = urllib.request.Request(url, data=body, method=method)
    token = base64.b64encode(f"{creds[0]}:{creds[1]}".encode()).decode()
    req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)


def step(name, fn):
    """Runs one browser step as a check; on failure saves screenshots of every page."""
    try:
        result = fn()
        check(name, result is not False, result)
    except Exception as error:  # a timeout or an assertion: the step failed
        os.makedirs(SHOTS, exist_ok=True)
        slug = "".join(c if c.isalnum() else "-" for c in name)[:60]
        for who, page in PAGES.items():
            try:
                page.screenshot(path=os.path.join(SHOTS, f"{slug}-{who}.png"), full_page=True)
            except Exception:
                pass
        check(name, False, f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=3)}")


def sign_in(page, site, email, password):
    page.goto(f"{site}/")
    page.wait_for_url("**/login/**")
    page.fill("input[name=username]", email)
    page.fill("input[name=password]", password)
    page.locator("form").locator("[type=submit]").first.click()
    page.wait_for_selector(".message-pane", timeout=TIMEOUT_MS)
    page.wait_for_selector(".loading", state="detached", timeout=TIMEOUT_MS)


def compose_to_channel(page, channel_id, topic, text):
    page.keyboard.press("Escape")
    page.locator("body").press("c")
    page.select_option("#compose-channel", str(channel_id))
    page.fill("#compose-topic", topic)
    page.fill("#compose-content", text)
    page.click(".compose button[type=submit]")
    page.wait_for_function("document.querySelector('#compose-content').value === ''", timeout=TIMEOUT_MS)


def message_locator(page, text):
    return page.locator(".message", has=page.locator(".message-content", has_text=text))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parley", required=True)
    parser.add_argument("--database-url")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--headed", action="store_true")
    args = parser.parse_args()

    data_dir = tempfile.mkdtemp(prefix="parley-web-")
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    server = Server(args.parley, data_dir, port, args.database_url, os.path.join(data_dir, "parley.log"))
    server.start()
    try:
        run(site, data_dir, server, args)
    except Exception:
        check("browser run", False, traceback.format_exc())
        print(server.log_tail())
    finally:
        server.stop()
    return finish("web-client")


def run(site, data_dir, server, args):
    rc = configparser.ConfigParser()
    rc.read(os.path.join(data_dir, "owner.zuliprc"))
    owner = (rc["api"]["email"], rc["api"]["key"])
    with open(os.path.join(data_dir, "owner-password.txt")) as f:
        owner_password = f.read().strip().splitlines()[0].strip()  # the first line; comments follow
    made = api(site, owner, "POST", "/users", {"email": "bea@parley.local", "password": "bea-password-1", "full_name": "Bea Browser"})
    check("second user created", made.get("result") == "success", made)
    bea_id = made.get("user_id")
    owner_id = api(site, owner, "GET", "/users/me")["user_id"]
    channel = "browser tests"
    made = api(site, owner, "POST", "/users/me/subscriptions", {
        "subscriptions": json.dumps([{"name": channel}]), "principals": json.dumps([owner_id, bea_id])})
    check("channel for both", made.get("result") == "success", made)
    channel_id = api(site, owner, "GET", "/get_stream_id", {"stream": channel})["stream_id"]

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, headless=not args.headed,
                                     args=["--no-sandbox", "--disable-gpu"])
        a_ctx = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
        b_ctx = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
        a = a_ctx.new_page()
        b = b_ctx.new_page()
        a.set_default_timeout(TIMEOUT_MS)
        b.set_default_timeout(TIMEOUT_MS)
        PAGES.update(owner=a, bea=b)
        errors = []
        for who, page in PAGES.items():
            page.on("pageerror", lambda e, who=who: errors.append(f"{who}: {e}"))

        step("owner signs in", lambda: sign_in(a, site, owner[0], owner_password))
        step("bea signs in", lambda: sign_in(b, site, "bea@parley.local", "bea-password-1"))
        step("page title is the organization", lambda: a.title() != "")

        # bea waits in the combined feed; the owner writes in a topic
        def send_channel_message():
            a.goto(f"{site}/#narrow/channel/{channel_id}-browser-tests")
            a.wait_for_selector(".narrow-title:has-text('#browser tests')")
            compose_to_channel(a, channel_id, "lunch", "Who is coming to **lunch**?")
            message_locator(a, "Who is coming to lunch?").wait_for()
        step("owner sends to a channel topic", send_channel_message)

        def bea_sees_it_live_and_unread():
            b.evaluate("document.querySelector('.message-scroller').scrollTop = 0")
            link = b.locator(".channels .nav-link", has_text=channel)
            link.locator(".unread-count").wait_for()
            return int(link.locator(".unread-count").inner_text()) >= 1
        step("bea's unread count for the channel rises live", bea_sees_it_live_and_unread)
        step("bea sees the message live in the feed",
             lambda: message_locator(b, "Who is coming to lunch?").wait_for())

        def bea_reads_it():
            b.locator(".channels .nav-link", has_text=channel).click()
            b.locator(".topics .nav-link", has_text="lunch").wait_for()
            message_locator(b, "Who is coming to lunch?").wait_for()
            b.locator(".channels .nav-link", has_text=channel).locator(".unread-count").wait_for(state="detached")
            b.wait_for_selector(".message.unread", state="detached")
        step("bea reads it: the unread counts go to zero", bea_reads_it)

        def owner_dms_bea():
            a.goto(f"{site}/#narrow/dm/{bea_id}-dm")
            a.wait_for_selector(".narrow-title:has-text('DM with Bea Browser')")
            a.locator("body").press("x")
            a.fill("#compose-content", "A private hello")
            a.click(".compose button[type=submit]")
            message_locator(a, "A private hello").wait_for()
        step("owner sends a DM", owner_dms_bea)

        def bea_replies():
            dm_link = b.locator(".dms .nav-link").first
            dm_link.locator(".unread-count").wait_for()
            dm_link.click()
            message_locator(b, "A private hello").wait_for()
            message_locator(b, "A private hello").click()
            b.locator("body").press("r")
            b.locator("#compose-content").wait_for()
            b.fill("#compose-content", "Hello back, privately")
            b.keyboard.press("Control+Enter")
            message_locator(b, "Hello back, privately").wait_for()
        step("bea replies to the DM with r", bea_replies)
        step("owner sees the DM reply live", lambda: message_locator(a, "Hello back, privately").wait_for())

        def typing_and_draft():
            a.locator("body").press("x")
            a.locator("#compose-content").press_sequentially("a draft about the", delay=30)
            b.locator(".typing-notice", has_text="is typing").wait_for()
            a.wait_for_selector(".compose :text('Draft saved')")
            drafts = api(site, owner, "GET", "/drafts")["drafts"]
            return any(d["content"] == "a draft about the" for d in drafts) or drafts
        step("typing is shown to the other side; the draft is kept on the server", typing_and_draft)

        def mention_typeahead():
            a.locator("#compose-content").press_sequentially(" @Bea", delay=30)
            a.locator("#compose-suggest li", has_text="Bea Browser").wait_for()
            a.locator("#compose-content").press("Enter")
            value = a.input_value("#compose-content")
            a.keyboard.press("Control+Enter")
            message_locator(b, "a draft about the").and_(b.locator(".message.mentioned")).wait_for()
            return "@**Bea Browser**" in value or value
        step("@ typeahead inserts a mention; the other side sees it highlighted", mention_typeahead)
        step("the typing notice ends with the message",
             lambda: b.locator(".typing-notice", has_text="is typing").wait_for(state="detached"))

        def bea_reacts():
            b.goto(f"{site}/#narrow/channel/{channel_id}-browser-tests/topic/lunch")
            msg = message_locator(b, "Who is coming to lunch?")
            msg.hover()
            msg.locator("button[aria-label='Add reaction']").click()
            b.fill("#emoji-search", "octopus")
            b.locator(".emoji-choice[aria-label='octopus']").click()
            msg.locator(".reaction.mine").wait_for()
        step("bea reacts with the emoji picker", bea_reacts)

        def owner_sees_reaction():
            a.goto(f"{site}/#narrow/channel/{channel_id}-browser-tests/topic/lunch")
            message_locator(a, "Who is coming to lunch?").locator(".reaction").wait_for()
        step("owner sees the reaction", owner_sees_reaction)

        def owner_edits():
            msg = message_locator(a, "Who is coming to lunch?")
            msg.hover()
            msg.locator("button[aria-label='Edit']").click()
            box = a.locator(".edit-box textarea")
            a.wait_for_function("document.querySelector('.edit-box textarea') && !document.querySelector('.edit-box textarea').disabled")
            box.fill("Who is coming to dinner?")
            a.locator(".edit-box button[type=submit]").click()
            message_locator(a, "Who is coming to dinner?").locator(".edited-mark").wait_for()
        step("owner edits the message", owner_edits)
        step("bea sees the edit live",
             lambda: message_locator(b, "Who is coming to dinner?").locator(".edited-mark").wait_for())

        def search():
            a.locator("body").press("/")
            a.keyboard.type(f'channel:"{channel}" dinner')
            a.keyboard.press("Enter")
            a.wait_for_url("**#narrow/channel/**/search/dinner")
            message_locator(a, "Who is coming to dinner?").wait_for()
            return a.locator(".message").count() == 1
        step("search with operators narrows to the match", search)
        step("back button returns to the topic", lambda: (a.go_back(), a.wait_for_selector(".narrow-title:has-text('> lunch')")))

        def star_and_resolve():
            msg = message_locator(a, "Who is coming to dinner?")
            msg.hover()
            msg.locator("button[aria-label='Star']").click()
            msg.locator(".star-mark").wait_for()
            msg.hover()
            msg.locator("button[aria-label='Move']").click()
            a.locator("dialog button", has_text="Mark resolved").click()
            a.locator("dialog button[type=submit]").click()
            a.wait_for_selector("dialog", state="detached")
            a.locator(".topics .nav-link.resolved", has_text="lunch").wait_for()
        step("owner stars a message and resolves the topic (move dialog)", star_and_resolve)
        step("bea's topic list marks the topic resolved ✔", lambda: (
            b.goto(f"{site}/#narrow/channel/{channel_id}-browser-tests"),
            b.locator(".topics .nav-link.resolved .resolved-mark").first.wait_for()))

        def upload():
            a.goto(f"{site}/#narrow/channel/{channel_id}-browser-tests/topic/pictures")
            a.locator("body").press("c")
            a.select_option("#compose-channel", str(channel_id))
            a.fill("#compose-topic", "pictures")
            a.set_input_files("input[type=file][aria-label='Upload files']",
                              files=[{"name": "red.png", "mimeType": "image/png", "buffer": png(40, 30, (200, 30, 30))}])
            a.wait_for_function("document.querySelector('#compose-content').value.includes('/user_uploads/')")
            a.click(".compose button[type=submit]")
            img = a.locator(".message-content .message_inline_image img").first
            img.wait_for()
            a.wait_for_function("[...document.querySelectorAll('.message_inline_image img')].some(i => i.complete && i.naturalWidth > 0)")
        step("owner uploads an image and sees it inline", upload)
        step("bea sees the image inline too", lambda: (
            b.goto(f"{site}/#narrow/channel/{channel_id}-browser-tests/topic/pictures"),
            b.locator(".message-content .message_inline_image img").first.wait_for()))

        def paste_and_drop():
            a.locator("body").press("c")
            a.select_option("#compose-channel", str(channel_id))
            a.fill("#compose-topic", "pictures")
            make = """(name) => { const dt = new DataTransfer();
                const c = document.createElement('canvas'); c.width = 30; c.height = 20;
                const g = c.getContext('2d'); g.fillStyle = '#2a6'; g.fillRect(0, 0, 30, 20);
                const bytes = Uint8Array.from(atob(c.toDataURL('image/png').split(',')[1]), ch => ch.charCodeAt(0));
                dt.items.add(new File([bytes], name, {type: 'image/png'})); return dt; }"""
            pasted = a.evaluate_handle(make, "pasted.png")
            a.evaluate("(dt) => document.querySelector('#compose-content').dispatchEvent("
                       "new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}))", pasted)
            dropped = a.evaluate_handle(make, "dropped.png")
            a.dispatch_event("form.compose", "drop", {"dataTransfer": dropped})
            a.wait_for_function("(v => v.includes('[pasted.png](/user_uploads/') && v.includes('[dropped.png](/user_uploads/'))"
                                "(document.querySelector('#compose-content').value)")
            a.click(".compose button[type=submit]")
            msg = message_locator(a, "pasted.png")
            msg.wait_for()
            msg.locator(".message_inline_image img >> nth=1").wait_for()
        step("an image pasted and one dropped on the compose box are uploaded and shown inline", paste_and_drop)

        def create_channel():
            b.locator("button", has_text="Browse").click()
            b.fill(".create-channel input >> nth=0", "made in the browser")
            b.locator(".create-channel button[type=submit]").click()
            b.locator("dialog .channel-browser li", has_text="made in the browser").locator("button", has_text="Unsubscribe").wait_for()
            b.keyboard.press("Escape")
            b.locator(".channels .nav-link", has_text="made in the browser").wait_for()
        step("channel browser creates a channel and subscribes", create_channel)

        def dark_theme():
            a.goto(f"{site}/#settings/preferences")
            a.select_option("#settings-theme", "2")
            a.wait_for_function("document.documentElement.dataset.theme === 'dark'")
            a.select_option("#settings-theme", "3")
            a.wait_for_function("document.documentElement.dataset.theme === 'light'")
            a.keyboard.press("Escape")
            a.wait_for_selector(".settings-overlay", state="detached")
        step("theme setting switches dark and light", dark_theme)

        def phone():
            ctx = browser.new_context(bypass_csp=True, viewport={"width": 390, "height": 800}, storage_state=b_ctx.storage_state())
            p = ctx.new_page()
            p.set_default_timeout(TIMEOUT_MS)
            p.goto(f"{site}/#narrow/channel/{channel_id}-browser-tests")
            p.wait_for_selector(".message")
            hidden = not p.locator(".left-sidebar").is_visible()
            p.locator("button[aria-label='Show channels']").click()
            shown = p.locator(".left-sidebar").is_visible()
            ctx.close()
            return (hidden and shown) or (hidden, shown)
        step("phone-sized screen: channels behind a button", phone)

        # a restart with both pages open: the same pages keep working
        def restart():
            server.stop()
            server.start()
        step("server restarts", restart)

        def chat_after_restart():
            a.wait_for_selector(".connection-banner", state="detached", timeout=40000)
            compose_to_channel(a, channel_id, "pictures", "Still here after the restart")
            message_locator(b, "Still here after the restart").wait_for(timeout=40000)
            return message_locator(b, "Still here after the restart").count() == 1
        step("after the restart the same page keeps chatting (seen once)", chat_after_restart)

        def delete():
            compose_to_channel(a, channel_id, "pictures", "A message to delete")
            msg = message_locator(a, "A message to delete")
            message_locator(b, "A message to delete").wait_for()
            msg.hover()
            msg.locator("button[aria-label='Delete']").click()
            a.locator("dialog button.danger", has_text="Delete").click()
            msg.wait_for(state="detached")
            message_locator(b, "A message to delete").wait_for(state="detached")
        step("owner deletes a message; it goes for bea too", delete)

        def sign_out():
            a.locator("header button", has_text="Sign out").click()
            a.wait_for_url("**/login/**")
            a.goto(f"{site}/")
            a.wait_for_url("**/login/**")
        step("owner signs out", sign_out)
        check("no script errors in the pages", not errors, errors)
        browser.close()


if __name__ == "__main__":
    sys.exit(main())
