DROP TABLE realm_playgrounds;
DROP TABLE linkifiers;
