//! The chat Markdown flavour, rendered to sanitized HTML. Messages, channel descriptions, the
//! organization description and Markdown profile fields all go through [`render`], so that every
//! piece of user-written HTML gets the same protections.
//!
//! This first version covers CommonMark with the chat flavour's line breaks, autolinks and
//! strikethrough; mentions, emoji, linkifiers, spoilers and the rest arrive with messages.

use comrak::{markdown_to_html, Options};

/// Renders `source` to HTML that is safe to insert into a page.
pub fn render(source: &str) -> String {
    let mut options = Options::default();
    options.extension.strikethrough = true;
    options.extension.autolink = true;
    options.extension.table = true;
    options.render.hardbreaks = true;
    let html = markdown_to_html(source, &options);
    sanitize(&html).trim_end().to_owned()
}

/// Removes everything but the tags and attributes chat HTML may carry; links open in a new
/// context and carry no referrer.
pub fn sanitize(html: &str) -> String {
    ammonia::Builder::default()
        .link_rel(Some("noopener noreferrer"))
        .clean(html)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_paragraphs_and_emphasis() {
        assert_eq!(
            render("hello **world**"),
            "<p>hello <strong>world</strong></p>"
        );
    }

    #[test]
    fn line_breaks_are_kept() {
        assert_eq!(render("a\nb"), "<p>a<br>\nb</p>");
    }

    #[test]
    fn scripts_are_removed() {
        let html = render("<script>alert(1)</script> hi <img src=x onerror=alert(1)>");
        assert!(!html.contains("script"), "{html}");
        assert!(!html.contains("onerror"), "{html}");
    }
}
