//! `<time:…>` timestamps: the text inside is parsed as an ISO 8601 date-time, a Unix
//! timestamp or a date such as `31 Dec 2017 5:30 pm`, and rendered as `<time datetime=…>`
//! in UTC. Text that is not understood renders as a plain `<span>`, as Zulip's web client
//! does.

use crate::escape;

/// Renders the inside of `<time:…>`.
pub(crate) fn render(input: &str) -> String {
    match parse(input.trim()) {
        Some(secs) => format!(
            "<time datetime=\"{}\">{}</time>",
            format_utc(secs),
            escape::text(input)
        ),
        None => format!("<span>{}</span>", escape::text(input)),
    }
}

/// Seconds since the Unix epoch for a supported time string.
pub(crate) fn parse(s: &str) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    if let Some(secs) = parse_unix(s) {
        return Some(secs);
    }
    parse_iso(s).or_else(|| parse_human(s))
}

fn parse_unix(s: &str) -> Option<i64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = int.strip_prefix('-').unwrap_or(int);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let value: i64 = int.parse().ok()?;
    // Dates beyond year 275760 are invalid in JavaScript, which Zulip's clients use.
    (value.abs() <= 8_640_000_000_000).then_some(value)
}

fn num(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `YYYY-MM-DD`, optionally followed by `T` or a space, `HH:MM[:SS[.fff]]` and a zone.
fn parse_iso(s: &str) -> Option<i64> {
    let date = s.get(..10)?;
    let mut parts = date.split('-');
    let (y, m, d) = (
        num(parts.next()?)?,
        num(parts.next()?)?,
        num(parts.next()?)?,
    );
    if date.as_bytes()[4] != b'-' || date.as_bytes()[7] != b'-' {
        return None;
    }
    let days = days_from_civil(y, m, d)?;
    let rest = &s[10..];
    if rest.is_empty() {
        return Some(days * 86_400);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (time, zone) = rest.split_at(zone_at);
    let secs = parse_clock(time)?;
    let offset = parse_zone(zone)?;
    Some(days * 86_400 + secs - offset)
}

/// `HH:MM[:SS[.fff]]` in seconds.
fn parse_clock(s: &str) -> Option<i64> {
    let mut parts = s.split(':');
    let h = num(parts.next()?)?;
    let m = num(parts.next()?)?;
    let sec = match parts.next() {
        Some(p) => num(p.split('.').next()?)?,
        None => 0,
    };
    if parts.next().is_some() || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some(h * 3600 + m * 60 + sec)
}

/// A zone suffix in seconds east of UTC.
fn parse_zone(z: &str) -> Option<i64> {
    let z = z.trim();
    if z.is_empty() || z.eq_ignore_ascii_case("z") || z == "UTC" || z == "GMT" {
        return Some(0);
    }
    let sign = match z.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = z[1..].chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 && digits.len() != 2 {
        return None;
    }
    let h = num(&digits[..2])?;
    let m = if digits.len() == 4 {
        num(&digits[2..])?
    } else {
        0
    };
    Some(sign * (h * 3600 + m * 60))
}

fn month(s: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = s.to_ascii_lowercase();
    if lower.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| lower.starts_with(m))
        .map(|i| i as i64 + 1)
}

/// `31 Dec 2017`, `Dec 31, 2017`, optionally with `5:30 pm` / `17:30` and `UTC`.
fn parse_human(s: &str) -> Option<i64> {
    let words: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let mut day = None;
    let mut mon = None;
    let mut year = None;
    let mut clock = None;
    let mut pm = None;
    for w in words {
        let lower = w.to_ascii_lowercase();
        if lower == "am" || lower == "pm" {
            pm = Some(lower == "pm");
        } else if w.contains(':') {
            clock = Some(parse_clock(w)?);
        } else if lower == "utc" || lower == "gmt" || lower == "z" {
        } else if let Some(n) = num(w) {
            if w.len() == 4 && year.is_none() {
                year = Some(n);
            } else if day.is_none() && n <= 31 {
                day = Some(n);
            } else {
                return None;
            }
        } else if let Some(m) = month(w).filter(|_| mon.is_none()) {
            mon = Some(m);
        } else {
            return None;
        }
    }
    let days = days_from_civil(year?, mon?, day?)?;
    let mut secs = clock.unwrap_or(0);
    if let Some(pm) = pm {
        let hours = secs / 3600;
        if !(1..=12).contains(&hours) {
            return None;
        }
        if pm && hours != 12 {
            secs += 12 * 3600;
        } else if !pm && hours == 12 {
            secs -= 12 * 3600;
        }
    }
    Some(days * 86_400 + secs)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> Option<i64> {
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The civil date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DDTHH:MM:SSZ`, with JavaScript's `±YYYYYY` years outside 0..=9999.
pub(crate) fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    format!(
        "{year}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_formats() {
        assert_eq!(
            parse("31 Dec 2017").map(format_utc).as_deref(),
            Some("2017-12-31T00:00:00Z")
        );
        assert_eq!(
            parse("1496701800").map(format_utc).as_deref(),
            Some("2017-06-05T22:30:00Z")
        );
        assert_eq!(
            parse("1234567890123").map(format_utc).as_deref(),
            Some("+041091-11-25T05:02:03Z")
        );
        assert_eq!(
            parse("2024-02-29T10:00:00+02:00")
                .map(format_utc)
                .as_deref(),
            Some("2024-02-29T08:00:00Z")
        );
        assert_eq!(
            parse("Dec 31, 2017 5:30 pm").map(format_utc).as_deref(),
            Some("2017-12-31T17:30:00Z")
        );
        assert_eq!(parse("31 Dec 2017 5:30 am IST"), None);
        assert_eq!(parse("**hello world**"), None);
        assert_eq!(parse("2023-02-30"), None);
    }

    #[test]
    fn renders() {
        assert_eq!(render("<x"), "<span>&lt;x</span>");
        assert!(render("1496701800").starts_with("<time datetime=\"2017-06-05T22:30:00Z\">"));
    }
}
