//! zuliprc files: the `[api]` section that the official clients read credentials from.

use std::io::Write;
use std::path::Path;

/// The text of a zuliprc for these credentials.
pub fn render(email: &str, api_key: &str, site: &str) -> String {
    format!("[api]\nemail={email}\nkey={api_key}\nsite={site}\n")
}

/// Writes a zuliprc readable only by its owner, since it holds an API key.
pub fn write(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_api_section() {
        assert_eq!(
            render("a@b.c", "KEY", "http://x"),
            "[api]\nemail=a@b.c\nkey=KEY\nsite=http://x\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/owner.zuliprc");
        write(&path, "x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
