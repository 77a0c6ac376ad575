//! Typed identifiers, so that a user ID can never be passed where a channel ID is expected.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<i64> for $name {
            fn from(value: i64) -> Self {
                Self(value)
            }
        }
    };
}

id_type!(
    /// A user (person or bot) of the organization.
    UserId
);
id_type!(
    /// A channel (the API's "stream").
    ChannelId
);
id_type!(
    /// A message; messages sort by this ID.
    MessageId
);
id_type!(
    /// A custom profile field definition.
    ProfileFieldId
);
