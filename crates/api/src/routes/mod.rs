//! The route table: every endpoint under `/api/v1`, each with the methods it serves. Handlers
//! parse their parameters, call one action and wrap the result.

pub mod alert_words;
pub mod avatars;
pub mod bots;
pub mod calls;
pub mod channel_folders;
pub mod channels;
pub mod drafts;
pub mod events;
pub mod invites;
pub mod linkifiers;
pub mod message_flags;
pub mod messages;
pub mod muted_users;
pub mod navigation_views;
pub mod playgrounds;
pub mod presence;
pub mod profile_fields;
pub mod push;
pub mod reactions;
pub mod realm;
pub mod realm_emoji;
pub mod saved_snippets;
pub mod scheduled_messages;
pub mod server;
pub mod settings;
pub mod signup;
pub mod subscriptions;
pub mod typing;
pub mod uploads;
pub mod user_groups;
pub mod user_status;
pub mod user_topics;
pub mod users;

use actix_web::web;

/// Registers a resource with its method handlers; any other method gets a 405 envelope listing
/// the ones served.
macro_rules! endpoint {
    ($cfg:expr, $path:literal, $($method:ident => $handler:path),+ $(,)?) => {
        $cfg.service(
            web::resource($path)
                $(.route(web::$method().to($handler)))+
                .default_service(web::to(|| async {
                    $crate::fallback::method_not_allowed(&[$(stringify!($method)),+])
                })),
        );
    };
}

