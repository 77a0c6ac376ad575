//! How a reaction names its emoji.

/// An emoji as a reaction names it.
#[derive(Debug, Clone)]
pub struct EmojiRef {
    /// Name.
    pub emoji_name: Option<String>,
    /// Code.
    pub emoji_code: Option<String>,
    /// Namespace of the code.
    pub reaction_type: Option<String>,
}
