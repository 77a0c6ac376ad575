"""What the Zulip mobile app (zulip-flutter) needs to find in Parley's answers, written down
independently in Python from reading the app's decoders (lib/api/model/*.dart and *.g.dart,
lib/api/route/*.dart).

The app decodes every answer strictly: a required field that is absent or null, or a value of
the wrong JSON type, throws, and the app treats the whole answer as malformed (a login that fails,
a /register retried forever, an event queue that stops). This module describes, for each object
the app decodes, the fields it reads and what it accepts:

- `INT`, `STR`, `BOOL`, ... : required, present and non-null, of that JSON type. (Integers: the app
  reads `(x as num).toInt()`, which would truncate a float; the API says integer, so an integer
  is required. `STRICT_INT` marks the places the app reads `x as int`.)
- `Nullable(T)`: may be absent or null (`x as T?`, or a default value).
- `AbsentOr(T)`: may be absent but not null (the app fills a default only when the key is missing).
- `ListOf`, `MapOf` (JSON object keys; `int_keys` when the app runs `int.parse` on them), `Obj`.
- `Enum(values)`: one of the listed values (`$enumDecode` without a fallback throws on anything
  else, null included); `Enum(values, unknown_ok=True)`: any non-null value (the app maps
  unrecognised values to `unknown`).
- `Check(fn)`: a rule written as a function, for the few decoders with logic (messages, events).

`validate(type, value)` returns a list of `(path, expected, got)` for everything the app would
choke on; an empty list means the app decodes the answer.
"""

import json
import re

ABSENT = object()


def describe(value):
    if value is ABSENT:
        return "absent"
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > 80:
        text = text[:77] + "..."
    kind = {bool: "bool", int: "int", float: "float", str: "string", list: "list", dict: "object"}.get(type(value), type(value).__name__)
    return f"{kind} {text}"


class Type:
    """Base: `check(value, path, errors)` appends (path, expected, got) tuples."""

    name = "?"

    def check(self, value, path, errors):
        raise NotImplementedError

    def __repr__(self):
        return self.name


class Prim(Type):
    def __init__(self, name, test):
        self.name = name
        self.test = test

    def check(self, value, path, errors):
        if value is ABSENT or value is None or not self.test(value):
            errors.append((path, self.name, describe(value)))


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