/// Registers every `/api/v1` endpoint. Fixed paths come before the parameterised ones they
/// would otherwise match (`/users/me` before `/users/{user}`).
pub fn configure(cfg: &mut web::ServiceConfig) {
    endpoint!(cfg, "/server_settings", get => server::server_settings);
    endpoint!(cfg, "/realm", patch => realm::update);
    endpoint!(cfg, "/realm/test_welcome_bot_custom_message",
        post => realm::test_welcome_bot_custom_message);
    endpoint!(cfg, "/realm/emoji", get => realm_emoji::list);
    endpoint!(cfg, "/realm/emoji/{emoji_name}", post => realm_emoji::add, delete => realm_emoji::delete);
    endpoint!(cfg, "/user_uploads", post => uploads::upload);
    endpoint!(cfg, "/thumbnail", get => uploads::thumbnail);
    endpoint!(cfg, "/user_uploads/{realm_id_str}/{filename:.*}", get => uploads::temporary_url);
    endpoint!(cfg, "/attachments", get => uploads::list);
    endpoint!(cfg, "/attachments/{attachment_id}", delete => uploads::delete);
    endpoint!(cfg, "/mobile_push/register", post => push::register);
    endpoint!(cfg, "/calls/bigbluebutton/create", get => calls::create_bigbluebutton);
    endpoint!(cfg, "/mobile_push/test_notification", post => push::test_notification);
    endpoint!(cfg, "/mobile_push/e2ee/test_notification", post => push::e2ee_test_notification);
    endpoint!(cfg, "/users/me/apns_device_token",
        post => push::add_apns_token, delete => push::remove_apns_token);
    endpoint!(cfg, "/users/me/android_gcm_reg_id",
        post => push::add_fcm_token, delete => push::remove_fcm_token);
    endpoint!(cfg, "/fetch_api_key", post => server::fetch_api_key);
    endpoint!(cfg, "/register", post => events::register);
    endpoint!(cfg, "/events", get => events::get, delete => events::delete);
    endpoint!(cfg, "/users", get => users::list, post => users::create);
    endpoint!(cfg, "/users/me", get => users::me, delete => users::deactivate_me);
    endpoint!(cfg, "/users/me/avatar", post => avatars::upload, delete => avatars::delete);
    endpoint!(cfg, "/users/me/profile_data",
        patch => profile_fields::update_own, delete => profile_fields::delete_own);
    endpoint!(cfg, "/users/me/presence", post => presence::update);
    endpoint!(cfg, "/users/me/status", post => user_status::update_own);
    endpoint!(cfg, "/users/me/alert_words",
        get => alert_words::list, post => alert_words::add, delete => alert_words::remove);
    endpoint!(cfg, "/users/me/muted_users/{muted_user_id}",
        post => muted_users::mute, delete => muted_users::unmute);
    endpoint!(cfg, "/users/me/subscriptions",
        get => subscriptions::list, post => subscriptions::subscribe,
        delete => subscriptions::unsubscribe, patch => subscriptions::update);
    endpoint!(cfg, "/users/me/subscriptions/muted_topics", patch => user_topics::legacy_mute);
    endpoint!(cfg, "/users/me/subscriptions/properties",
        post => subscriptions::update_properties, patch => subscriptions::update_properties);
    endpoint!(cfg, "/users/me/{stream_id}/topics", get => messages::topics);
    endpoint!(cfg, "/users/{user}",
        get => users::get_one, patch => users::update, delete => users::deactivate);
    endpoint!(cfg, "/users/{user_id}/reactivate", post => users::reactivate);
    endpoint!(cfg, "/bots", get => bots::list, post => bots::create);
    endpoint!(cfg, "/bots/{bot_id}", patch => bots::update, delete => bots::deactivate);
    endpoint!(cfg, "/bots/{bot_id}/api_key/regenerate", post => bots::regenerate_api_key);
    endpoint!(cfg, "/users/{user_id_or_email}/presence", get => presence::get_user);
    endpoint!(cfg, "/users/{user_id}/status", get => user_status::get, post => user_status::update_user);
    endpoint!(cfg, "/users/{user_id}/subscriptions/{stream_id}", get => subscriptions::status);
    endpoint!(cfg, "/channels/create", post => channels::create);
    endpoint!(cfg, "/streams", get => channels::list);
    endpoint!(cfg, "/streams/{stream_id}",
        get => channels::get_one, patch => channels::update, delete => channels::archive);
    endpoint!(cfg, "/streams/{stream_id}/members", get => channels::members);
    endpoint!(cfg, "/streams/{stream_id}/email_address", get => channels::email_address);
    endpoint!(cfg, "/streams/{stream_id}/delete_topic", post => messages::delete_topic);
    endpoint!(cfg, "/default_streams", post => channels::add_default, delete => channels::remove_default);
    endpoint!(cfg, "/get_stream_id", get => channels::get_id);
    endpoint!(cfg, "/messages", get => messages::list, post => messages::send);
    endpoint!(cfg, "/messages/render", post => messages::render);
    endpoint!(cfg, "/messages/matches_narrow", get => messages::matches_narrow);
    endpoint!(cfg, "/messages/flags", post => message_flags::update);
    endpoint!(cfg, "/messages/flags/narrow", post => message_flags::update_for_narrow);
    endpoint!(cfg, "/messages/{message_id}",
        get => messages::get_one, patch => messages::edit, delete => messages::delete);
    endpoint!(cfg, "/messages/{message_id}/history", get => messages::history);
    endpoint!(cfg, "/messages/{message_id}/read_receipts", get => messages::read_receipts);
    endpoint!(cfg, "/messages/{message_id}/report", post => messages::report);
    endpoint!(cfg, "/messages/{message_id}/reactions", post => reactions::add, delete => reactions::remove);
    endpoint!(cfg, "/messages/{message_id}/typing", post => typing::set_for_edit);
    endpoint!(cfg, "/mark_all_as_read", post => message_flags::mark_all);
    endpoint!(cfg, "/mark_stream_as_read", post => message_flags::mark_channel);
    endpoint!(cfg, "/mark_topic_as_read", post => message_flags::mark_topic);
    endpoint!(cfg, "/user_topics", post => user_topics::update);
    endpoint!(cfg, "/settings", patch => settings::update);
    // Deprecated aliases (feature level 80) that older clients still call.
    endpoint!(cfg, "/settings/display", patch => settings::update);
    endpoint!(cfg, "/settings/notifications", patch => settings::update);
    endpoint!(cfg, "/realm/user_settings_defaults",
        get => settings::get_defaults, patch => settings::update_defaults);
    endpoint!(cfg, "/realm/profile_fields",
        get => profile_fields::list, post => profile_fields::create,
        patch => profile_fields::reorder);
    endpoint!(cfg, "/realm/profile_fields/{field_id}",
        patch => profile_fields::update, delete => profile_fields::delete);
    endpoint!(cfg, "/realm/presence", get => presence::realm);
    endpoint!(cfg, "/realm/linkifiers", get => linkifiers::list, patch => linkifiers::reorder);
    endpoint!(cfg, "/realm/filters", post => linkifiers::create);
    endpoint!(cfg, "/realm/filters/{filter_id}",
        patch => linkifiers::update, delete => linkifiers::delete);
    endpoint!(cfg, "/realm/playgrounds", post => playgrounds::create);
    endpoint!(cfg, "/realm/playgrounds/{playground_id}", delete => playgrounds::delete);
    endpoint!(cfg, "/typing", post => typing::set);
    endpoint!(cfg, "/drafts", get => drafts::list, post => drafts::create);
    endpoint!(cfg, "/drafts/{draft_id}", patch => drafts::edit, delete => drafts::delete);
    endpoint!(cfg, "/invites", get => invites::list, post => invites::send);
    endpoint!(cfg, "/invites/multiuse", post => invites::create_multiuse);
    endpoint!(cfg, "/invites/multiuse/{invite_id}", delete => invites::revoke_multiuse);
    endpoint!(cfg, "/invites/multiuse/{key}/accept", post => invites::accept);
    endpoint!(cfg, "/invites/{invite_id}", delete => invites::revoke);
    endpoint!(cfg, "/invites/{invite_id}/resend", post => invites::resend);
    endpoint!(cfg, "/saved_snippets", get => saved_snippets::list, post => saved_snippets::create);
    endpoint!(cfg, "/channel_folders",
        get => channel_folders::list, patch => channel_folders::reorder);
    endpoint!(cfg, "/channel_folders/create", post => channel_folders::create);
    endpoint!(cfg, "/channel_folders/{channel_folder_id}", patch => channel_folders::update);
    endpoint!(cfg, "/scheduled_messages",
        get => scheduled_messages::list, post => scheduled_messages::create);
    endpoint!(cfg, "/scheduled_messages/{scheduled_message_id}",
        patch => scheduled_messages::edit, delete => scheduled_messages::delete);
    endpoint!(cfg, "/reminders",
        get => scheduled_messages::list_reminders, post => scheduled_messages::create_reminder);
    endpoint!(cfg, "/reminders/{reminder_id}", delete => scheduled_messages::delete_reminder);
    endpoint!(cfg, "/saved_snippets/{saved_snippet_id}",
        patch => saved_snippets::edit, delete => saved_snippets::delete);
    endpoint!(cfg, "/user_groups", get => user_groups::list);
    endpoint!(cfg, "/user_groups/create", post => user_groups::create);
    endpoint!(cfg, "/user_groups/{user_group_id}", patch => user_groups::update);
    endpoint!(cfg, "/user_groups/{user_group_id}/deactivate", post => user_groups::deactivate);
    endpoint!(cfg, "/user_groups/{user_group_id}/members",
        get => user_groups::members, post => user_groups::update_members);
    endpoint!(cfg, "/user_groups/{user_group_id}/members/{user_id}",
        get => user_groups::is_member);
    endpoint!(cfg, "/user_groups/{user_group_id}/subgroups",
        get => user_groups::subgroups, post => user_groups::update_subgroups);
    endpoint!(cfg, "/navigation_views",
        get => navigation_views::list, post => navigation_views::add);
    endpoint!(cfg, "/navigation_views/{fragment:.+}",
        patch => navigation_views::update, delete => navigation_views::remove);
}
