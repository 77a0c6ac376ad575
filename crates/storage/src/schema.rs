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

diesel::joinable!(custom_profile_field_values -> users (user_id));
diesel::joinable!(custom_profile_field_values -> custom_profile_fields (field_id));

diesel::allow_tables_to_appear_in_same_query!(
    realms,
    users,
    custom_profile_fields,
    custom_profile_field_values,
);
