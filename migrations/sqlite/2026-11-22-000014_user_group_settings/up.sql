-- Permission settings of user groups, as the JSON group-setting values the API uses (a group ID,
-- or {"direct_members": [...], "direct_subgroups": [...]}). NULL means the default for the group
-- (system groups: role:nobody).
ALTER TABLE user_groups ADD COLUMN can_add_members_group TEXT;
ALTER TABLE user_groups ADD COLUMN can_join_group TEXT;
ALTER TABLE user_groups ADD COLUMN can_leave_group TEXT;
ALTER TABLE user_groups ADD COLUMN can_manage_group TEXT;
ALTER TABLE user_groups ADD COLUMN can_mention_group TEXT;
ALTER TABLE user_groups ADD COLUMN can_remove_members_group TEXT;