INT = Prim("int", _is_int)
STRICT_INT = Prim("int (read `as int`)", _is_int)
NUM = Prim("number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
STR = Prim("string", lambda v: isinstance(v, str))
BOOL = Prim("bool", lambda v: isinstance(v, bool))
ANY = Prim("any value", lambda v: True)


class Nullable(Type):
    def __init__(self, inner):
        self.inner = inner
        self.name = f"{inner.name} or null/absent"

    def check(self, value, path, errors):
        if value is ABSENT or value is None:
            return
        self.inner.check(value, path, errors)


class AbsentOr(Type):
    def __init__(self, inner):
        self.inner = inner
        self.name = f"{inner.name} or absent (not null)"

    def check(self, value, path, errors):
        if value is ABSENT:
            return
        self.inner.check(value, path, errors)


class ListOf(Type):
    def __init__(self, item, sorted_unique=False):
        self.item = item
        self.sorted_unique = sorted_unique
        self.name = f"list of {item.name}"

    def check(self, value, path, errors):
        if not isinstance(value, list):
            errors.append((path, self.name, describe(value)))
            return
        for i, item in enumerate(value):
            self.item.check(item, f"{path}[{i}]", errors)
        if self.sorted_unique and all(_is_int(v) for v in value):
            if any(a >= b for a, b in zip(value, value[1:])):
                errors.append((path, "ids sorted ascending without duplicates (the app asserts it)", describe(value)))


class MapOf(Type):
    def __init__(self, value_type, int_keys=False):
        self.value_type = value_type
        self.int_keys = int_keys
        self.name = f"object of {'int-string keys to ' if int_keys else ''}{value_type.name}"

    def check(self, value, path, errors):
        if not isinstance(value, dict):
            errors.append((path, self.name, describe(value)))
            return
        for key, item in value.items():
            if self.int_keys and not re.fullmatch(r"-?[0-9]+", key):
                errors.append((f"{path}.{key}", "a key that int.parse accepts", describe(key)))
            self.value_type.check(item, f"{path}[{json.dumps(key)}]", errors)


class Obj(Type):
    """A JSON object: `fields` maps key -> Type; extra keys are ignored (the app ignores them)."""

    def __init__(self, name, fields, extra=None):
        self.name = name
        self.fields = fields
        self.extra = extra  # optional function(obj, path, errors) for cross-field rules

    def check(self, value, path, errors):
        if not isinstance(value, dict):
            errors.append((path, f"object {self.name}", describe(value)))
            return
        for key, field_type in self.fields.items():
            field_type.check(value.get(key, ABSENT), f"{path}.{key}", errors)
        if self.extra:
            self.extra(value, path, errors)


class Enum(Type):
    def __init__(self, values, unknown_ok=False, nullable=False):
        self.values = list(values)
        self.unknown_ok = unknown_ok
        self.nullable = nullable
        self.name = ("any non-null value (known: " if unknown_ok else "one of ") + ", ".join(json.dumps(v) for v in self.values) + (")" if unknown_ok else "")
        if nullable:
            self.name += ", or null/absent"

    def check(self, value, path, errors):
        if value is ABSENT or value is None:
            if not self.nullable:
                errors.append((path, self.name, describe(value)))
            return
        if self.unknown_ok:
            return
        # Dart compares with ==; 1 == 1.0 is false for int/double in JSON-decoded values, and
        # True is not 1, so compare type and value.
        if not any(type(value) is type(v) and value == v for v in self.values):
            errors.append((path, self.name, describe(value)))


class Check(Type):
    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def check(self, value, path, errors):
        self.fn(value, path, errors)


def validate(type_, value, path="$"):
    errors = []
    type_.check(value, path, errors)
    return errors


def format_errors(errors, limit=60):
    lines = [f"  at {p}: expected {e}, got {g}" for p, e, g in errors[:limit]]
    if len(errors) > limit:
        lines.append(f"  ... and {len(errors) - limit} more")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Shared pieces (lib/api/model/model.dart, model.g.dart)

def _group_setting_value(value, path, errors):
    # GroupSettingValue.fromJson: an int (a named group) or an object with direct_members and
    # direct_subgroups (lists of ints); anything else throws FormatException.
    if _is_int(value):
        return
    if isinstance(value, dict):
        Obj("GroupSettingValueNameless", {
            "direct_members": ListOf(INT),
            "direct_subgroups": ListOf(INT),
        }).check(value, path, errors)
        return
    errors.append((path, "group-setting value: an int or {direct_members, direct_subgroups}", describe(value)))


GROUP_SETTING = Check("group-setting value", _group_setting_value)
NULLABLE_GROUP_SETTING = Nullable(GROUP_SETTING)

CUSTOM_PROFILE_FIELD = Obj("CustomProfileField", {
    "id": INT,
    "type": Enum([1, 2, 3, 4, 5, 6, 7, 8], unknown_ok=True),
    "order": INT,
    "name": STR,
    "hint": STR,
    "field_data": STR,
    "display_in_profile_summary": Nullable(BOOL),
})

MUTED_USER_ITEM = Obj("MutedUserItem", {"id": INT})

REALM_EMOJI_ITEM = Obj("RealmEmojiItem", {
    "id": STR,
    "name": STR,
    "source_url": STR,
    "still_url": Nullable(STR),
    "deactivated": BOOL,
    "author_id": Nullable(INT),
})

REACTION_TYPE = Enum(["unicode_emoji", "realm_emoji", "zulip_extra_emoji"])


def _user_status_change(value, path, errors):
    # UserStatusChange.fromJson: status_text, emoji_name, emoji_code, reaction_type are each
    # `as String?`; when all three emoji parts are non-empty strings, reaction_type goes through
    # ReactionType.fromApiValue, whose `!` throws on an unknown value.
    if not isinstance(value, dict):
        errors.append((path, "object UserStatusChange", describe(value)))
        return
    for key in ("status_text", "emoji_name", "emoji_code", "reaction_type"):
        Nullable(STR).check(value.get(key, ABSENT), f"{path}.{key}", errors)
    parts = [value.get(k) for k in ("emoji_name", "emoji_code", "reaction_type")]
    if all(isinstance(p, str) and p for p in parts):
        REACTION_TYPE.check(parts[2], f"{path}.reaction_type", errors)


USER_STATUS_CHANGE = Check("UserStatusChange", _user_status_change)

USER_GROUP = Obj("UserGroup", {
    "id": INT,
    "members": ListOf(INT),
    "direct_subgroup_ids": ListOf(INT),
    "name": STR,
    "description": STR,
    "is_system_group": BOOL,
    "deactivated": Nullable(BOOL),
})

USER_ROLE = Enum([100, 200, 300, 400, 600], unknown_ok=True)

PROFILE_FIELD_USER_DATA = Obj("ProfileFieldUserData", {
    "value": STR,
    "rendered_value": Nullable(STR),
})


def user(is_active):
    """User.fromJson. In the /register lists the app fills `is_active` when the key is absent
    (`putIfAbsent`), so there it may be absent but not null; elsewhere (realm_user add) it is
    required."""
    return Obj("User", {
        "user_id": INT,
        "delivery_email": Nullable(STR),
        "email": STR,
        "full_name": STR,
        "date_joined": STR,
        "is_active": is_active,
        "is_bot": BOOL,
        "bot_type": Nullable(INT),
        "bot_owner_id": Nullable(INT),
        "role": USER_ROLE,
        "timezone": STR,
        "avatar_url": Nullable(STR),
        "avatar_version": INT,
        "profile_data": Nullable(MapOf(PROFILE_FIELD_USER_DATA, int_keys=True)),
        "is_system_bot": Nullable(BOOL),
    })


SNAPSHOT_USER = user(AbsentOr(BOOL))
EVENT_USER = user(BOOL)

PER_USER_PRESENCE = Obj("PerUserPresence", {"active_timestamp": INT, "idle_timestamp": INT})

SAVED_SNIPPET = Obj("SavedSnippet", {"id": INT, "title": STR, "content": STR, "date_created": INT})

CHANNEL_POST_POLICY = Enum([1, 2, 3, 4], nullable=True)  # $enumDecodeNullable without fallback

STREAM_FIELDS = {
    "stream_id": INT,
    "name": STR,
    "is_archived": Nullable(BOOL),
    "description": STR,
    "rendered_description": STR,
    "date_created": INT,
    "first_message_id": Nullable(INT),
    "invite_only": BOOL,
    "is_web_public": BOOL,
    "history_public_to_subscribers": BOOL,
    "message_retention_days": Nullable(INT),
    "topics_policy": Enum(["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"], unknown_ok=True, nullable=True),
    "stream_post_policy": CHANNEL_POST_POLICY,
    "folder_id": Nullable(INT),
    "can_add_subscribers_group": NULLABLE_GROUP_SETTING,
    "can_delete_any_message_group": NULLABLE_GROUP_SETTING,
    "can_delete_own_message_group": NULLABLE_GROUP_SETTING,
    "can_send_message_group": NULLABLE_GROUP_SETTING,
    "can_subscribe_group": NULLABLE_GROUP_SETTING,
    "is_recently_active": Nullable(BOOL),
    "stream_weekly_traffic": Nullable(INT),
}

ZULIP_STREAM = Obj("ZulipStream", STREAM_FIELDS)

# Subscription._readColor: `as String`, asserted to match ^#[0-9a-f]{6}$, then parsed as hex.
COLOR = Prim("color string matching ^#[0-9a-f]{6}$", lambda v: isinstance(v, str) and re.fullmatch(r"#[0-9a-f]{6}", v) is not None)

SUBSCRIPTION = Obj("Subscription", dict(STREAM_FIELDS, **{
    "desktop_notifications": Nullable(BOOL),
    "email_notifications": Nullable(BOOL),
    "wildcard_mentions_notify": Nullable(BOOL),
    "push_notifications": Nullable(BOOL),
    "audible_notifications": Nullable(BOOL),
    "pin_to_top": BOOL,
    "is_muted": BOOL,
    "color": COLOR,
}))

CHANNEL_FOLDER = Obj("ChannelFolder", {
    "id": INT,
    "name": STR,
    "order": Nullable(INT),
    "date_created": Nullable(INT),
    "creator_id": Nullable(INT),
    "description": STR,
    "rendered_description": STR,
    "is_archived": BOOL,
})

CLIENT_DEVICE = Obj("ClientDevice", {
    "push_key_id": Nullable(INT),
    "push_token_id": Nullable(STR),
    "pending_push_token_id": Nullable(STR),
    "push_token_last_updated_timestamp": Nullable(INT),
    "push_registration_error_code": Nullable(STR),
})

MESSAGE_FLAGS = ["read", "starred", "collapsed", "mentioned", "topic_wildcard_mentioned",
                 "stream_wildcard_mentioned", "wildcard_mentioned", "has_alert_word", "historical"]


# --------------------------------------------------------------------------------------------
# Messages (Message.fromJson, StreamMessage, DmMessage, MessageEditState._readFromMessage)

REACTION = Obj("Reaction", {
    "emoji_name": STR,
    "emoji_code": STR,
    "reaction_type": REACTION_TYPE,
    "user_id": INT,
})

SUBMESSAGE = Obj("Submessage", {
    "sender_id": INT,
    "msg_type": Enum(["widget"], unknown_ok=True),
    "content": STR,
})


def _edit_history(message, path, errors):
    history = message.get("edit_history", ABSENT)
    Nullable(STRICT_INT).check(message.get("last_edit_timestamp", ABSENT), f"{path}.last_edit_timestamp", errors)
    if history is ABSENT or history is None:
        return
    if not isinstance(history, list):
        errors.append((f"{path}.edit_history", "list or absent", describe(history)))
        return
    if not history:
        errors.append((f"{path}.edit_history", "a non-empty list when present (the app asserts it)", "[]"))
    for i, entry in enumerate(history):
        p = f"{path}.edit_history[{i}]"
        if not isinstance(entry, dict):
            errors.append((p, "object", describe(entry)))
            continue
        if entry.get("prev_content") is not None:
            return  # the app stops reading at the first content edit
        if entry.get("prev_stream") is not None:
            continue
        Nullable(STR).check(entry.get("prev_topic", ABSENT), f"{p}.prev_topic", errors)
        if entry.get("prev_topic") is not None:
            STR.check(entry.get("topic", ABSENT), f"{p}.topic", errors)


def _submessages(message, path, errors):
    subs = message.get("submessages", ABSENT)
    if subs is ABSENT or subs is None:
        return
    ListOf(SUBMESSAGE).check(subs, f"{path}.submessages", errors)
    if isinstance(subs, list) and subs and isinstance(subs[0], dict) and isinstance(subs[0].get("content"), str):
        try:
            json.loads(subs[0]["content"])
        except ValueError:
            errors.append((f"{path}.submessages[0].content", "JSON text (the app jsonDecodes it)", describe(subs[0]["content"])))


COMMON_MESSAGE_FIELDS = {
    "client": STR,
    "content": STR,
    "content_type": STR,
    "id": INT,
    "is_me_message": BOOL,
    "reactions": ListOf(REACTION),
    "sender_email": STR,
    "sender_full_name": STR,
    "sender_id": INT,
    "sender_realm_str": STR,
    "timestamp": INT,
    "flags": ListOf(STR),  # MessageFlag.fromRawString: unknown strings become `unknown`
    "match_content": Nullable(STR),
    "match_subject": Nullable(STR),
}


def _common_extra(message, path, errors):
    _edit_history(message, path, errors)
    _submessages(message, path, errors)


STREAM_MESSAGE = Obj("StreamMessage", dict(COMMON_MESSAGE_FIELDS, **{
    "stream_id": INT,
    "subject": STR,
    # StreamConversation: $checkKeys(requiredKeys: display_recipient, disallowNullValues)
    "display_recipient": STR,
}), extra=_common_extra)


def _dm_recipients(value, path, errors):
    # DmMessage._conversationFromJson: `as List`, each item `as Map` with `id` (num); the ids,
    # sorted, must have no duplicates (DmConversation asserts it).
    if not isinstance(value, list):
        errors.append((path, "list of {id: int, ...}", describe(value)))
        return
    ids = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            errors.append((f"{path}[{i}]", "object with id", describe(item)))
            continue
        INT.check(item.get("id", ABSENT), f"{path}[{i}].id", errors)
        ids.append(item.get("id"))
    if all(_is_int(i) for i in ids) and len(set(ids)) != len(ids):
        errors.append((path, "distinct user ids (the app asserts it)", describe(ids)))


DM_MESSAGE = Obj("DmMessage", dict(COMMON_MESSAGE_FIELDS, **{
    "display_recipient": Check("DM display_recipient", _dm_recipients),
}), extra=_common_extra)


def _message(value, path, errors):
    if not isinstance(value, dict):
        errors.append((path, "object Message", describe(value)))
        return
    kind = value.get("type", ABSENT)
    if kind == "stream":
        STREAM_MESSAGE.check(value, path, errors)
    elif kind == "private":
        DM_MESSAGE.check(value, path, errors)
    else:
        errors.append((f"{path}.type", '"stream" or "private"', describe(kind)))


MESSAGE = Check("Message", _message)


# --------------------------------------------------------------------------------------------
# Answers of the routes the app calls (lib/api/route/*.dart)

SERVER_SETTINGS = Obj("GetServerSettingsResult", {
    "authentication_methods": Obj("AuthenticationMethods", {"ldap": BOOL}),
    "external_authentication_methods": ListOf(Obj("ExternalAuthenticationMethod", {
        "name": STR,
        "display_name": STR,
        "display_icon": Nullable(STR),
        "login_url": STR,
        "signup_url": STR,
    })),
    "zulip_feature_level": INT,
    "zulip_version": STR,
    "zulip_merge_base": STR,
    "push_notifications_enabled": BOOL,
    "is_incompatible": BOOL,
    "email_auth_enabled": BOOL,
    "require_email_format_usernames": BOOL,
    "realm_uri": STR,
    "realm_name": STR,
    "realm_icon": STR,
    "realm_description": STR,
    "realm_web_public_access_enabled": BOOL,
})

FETCH_API_KEY = Obj("FetchApiKeyResult", {"api_key": STR, "email": STR, "user_id": Nullable(INT)})

GET_OWN_USER = Obj("GetOwnUserResult", {"user_id": INT})

UNREAD_MSGS = Obj("UnreadMessagesSnapshot", {
    "count": INT,
    "pms": ListOf(Obj("UnreadDmSnapshot", {
        "other_user_id": INT,
        "unread_message_ids": ListOf(INT, sorted_unique=True),
    })),
    "streams": ListOf(Obj("UnreadChannelSnapshot", {
        "topic": STR,
        "stream_id": INT,
        "unread_message_ids": ListOf(INT, sorted_unique=True),
    })),
    "huddles": ListOf(Obj("UnreadHuddleSnapshot", {
        # DmNarrow.ofUnreadHuddleSnapshot splits it on commas and int.parses each part.
        "user_ids_string": Prim("string of comma-separated user ids", lambda v: isinstance(v, str) and re.fullmatch(r"[0-9]+(,[0-9]+)*", v) is not None),
        "unread_message_ids": ListOf(INT, sorted_unique=True),
    })),
    "mentions": ListOf(INT),
    "old_unreads_missing": BOOL,
})

USER_SETTINGS = Obj("UserSettings", {
    "twenty_four_hour_time": Nullable(BOOL),
    "starred_message_counts": BOOL,
    "display_emoji_reaction_users": BOOL,
    "emojiset": Enum(["google", "google-blob", "twitter", "text"], unknown_ok=True),
    "web_inbox_show_channel_folders": Nullable(BOOL),
    "presence_enabled": BOOL,
})

USER_TOPIC_ITEM = Obj("UserTopicItem", {
    "stream_id": INT,
    "topic_name": STR,
    "last_updated": INT,
    "visibility_policy": Enum([0, 1, 2, 3], unknown_ok=True),
})

INITIAL_SNAPSHOT = Obj("InitialSnapshot", {
    "queue_id": Nullable(STR),  # nullable in the type, but the store throws without it (checked apart)
    "last_event_id": INT,
    "zulip_feature_level": INT,
    "zulip_version": STR,
    "zulip_merge_base": STR,
    "alert_words": ListOf(STR),
    "custom_profile_fields": ListOf(CUSTOM_PROFILE_FIELD),
    "max_stream_name_length": INT,
    "max_topic_length": INT,
    "server_presence_ping_interval_seconds": INT,
    "server_presence_offline_threshold_seconds": INT,
    "server_typing_started_expiry_period_milliseconds": Nullable(INT),
    "server_typing_stopped_wait_period_milliseconds": Nullable(INT),
    "server_typing_started_wait_period_milliseconds": Nullable(INT),
    "muted_users": ListOf(MUTED_USER_ITEM),
    "presences": MapOf(PER_USER_PRESENCE, int_keys=True),
    "realm_emoji": MapOf(REALM_EMOJI_ITEM),
    "realm_user_groups": ListOf(USER_GROUP),
    "recent_private_conversations": ListOf(Obj("RecentDmConversation", {
        "max_message_id": INT,
        "user_ids": ListOf(INT),
    })),
    "saved_snippets": Nullable(ListOf(SAVED_SNIPPET)),
    "subscriptions": ListOf(SUBSCRIPTION),
    "channel_folders": Nullable(ListOf(CHANNEL_FOLDER)),
    "unread_msgs": UNREAD_MSGS,
    "starred_messages": ListOf(INT),
    "streams": ListOf(ZULIP_STREAM),
    "user_status": MapOf(USER_STATUS_CHANGE, int_keys=True),
    "user_settings": USER_SETTINGS,
    "user_topics": ListOf(USER_TOPIC_ITEM),
    "devices": Nullable(MapOf(CLIENT_DEVICE, int_keys=True)),
    "realm_can_delete_any_message_group": NULLABLE_GROUP_SETTING,
    "realm_can_delete_own_message_group": NULLABLE_GROUP_SETTING,
    "realm_delete_own_message_policy": Enum([1, 2, 3, 4, 5], nullable=True),
    "realm_wildcard_mention_policy": Enum([1, 2, 3, 5, 6, 7]),
    "realm_topics_policy": Enum(["allow_empty_topic", "disable_empty_topic"], unknown_ok=True, nullable=True),
    "realm_mandatory_topics": Nullable(BOOL),
    "realm_name": STR,
    "realm_waiting_period_threshold": INT,
    "realm_message_content_delete_limit_seconds": Nullable(INT),
    "realm_allow_message_editing": BOOL,
    "realm_message_content_edit_limit_seconds": Nullable(INT),
    "realm_enable_read_receipts": BOOL,
    "realm_icon_url": STR,
    "realm_presence_disabled": BOOL,
    "realm_default_external_accounts": MapOf(Obj("RealmDefaultExternalAccount", {
        "name": STR, "text": STR, "hint": STR, "url_pattern": STR,
    })),
    "max_file_upload_size_mib": INT,
    "server_thumbnail_formats": Nullable(ListOf(Obj("ThumbnailFormat", {
        "name": STR, "max_width": INT, "max_height": INT, "animated": BOOL, "format": STR,
    }))),
    "server_emoji_data_url": STR,
    "event_queue_longpoll_timeout_seconds": INT,
    "realm_moderation_request_channel_id": Nullable(INT),
    "realm_empty_topic_display_name": Nullable(STR),
    "realm_users": ListOf(SNAPSHOT_USER),
    "realm_non_active_users": ListOf(SNAPSHOT_USER),
    "cross_realm_bots": ListOf(SNAPSHOT_USER),
    "server_report_message_types": Nullable(ListOf(Obj("ReportMessageType", {"key": STR, "name": STR}))),
})

SERVER_EMOJI_DATA = Obj("ServerEmojiData", {"code_to_names": MapOf(ListOf(STR))})

GET_MESSAGES = Obj("GetMessagesResult", {
    "anchor": INT,
    "found_newest": BOOL,
    "found_oldest": BOOL,
    "found_anchor": BOOL,
    "history_limited": BOOL,
    "messages": ListOf(MESSAGE),
})

GET_MESSAGE = Obj("GetMessageResult", {"message": MESSAGE})

SEND_MESSAGE = Obj("SendMessageResult", {"id": INT})

UPDATE_MESSAGE = Obj("UpdateMessageResult", {})

UPDATE_MESSAGE_FLAGS = Obj("UpdateMessageFlagsResult", {"messages": ListOf(INT)})

UPDATE_MESSAGE_FLAGS_FOR_NARROW = Obj("UpdateMessageFlagsForNarrowResult", {
    "processed_count": INT,
    "updated_count": INT,
    "first_processed_id": Nullable(INT),
    "last_processed_id": Nullable(INT),
    "found_oldest": BOOL,
    "found_newest": BOOL,
})

# updatePresence with ping_only false: the app then reads `result.presences!`.
UPDATE_PRESENCE = Obj("UpdatePresenceResult", {
    "presence_last_update_id": Nullable(INT),
    "server_timestamp": Nullable(NUM),
    "presences": MapOf(PER_USER_PRESENCE, int_keys=True),
})

GET_CHANNEL_TOPICS = Obj("GetChannelTopicsResult", {
    "topics": ListOf(Obj("GetChannelTopicsEntry", {"max_id": INT, "name": STR})),
})

UPLOAD_FILE = Obj("UploadFileResult", {"uri": STR})

GET_FILE_TEMPORARY_URL = Obj("GetFileTemporaryUrlResult", {"url": STR})

GET_READ_RECEIPTS = Obj("GetReadReceiptsResult", {"user_ids": ListOf(INT)})

# ApiConnection._makeApiException: a 4xx answer is a Zulip error when result is "error", code
# is a string or absent/null and msg is a string; otherwise the app reports a malformed answer.
API_ERROR = Obj("ZulipApiException", {
    "result": Enum(["error"]),
    "code": Nullable(STR),
    "msg": STR,
})


# --------------------------------------------------------------------------------------------
# Events (Event.fromJson in lib/api/model/events.dart)

MESSAGE_TYPE = Enum(["private", "direct", "stream"])  # MessageTypeConverter maps private -> direct


def _user_settings_value(event, path, errors):
    prop = event.get("property", ABSENT)
    STR.check(prop, f"{path}.property", errors)  # `json['property'] as String`
    value = event.get("value", ABSENT)
    rules = {
        "twenty_four_hour_time": Nullable(BOOL),
        "starred_message_counts": BOOL,
        "display_emoji_reaction_users": BOOL,
        "emojiset": STR,
        "web_inbox_show_channel_folders": BOOL,
        "presence_enabled": BOOL,
    }
    if prop in rules:
        rules[prop].check(value, f"{path}.value", errors)


def _channel_update_value(event, path, errors):
    prop = event.get("property", ABSENT)
    STR.check(prop, f"{path}.property", errors)
    value = event.get("value", ABSENT)
    rules = {
        "name": STR,
        "is_archived": BOOL,
        "description": STR,
        "first_message_id": Nullable(STRICT_INT),
        "invite_only": BOOL,
        "message_retention_days": Nullable(STRICT_INT),
        "topics_policy": STR,
        "stream_post_policy": Enum([1, 2, 3, 4]),
        "folder_id": Nullable(STRICT_INT),
        "can_add_subscribers_group": GROUP_SETTING,
        "can_delete_any_message_group": GROUP_SETTING,
        "can_delete_own_message_group": GROUP_SETTING,
        "can_send_message_group": GROUP_SETTING,
        "can_subscribe_group": GROUP_SETTING,
        "is_recently_active": BOOL,
        "stream_weekly_traffic": Nullable(STRICT_INT),
    }
    if prop in rules:
        rules[prop].check(value, f"{path}.value", errors)


def _subscription_update_value(event, path, errors):
    prop = event.get("property", ABSENT)
    STR.check(prop, f"{path}.property", errors)
    value = event.get("value", ABSENT)
    if prop == "color":
        COLOR.check(value, f"{path}.value", errors)
    elif prop in ("is_muted", "pin_to_top", "desktop_notifications", "audible_notifications",
                  "push_notifications", "email_notifications", "wildcard_mentions_notify"):
        # `value as bool`. Parley documents null for "reset to inherit" for clients with
        # notification_settings_null; the app's decoder does not accept it.
        BOOL.check(value, f"{path}.value", errors)


def _channel_delete_ids(event, path, errors):
    if event.get("stream_ids") is not None:
        ListOf(STRICT_INT).check(event["stream_ids"], f"{path}.stream_ids", errors)
    else:
        ListOf(Obj("stream", {"stream_id": STRICT_INT})).check(event.get("streams", ABSENT), f"{path}.streams", errors)


def _update_message_move(event, path, errors):
    # UpdateMessageMoveData.tryParseFromJson
    orig_stream = event.get("stream_id", ABSENT)
    Nullable(INT).check(orig_stream, f"{path}.stream_id", errors)
    Nullable(INT).check(event.get("new_stream_id", ABSENT), f"{path}.new_stream_id", errors)
    Nullable(STR).check(event.get("orig_subject", ABSENT), f"{path}.orig_subject", errors)
    Nullable(STR).check(event.get("subject", ABSENT), f"{path}.subject", errors)
    mode = event.get("propagate_mode", ABSENT)
    Enum(["change_one", "change_later", "change_all"], nullable=True).check(mode, f"{path}.propagate_mode", errors)
    get = lambda k: None if event.get(k, ABSENT) is ABSENT else event.get(k)  # noqa: E731
    new_stream = get("new_stream_id") if get("new_stream_id") is not None else get("stream_id")
    new_topic = get("subject") if get("subject") is not None else get("orig_subject")
    if new_stream == get("stream_id") and new_topic == get("orig_subject"):
        if get("propagate_mode") is not None:
            errors.append((f"{path}.propagate_mode", "absent when nothing moved (the app throws)", describe(mode)))
        return
    for key in ("stream_id", "orig_subject", "propagate_mode"):
        if get(key) is None:
            errors.append((f"{path}.{key}", "present on a move (the app's `!` throws)", describe(event.get(key, ABSENT))))


def _delete_message_extra(event, path, errors):
    if event.get("message_type") == "stream":
        STRICT_INT.check(event.get("stream_id", ABSENT), f"{path}.stream_id", errors)
        STR.check(event.get("topic", ABSENT), f"{path}.topic", errors)


FLAG_DETAIL = Obj("UpdateMessageFlagsMessageDetail", {
    "type": MESSAGE_TYPE,
    "mentioned": Nullable(BOOL),
    "user_ids": Nullable(ListOf(INT)),
    "stream_id": Nullable(INT),
    "topic": Nullable(STR),
}, extra=lambda d, p, e: (
    (STRICT_INT.check(d.get("stream_id", ABSENT), f"{p}.stream_id", e), STR.check(d.get("topic", ABSENT), f"{p}.topic", e))
    if d.get("type") == "stream" else ListOf(STRICT_INT).check(d.get("user_ids", ABSENT), f"{p}.user_ids", e)))


def _flags_remove_extra(event, path, errors):
    if event.get("flag") == "read":
        MapOf(FLAG_DETAIL, int_keys=True).check(event.get("message_details", ABSENT), f"{path}.message_details", errors)


def _typing(event, path, errors):
    sender = event.get("sender", ABSENT)
    if not isinstance(sender, dict):
        errors.append((f"{path}.sender", "object with user_id", describe(sender)))
    else:
        INT.check(sender.get("user_id", ABSENT), f"{path}.sender.user_id", errors)
    recipients = event.get("recipients", ABSENT)
    if recipients is not ABSENT and recipients is not None:
        ListOf(Obj("typing recipient", {"user_id": STRICT_INT})).check(recipients, f"{path}.recipients", errors)
        if isinstance(recipients, list):
            ids = [r.get("user_id") for r in recipients if isinstance(r, dict)]
            if len(set(map(str, ids))) != len(ids):
                errors.append((f"{path}.recipients", "distinct user ids (the app asserts it)", describe(ids)))
    kind = event.get("message_type")
    if kind == "stream":
        STRICT_INT.check(event.get("stream_id", ABSENT), f"{path}.stream_id", errors)
        STR.check(event.get("topic", ABSENT), f"{path}.topic", errors)
    elif kind in ("private", "direct"):
        if recipients is ABSENT or recipients is None:
            errors.append((f"{path}.recipients", "list of {user_id} for a direct-message typing event", describe(recipients)))


def _realm_user_update(event, path, errors):
    person = event.get("person", ABSENT)
    if not isinstance(person, dict):
        errors.append((f"{path}.person", "object", describe(person)))
        return
    Obj("RealmUserUpdateEvent.person", {
        "user_id": INT,
        "full_name": Nullable(STR),
        "avatar_url": Nullable(STR),
        "avatar_version": Nullable(INT),
        "timezone": Nullable(STR),
        "bot_owner_id": Nullable(INT),
        "role": Enum([100, 200, 300, 400, 600], unknown_ok=True, nullable=True),
        "delivery_email": Nullable(STR),  # JsonNullable: present means string or null
        "custom_profile_field": Nullable(Obj("RealmUserUpdateCustomProfileField", {
            "id": INT, "value": Nullable(STR), "rendered_value": Nullable(STR),
        })),
        "new_email": Nullable(STR),
        "is_active": Nullable(BOOL),
    }).check(person, f"{path}.person", errors)


def _message_event(event, path, errors):
    # MessageEvent._readMessageValue: {...json['message'], 'flags': json['flags']}
    message = event.get("message", ABSENT)
    if not isinstance(message, dict):
        errors.append((f"{path}.message", "object Message", describe(message)))
        return
    merged = dict(message)
    merged["flags"] = event.get("flags", None)
    for key in ("match_content", "match_subject"):
        # PerAccountStore.handleEvent asserts a message event carries no search highlighting.
        if message.get(key) is not None:
            errors.append((f"{path}.message.{key}", "absent on a message event (the app asserts it)", describe(message[key])))
    errs = []
    MESSAGE.check(merged, f"{path}.message", errs)
    errors.extend((p.replace(f"{path}.message.flags", f"{path}.flags"), e, g) for p, e, g in errs)


def event_model(type_, op):
    """The decoder the app picks for an event, by `type` and `op` (Event.fromJson)."""
    with_op = {
        "realm_emoji": {
            "add": {"emoji": REALM_EMOJI_ITEM},
            "update_one": {"emoji_id": STR, "data": Obj("RealmEmojiUpdateData", {"deactivated": Nullable(BOOL)})},
            "update": {"realm_emoji": MapOf(REALM_EMOJI_ITEM)},
        },
        "user_settings": {"update": {"__extra__": _user_settings_value}},
        "device": {
            "add": {"device_id": INT},
            "remove": {"device_id": INT},
            "update": {"device_id": INT, "push_key_id": Nullable(STRICT_INT), "push_token_id": Nullable(STR),
                       "pending_push_token_id": Nullable(STR), "push_token_last_updated_timestamp": Nullable(STRICT_INT),
                       "push_registration_error_code": Nullable(STR)},
        },
        "user_group": {
            "add": {"group": USER_GROUP},
            "update": {"group_id": INT, "data": Obj("UserGroupUpdateData", {
                "name": Nullable(STR), "description": Nullable(STR), "deactivated": Nullable(BOOL)})},
            "add_members": {"group_id": INT, "user_ids": ListOf(INT)},
            "remove_members": {"group_id": INT, "user_ids": ListOf(INT)},
            "add_subgroups": {"group_id": INT, "direct_subgroup_ids": ListOf(INT)},
            "remove_subgroups": {"group_id": INT, "direct_subgroup_ids": ListOf(INT)},
            "remove": {"group_id": INT},
        },
        "realm_user": {
            "add": {"person": EVENT_USER},
            "remove": {"id": STRICT_INT, "person": Obj("person", {"user_id": STRICT_INT})},
            "update": {"__extra__": _realm_user_update},
        },
        "saved_snippets": {
            "add": {"saved_snippet": SAVED_SNIPPET},
            "update": {"saved_snippet": SAVED_SNIPPET},
            "remove": {"saved_snippet_id": INT},
        },
        "stream": {
            "create": {"streams": ListOf(ZULIP_STREAM)},
            "delete": {"__extra__": _channel_delete_ids},
            "update": {"stream_id": INT, "name": STR, "rendered_description": Nullable(STR),
                       "history_public_to_subscribers": Nullable(BOOL), "is_web_public": Nullable(BOOL),
                       "__extra__": _channel_update_value},
        },
        "subscription": {
            "add": {"subscriptions": ListOf(SUBSCRIPTION)},
            "remove": {"subscriptions": ListOf(Obj("subscription", {"stream_id": STRICT_INT}))},
            "update": {"stream_id": INT,
                       "property": Enum(["color", "is_muted", "pin_to_top", "desktop_notifications",
                                         "audible_notifications", "push_notifications",
                                         "email_notifications", "wildcard_mentions_notify"], unknown_ok=True),
                       "__extra__": _subscription_update_value},
            "peer_add": {"stream_ids": ListOf(INT), "user_ids": ListOf(INT)},
            "peer_remove": {"stream_ids": ListOf(INT), "user_ids": ListOf(INT)},
        },
        "channel_folder": {
            "add": {"channel_folder": CHANNEL_FOLDER},
            "update": {"channel_folder_id": INT, "data": Obj("ChannelFolderChange", {
                "name": Nullable(STR), "description": Nullable(STR),
                "rendered_description": Nullable(STR), "is_archived": Nullable(BOOL)})},
            "reorder": {"order": ListOf(INT)},
        },
        "update_message_flags": {
            "add": {"flag": Enum(MESSAGE_FLAGS, unknown_ok=True), "messages": ListOf(INT), "all": BOOL},
            "remove": {"flag": Enum(MESSAGE_FLAGS, unknown_ok=True), "messages": ListOf(INT),
                       "__extra__": _flags_remove_extra},
        },
    }
    without_op = {
        "alert_words": {"alert_words": ListOf(STR)},
        "custom_profile_fields": {"fields": ListOf(CUSTOM_PROFILE_FIELD)},
        "user_status": {"user_id": INT, "__extra__": lambda e, p, errs: USER_STATUS_CHANGE.check(e, p, errs)},
        "user_topic": {"stream_id": INT, "topic_name": STR, "last_updated": INT,
                       "visibility_policy": Enum([0, 1, 2, 3])},
        "muted_users": {"muted_users": ListOf(MUTED_USER_ITEM)},
        "message": {"local_message_id": Nullable(STR), "__extra__": _message_event},
        "update_message": {
            "user_id": Nullable(INT),
            "rendering_only": BOOL,
            "message_id": INT,
            "message_ids": ListOf(INT),
            "flags": ListOf(Enum(MESSAGE_FLAGS + ["unknown"])),  # $enumDecode without fallback
            "edit_timestamp": INT,
            "orig_content": Nullable(STR),
            "orig_rendered_content": Nullable(STR),
            "content": Nullable(STR),
            "rendered_content": Nullable(STR),
            "is_me_message": Nullable(BOOL),
            "__extra__": _update_message_move,
        },
        "delete_message": {"message_ids": ListOf(INT), "message_type": MESSAGE_TYPE,
                           "stream_id": Nullable(INT), "topic": Nullable(STR),
                           "__extra__": _delete_message_extra},
        "submessage": {"msg_type": Enum(["widget"], unknown_ok=True), "content": STR,
                       "message_id": INT, "sender_id": INT, "submessage_id": INT},
        "typing": {"op": Enum(["start", "stop"]), "message_type": MESSAGE_TYPE,
                   "stream_id": Nullable(INT), "topic": Nullable(STR), "__extra__": _typing},
        "presence": {"user_id": INT, "server_timestamp": NUM,
                     "presence": MapOf(Obj("PerClientPresence", {
                         "client": STR, "status": Enum(["active", "idle"]),
                         "timestamp": INT, "pushable": BOOL}))},
        "reaction": {"op": Enum(["add", "remove"]), "emoji_name": STR, "emoji_code": STR,
                     "reaction_type": REACTION_TYPE, "user_id": INT, "message_id": INT},
        "heartbeat": {},
    }
    if type_ in with_op:
        if op in with_op[type_]:
            return f"{type_}/{op}", with_op[type_][op], True
        return f"{type_}/{op} (UnexpectedEvent)", None, True
    if type_ in without_op:
        return type_, without_op[type_], False
    return f"{type_} (UnexpectedEvent)", None, False


def _event(event, path, errors):
    if not isinstance(event, dict):
        errors.append((path, "object Event", describe(event)))
        return
    type_ = event.get("type", ABSENT)
    STR.check(type_, f"{path}.type", errors)
    if not isinstance(type_, str):
        return
    name, fields, has_op = event_model(type_, event.get("op"))
    if has_op:
        STR.check(event.get("op", ABSENT), f"{path}.op", errors)  # `json['op'] as String`
    if fields is None:
        STRICT_INT.check(event.get("id", ABSENT), f"{path}.id", errors)  # UnexpectedEvent: `as int`
        return
    fields = dict(fields)
    extra = fields.pop("__extra__", None)
    Obj(name, dict({"id": INT}, **fields), extra=extra).check(event, path, errors)


EVENT = Check("Event", _event)

GET_EVENTS = Obj("GetEventsResult", {"events": ListOf(EVENT), "queue_id": Nullable(STR)})
