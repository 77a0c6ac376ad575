//! `parley backup DIR` and `parley restore DIR`.
//!
//! A backup is a directory: `parley.db`, a consistent copy of the SQLite database made with
//! `VACUUM INTO` (a read transaction: the server goes on serving and writing meanwhile),
//! `uploads/`, copied after the database so that every file the copied database names is there,
//! and `backup.txt`, what was copied and when. PostgreSQL is backed up with its own tools
//! (`pg_dump`, see the README); `parley backup` then says so rather than copying half.

use crate::config::{Config, UploadStore};
use anyhow::{bail, Context as _};
use parley_storage::DatabaseUrl;
use std::path::{Path, PathBuf};

/// The database file's name inside a backup.
const DATABASE_FILE: &str = "parley.db";
/// The uploads directory's name inside a backup and the data directory.
const UPLOADS_DIR: &str = "uploads";

fn sqlite_path(config: &Config, command: &str) -> anyhow::Result<PathBuf> {
    match &config.database_url {
        DatabaseUrl::Sqlite(path) => Ok(path.clone()),
        DatabaseUrl::Postgres(_) => bail!(
            "parley {command} handles SQLite databases; for PostgreSQL use pg_dump and pg_restore \
             and copy {} yourself (see the README, \"Backups\")",
            config.data_dir.join(UPLOADS_DIR).display()
        ),
    }
}

fn is_empty_dir(dir: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", dir.display())),
    }
}

/// Copies a directory tree (files and directories only); returns how many files.
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<u64> {
    let mut files = 0;
    if !from.exists() {
        return Ok(0);
    }
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            files += copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).with_context(|| {
                format!(
                    "cannot copy {} to {}",
                    entry.path().display(),
                    target.display()
                )
            })?;
            files += 1;
        }
    }
    Ok(files)
}

fn sync_file(path: &Path) -> anyhow::Result<()> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("cannot sync {}", path.display()))
}

/// `parley backup DIR`.
pub async fn backup(config: Config, dir: PathBuf) -> anyhow::Result<()> {
    let source = sqlite_path(&config, "backup")?;
    if !source.exists() {
        bail!("no database at {}", source.display());
    }
    if !is_empty_dir(&dir)? {
        bail!(
            "{} is not empty; back up into a new directory",
            dir.display()
        );
    }
    crate::startup::private_data_dir(&dir)?;
    let target = dir.join(DATABASE_FILE);
    let url = config.database_url.clone();
    let copy = target.clone();
    tokio::task::spawn_blocking(move || parley_storage::backup::sqlite_copy(&url, &copy))
        .await
        .context("backup task failed")?
        .context("cannot copy the database")?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600))?;
    }
    sync_file(&target)?;
    // Files in a bucket stay there: the bucket has its own versioning and replication.
    let files = match &config.upload_store {
        UploadStore::Local => {
            copy_tree(&config.data_dir.join(UPLOADS_DIR), &dir.join(UPLOADS_DIR))?
        }
        UploadStore::S3(s3) => {
            eprintln!(
                "Uploads are kept in {}, not copied: back the bucket up with its own tools.",
                s3.url()
            );
            0
        }
    };
    let manifest = format!(
        "Parley {} backup\ncreated_unix={}\ndatabase={}\nupload_files={files}\n",
        parley_domain::version::service_version(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default(),
        config.database_url.redacted(),
    );
    std::fs::write(dir.join("backup.txt"), manifest)?;
    eprintln!(
        "Backed up {} and {files} upload file(s) to {}.",
        config.database_url.redacted(),
        dir.display()
    );
    Ok(())
}

/// `parley restore DIR [--force]`.
pub async fn restore(config: Config, dir: PathBuf, force: bool) -> anyhow::Result<()> {
    let target = sqlite_path(&config, "restore")?;
    let backup_db = dir.join(DATABASE_FILE);
    if !backup_db.is_file() {
        bail!(
            "{} holds no {DATABASE_FILE}: not a parley backup",
            dir.display()
        );
    }
    let uploads = config.data_dir.join(UPLOADS_DIR);
    let occupied = std::fs::metadata(&target).is_ok_and(|m| m.len() > 0);
    if !force && (occupied || !is_empty_dir(&uploads)?) {
        bail!(
            "{} or {} already holds data; stop the server and pass --force to replace it",
            target.display(),
            uploads.display()
        );
    }
    crate::startup::private_data_dir(&config.data_dir)?;
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    // Copied beside the target and checked there, before anything is replaced.
    let staging = target.with_extension("db.restoring");
    std::fs::copy(&backup_db, &staging)
        .with_context(|| format!("cannot copy {}", backup_db.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))?;
    }
    let check = staging.clone();
    let sound = tokio::task::spawn_blocking(move || parley_storage::backup::sqlite_check(&check))
        .await
        .context("restore task failed")?
        .context("cannot open the backup's database")?;
    if !sound {
        let _ = std::fs::remove_file(&staging);
        bail!("{} is damaged (PRAGMA quick_check)", backup_db.display());
    }
    sync_file(&staging)?;
    // The old database's log and shared memory belong to it, not to the restored file.
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = target.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(name));
    }
    std::fs::rename(&staging, &target)
        .with_context(|| format!("cannot replace {}", target.display()))?;
    if uploads.exists() {
        std::fs::remove_dir_all(&uploads)
            .with_context(|| format!("cannot remove {}", uploads.display()))?;
    }
    let files = copy_tree(&dir.join(UPLOADS_DIR), &uploads)?;
    if let UploadStore::S3(s3) = &config.upload_store {
        eprintln!(
            "Uploads are kept in {}: the restored database names the files that are there.",
            s3.url()
        );
    }
    eprintln!(
        "Restored {} and {files} upload file(s) from {}; start the server.",
        target.display(),
        dir.display()
    );
    Ok(())
}
