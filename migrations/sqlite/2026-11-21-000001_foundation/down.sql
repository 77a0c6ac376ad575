DROP TABLE custom_profile_field_values;
DROP TABLE custom_profile_fields;
DROP TABLE users;
DROP TABLE realms;
