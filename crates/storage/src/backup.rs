//! SQLite's side of `parley backup` and `parley restore`: a consistent copy of a live database,
//! and a check of a copy before it is brought back.

use crate::conn::{establish, DbConn};
use crate::error::StorageError;
use crate::url::DatabaseUrl;
use diesel::connection::SimpleConnection;
use std::path::Path;

/// Writes a consistent copy of the SQLite database `url` names to `target` with `VACUUM INTO`:
/// one read transaction, so a running server goes on writing meanwhile (WAL mode).
pub fn sqlite_copy(url: &DatabaseUrl, target: &Path) -> Result<(), StorageError> {
    let target = target.to_str().ok_or_else(|| {
        StorageError::InvalidUrl(format!("{} is not valid UTF-8", target.display()))
    })?;
    let mut conn = establish(url)?;
    if !matches!(conn, DbConn::Sqlite(_)) {
        return Err(StorageError::InvalidUrl(
            "VACUUM INTO copies SQLite databases only".into(),
        ));
    }
    conn.batch_execute(&format!("VACUUM INTO '{}'", target.replace('\'', "''")))?;
    Ok(())
}

/// Whether the SQLite file at `path` is sound (`PRAGMA quick_check` answers `ok`).
pub fn sqlite_check(path: &Path) -> Result<bool, StorageError> {
    use diesel::prelude::*;
    #[derive(QueryableByName)]
    struct Check {
        #[diesel(sql_type = diesel::sql_types::Text)]
        quick_check: String,
    }
    let mut conn = establish(&DatabaseUrl::Sqlite(path.to_owned()))?;
    let DbConn::Sqlite(conn) = &mut conn else {
        return Ok(false);
    };
    let rows: Vec<Check> = diesel::sql_query("PRAGMA quick_check").load(conn)?;
    Ok(rows.len() == 1 && rows[0].quick_check == "ok")
}
