ALTER TABLE user_groups DROP COLUMN can_remove_members_group;
ALTER TABLE user_groups DROP COLUMN can_mention_group;
ALTER TABLE user_groups DROP COLUMN can_manage_group;
ALTER TABLE user_groups DROP COLUMN can_leave_group;
ALTER TABLE user_groups DROP COLUMN can_join_group;
ALTER TABLE user_groups DROP COLUMN can_add_members_group;
