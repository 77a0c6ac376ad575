//! The diesel schema, one portable description of both backends' tables.
#![allow(missing_docs)]

diesel::table! {
    realms (id) {
        id -> BigInt,
        name -> Text,
        description -> Text,
        deactivated -> Bool,
        enable_spectator_access -> Bool,
        date_created -> BigInt,
        server_url -> Nullable<Text>,
        url_signing_key -> Nullable<Text>,
    }
}

diesel::table! {
    users (id) {
        id -> BigInt,
        delivery_email -> Text,
        full_name -> Text,
        password_hash -> Nullable<Text>,
        api_key -> Text,
        role -> BigInt,
        is_active -> Bool,
        bot_type -> Nullable<BigInt>,
        bot_owner_id -> Nullable<BigInt>,
        timezone -> Text,
        avatar_source -> Text,
        avatar_version -> BigInt,
        date_joined -> BigInt,
        email_address_visibility -> BigInt,
        can_create_users -> Bool,
        is_system_bot -> Bool,
    }
}

diesel::table! {
    custom_profile_fields (id) {
        id -> BigInt,
        name -> Text,
        hint -> Text,
        field_type -> BigInt,
        field_data -> Text,
        display_in_profile_summary -> Bool,
        required -> Bool,
        sort_order -> BigInt,
    }
}

diesel::table! {
    custom_profile_field_values (id) {
        id -> BigInt,
        user_id -> BigInt,
        field_id -> BigInt,
        value -> Text,
        rendered_value -> Nullable<Text>,
    }
}

diesel::table! {
    user_groups (id) {
        id -> BigInt,
        name -> Text,
        description -> Text,
        is_system_group -> Bool,
        deactivated -> Bool,
        date_created -> BigInt,
        creator_id -> Nullable<BigInt>,
        can_add_members_group -> Nullable<Text>,
        can_join_group -> Nullable<Text>,
        can_leave_group -> Nullable<Text>,
        can_manage_group -> Nullable<Text>,
        can_mention_group -> Nullable<Text>,
        can_remove_members_group -> Nullable<Text>,
    }
}

diesel::table! {
    user_group_members (group_id, user_id) {
        group_id -> BigInt,
        user_id -> BigInt,
    }
}

diesel::table! {
    user_group_subgroups (group_id, subgroup_id) {
        group_id -> BigInt,
        subgroup_id -> BigInt,
    }
}

