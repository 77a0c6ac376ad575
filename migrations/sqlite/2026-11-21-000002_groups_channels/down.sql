DROP TABLE subscriptions;
DROP TABLE channels;
DROP TABLE realm_permissions;
DROP TABLE user_group_subgroups;
DROP TABLE user_group_members;
DROP TABLE user_groups;
