//! Rules of scheduled messages and reminders that need no storage.

use crate::RequestError;

/// The longest note a reminder may carry, in characters.
pub const MAX_REMINDER_NOTE_LENGTH: usize = 1000;

/// A delivery time must lie in the future, as the reference requires.
pub fn check_delivery_time(timestamp: i64, now: i64) -> Result<(), RequestError> {
    if timestamp <= now {
        return Err(RequestError::invalid_param(
            "scheduled_delivery_timestamp",
            "Scheduled delivery time must be in the future.",
        ));
    }
    Ok(())
}

/// A reminder's note, trimmed; at most [`MAX_REMINDER_NOTE_LENGTH`] characters.
pub fn check_note(note: Option<&str>) -> Result<Option<String>, RequestError> {
    let Some(note) = note.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    if note.chars().count() > MAX_REMINDER_NOTE_LENGTH {
        return Err(RequestError::invalid_param(
            "note",
            format!("Maximum reminder note length: {MAX_REMINDER_NOTE_LENGTH} characters"),
        ));
    }
    Ok(Some(note.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivery_must_be_later_than_now() {
        assert!(check_delivery_time(101, 100).is_ok());
        for past in [100, 99, -1] {
            let err = check_delivery_time(past, 100).unwrap_err();
            assert_eq!(err.data["var_name"], "scheduled_delivery_timestamp");
        }
    }

    #[test]
    fn notes_are_trimmed_and_bounded() {
        assert_eq!(check_note(Some("  hi ")).unwrap().as_deref(), Some("hi"));
        assert_eq!(check_note(Some("   ")).unwrap(), None);
        assert_eq!(check_note(None).unwrap(), None);
        let long = "x".repeat(MAX_REMINDER_NOTE_LENGTH + 1);
        assert_eq!(
            check_note(Some(&long)).unwrap_err().data["var_name"],
            "note"
        );
    }
}