diesel::table! {
    realm_permissions (name) {
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    channels (id) {
        id -> BigInt,
        name -> Text,
        name_key -> Text,
        description -> Text,
        rendered_description -> Text,
        invite_only -> Bool,
        is_web_public -> Bool,
        history_public_to_subscribers -> Bool,
        message_retention_days -> Nullable<BigInt>,
        topics_policy -> Text,
        is_archived -> Bool,
        date_created -> BigInt,
        creator_id -> Nullable<BigInt>,
        first_message_id -> Nullable<BigInt>,
        folder_id -> Nullable<BigInt>,
        is_default -> Bool,
        can_add_subscribers_group -> Text,
        can_administer_channel_group -> Text,
        can_delete_any_message_group -> Text,
        can_delete_own_message_group -> Text,
        can_move_messages_out_of_channel_group -> Text,
        can_move_messages_within_channel_group -> Text,
        can_remove_subscribers_group -> Text,
        can_send_message_group -> Text,
        can_subscribe_group -> Text,
        can_resolve_topics_group -> Text,
    }
}

diesel::table! {
    subscriptions (id) {
        id -> BigInt,
        user_id -> BigInt,
        channel_id -> BigInt,
        active -> Bool,
        color -> Text,
        pin_to_top -> Bool,
        is_muted -> Bool,
        desktop_notifications -> Nullable<Bool>,
        audible_notifications -> Nullable<Bool>,
        push_notifications -> Nullable<Bool>,
        email_notifications -> Nullable<Bool>,
        wildcard_mentions_notify -> Nullable<Bool>,
    }
}

diesel::joinable!(custom_profile_field_values -> users (user_id));
diesel::joinable!(custom_profile_field_values -> custom_profile_fields (field_id));

diesel::table! {
    dm_groups (id) {
        id -> BigInt,
        dm_key -> Text,
    }
}

diesel::table! {
    messages (id) {
        id -> BigInt,
        sender_id -> BigInt,
        channel_id -> Nullable<BigInt>,
        topic -> Text,
        topic_key -> Text,
        dm_key -> Nullable<Text>,
        dm_group_id -> Nullable<BigInt>,
        recipient_user_id -> Nullable<BigInt>,
        content -> Text,
        rendered_content -> Text,
        date_sent -> BigInt,
        last_edit_time -> Nullable<BigInt>,
        last_moved_time -> Nullable<BigInt>,
        edit_history -> Nullable<Text>,
        has_link -> Bool,
        has_image -> Bool,
        has_attachment -> Bool,
        client -> Text,
        stream_wildcard_mentioned -> Bool,
    }
}

diesel::table! {
    subscription_spans (user_id, channel_id, first_message_id) {
        user_id -> BigInt,
        channel_id -> BigInt,
        first_message_id -> BigInt,
        end_message_id -> Nullable<BigInt>,
    }
}

diesel::table! {
    read_ranges (user_id, channel_id, high) {
        user_id -> BigInt,
        channel_id -> BigInt,
        low -> BigInt,
        high -> BigInt,
    }
}

diesel::table! {
    user_messages (user_id, message_id) {
        user_id -> BigInt,
        message_id -> BigInt,
        flags -> BigInt,
    }
}

diesel::table! {
    reactions (id) {
        id -> BigInt,
        message_id -> BigInt,
        user_id -> BigInt,
        emoji_name -> Text,
        emoji_code -> Text,
        reaction_type -> Text,
    }
}

diesel::table! {
    user_presence (user_id) {
        user_id -> BigInt,
        last_active_time -> Nullable<BigInt>,
        last_connected_time -> BigInt,
        last_update_id -> BigInt,
    }
}

diesel::table! {
    presence_sequence (id) {
        id -> BigInt,
        last_update_id -> BigInt,
    }
}

diesel::joinable!(subscriptions -> channels (channel_id));
diesel::joinable!(subscriptions -> users (user_id));
diesel::joinable!(user_messages -> messages (message_id));
diesel::joinable!(reactions -> messages (message_id));

diesel::table! {
    user_topics (user_id, channel_id, topic_key) {
        user_id -> BigInt,
        channel_id -> BigInt,
        topic_key -> Text,
        topic -> Text,
        visibility_policy -> BigInt,
        last_updated -> BigInt,
    }
}

diesel::table! {
    user_settings (user_id, name) {
        user_id -> BigInt,
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    realm_user_defaults (name) {
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    drafts (id) {
        id -> BigInt,
        user_id -> BigInt,
        draft_type -> Text,
        to_ids -> Text,
        topic -> Text,
        content -> Text,
        last_edit_time -> BigInt,
    }
}

diesel::table! {
    saved_snippets (id) {
        id -> BigInt,
        user_id -> BigInt,
        title -> Text,
        content -> Text,
        date_created -> BigInt,
    }
}

diesel::table! {
    navigation_views (id) {
        id -> BigInt,
        user_id -> BigInt,
        fragment -> Text,
        is_pinned -> Bool,
        name -> Nullable<Text>,
    }
}

diesel::table! {
    user_status (user_id) {
        user_id -> BigInt,
        status_text -> Text,
        emoji_name -> Text,
        emoji_code -> Text,
        reaction_type -> Text,
        last_updated -> BigInt,
    }
}

diesel::table! {
    alert_words (id) {
        id -> BigInt,
        user_id -> BigInt,
        word -> Text,
        word_key -> Text,
    }
}

diesel::table! {
    muted_users (user_id, muted_user_id) {
        user_id -> BigInt,
        muted_user_id -> BigInt,
        date_muted -> BigInt,
    }
}

diesel::table! {
    email_changes (token) {
        token -> Text,
        user_id -> BigInt,
        new_email -> Text,
        created -> BigInt,
    }
}

diesel::table! {
    sessions (token_hash) {
        token_hash -> Text,
        user_id -> BigInt,
        csrf_token -> Text,
        created -> BigInt,
        last_used -> BigInt,
        expires -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    realms,
    users,
    custom_profile_fields,
    custom_profile_field_values,
    user_groups,
    user_group_members,
    user_group_subgroups,
    realm_permissions,
    channels,
    subscriptions,
    dm_groups,
    messages,
    user_messages,
    reactions,
    user_topics,
    user_settings,
    realm_user_defaults,
    drafts,
    saved_snippets,
    navigation_views,
    user_status,
    alert_words,
    muted_users,
    subscription_spans,
    read_ranges,
);

diesel::table! {
    bot_settings (user_id) {
        user_id -> BigInt,
        default_sending_stream_id -> Nullable<BigInt>,
        default_events_register_stream_id -> Nullable<BigInt>,
        default_all_public_streams -> Bool,
        service_name -> Nullable<Text>,
        service_base_url -> Nullable<Text>,
        service_token -> Nullable<Text>,
        service_interface -> Nullable<BigInt>,
        service_config -> Nullable<Text>,
    }
}

diesel::table! {
    attachments (id) {
        id -> BigInt,
        path_id -> Text,
        name -> Text,
        size -> BigInt,
        content_type -> Text,
        owner_id -> BigInt,
        create_time -> BigInt,
    }
}

diesel::table! {
    attachment_messages (attachment_id, message_id) {
        attachment_id -> BigInt,
        message_id -> BigInt,
    }
}

diesel::table! {
    realm_emoji (id) {
        id -> BigInt,
        name -> Text,
        file_name -> Text,
        is_animated -> Bool,
        deactivated -> Bool,
        author_id -> Nullable<BigInt>,
    }
}

diesel::table! {
    image_attachments (attachment_id) {
        attachment_id -> BigInt,
        original_width_px -> Integer,
        original_height_px -> Integer,
        frames -> Integer,
        thumbnails -> Text,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    attachments,
    attachment_messages,
    messages,
    image_attachments
);

diesel::table! {
    email_invites (id) {
        id -> BigInt,
        confirmation_key -> Text,
        email -> Text,
        referred_by -> BigInt,
        invited_as -> BigInt,
        stream_ids -> Text,
        group_ids -> Text,
        include_realm_default_subscriptions -> Bool,
        welcome_message_custom_text -> Nullable<Text>,
        notify_referrer_on_join -> Bool,
        date_created -> BigInt,
        expiry_date -> Nullable<BigInt>,
        status -> BigInt,
    }
}

diesel::table! {
    multiuse_invites (id) {
        id -> BigInt,
        confirmation_key -> Text,
        referred_by -> BigInt,
        invited_as -> BigInt,
        stream_ids -> Text,
        group_ids -> Text,
        include_realm_default_subscriptions -> Bool,
        welcome_message_custom_text -> Nullable<Text>,
        date_created -> BigInt,
        expiry_date -> Nullable<BigInt>,
        revoked -> Bool,
    }
}

diesel::table! {
    linkifiers (id) {
        id -> BigInt,
        pattern -> Text,
        url_template -> Text,
        sort_order -> BigInt,
    }
}

diesel::table! {
    realm_playgrounds (id) {
        id -> BigInt,
        name -> Text,
        pygments_language -> Text,
        url_template -> Text,
    }
}

diesel::table! {
    push_devices (id) {
        id -> BigInt,
        user_id -> BigInt,
        push_account_id -> BigInt,
        token_kind -> Text,
        push_public_key -> Text,
        bouncer_public_key -> Text,
        encrypted_push_registration -> Text,
        created -> BigInt,
    }
}

diesel::table! {
    push_device_tokens (id) {
        id -> BigInt,
        user_id -> BigInt,
        kind -> Text,
        token -> Text,
        ios_app_id -> Nullable<Text>,
        last_updated -> BigInt,
    }
}

diesel::table! {
    scheduled_messages (id) {
        id -> BigInt,
        sender_id -> BigInt,
        kind -> Text,
        channel_id -> Nullable<BigInt>,
        recipient_ids -> Text,
        topic -> Text,
        content -> Text,
        rendered_content -> Text,
        scheduled_at -> BigInt,
        read_by_sender -> Nullable<Bool>,
        delivered -> Bool,
        delivered_message_id -> Nullable<BigInt>,
        failed -> Bool,
        failure_message -> Nullable<Text>,
        reminder_target_message_id -> Nullable<BigInt>,
        date_created -> BigInt,
    }
}

diesel::table! {
    channel_folders (id) {
        id -> BigInt,
        name -> Text,
        description -> Text,
        rendered_description -> Text,
        creator_id -> Nullable<BigInt>,
        date_created -> BigInt,
        is_archived -> Bool,
        folder_order -> BigInt,
    }
}
