//! Number and time formatting for alert messages.
//!
//! Messages are English and meant to be read by people, so large numbers get
//! thousands separators ("1,450 m") and times are shown as a 24-hour clock.
//! Formatting never fails: non-finite values print as "?" rather than
//! panicking, because a message is not worth aborting an analysis for.

/// Rounds to the nearest integer and inserts thousands separators.
pub(crate) fn int_sep(value: f64) -> String {
    if !value.is_finite() {
        return "?".to_owned();
    }
    // `as` saturates, which is the safe behaviour for absurd inputs.
    let rounded = value.round() as i64;
    let digits = rounded.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if rounded < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One decimal place, with thousands separators on the integer part.
pub(crate) fn one_decimal(value: f64) -> String {
    if !value.is_finite() {
        return "?".to_owned();
    }
    let tenths = (value * 10.0).round();
    let negative = tenths < 0.0;
    let abs_tenths = tenths.abs();
    let whole = (abs_tenths / 10.0).trunc();
    let frac = abs_tenths - whole * 10.0;
    let sign = if negative { "-" } else { "" };
    format!("{sign}{}.{}", int_sep(whole), frac.round() as i64)
}

/// Rounds to one decimal place, for JSON parameters.
pub(crate) fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// Splits minutes since local midnight into a "HH:MM" clock reading and a
/// whole-day offset (1 = the next day), rounding to the nearest minute.
pub(crate) fn clock(minutes: f64) -> (String, i64) {
    if !minutes.is_finite() {
        return ("??:??".to_owned(), 0);
    }
    let total = minutes.round() as i64;
    let day = total.div_euclid(1440);
    let in_day = total.rem_euclid(1440);
    (format!("{:02}:{:02}", in_day / 60, in_day % 60), day)
}

/// "HH:MM", followed by "(+1 day)" or "(-1 day)" when not on the stage date.
pub(crate) fn clock_with_day(minutes: f64) -> String {
    let (hhmm, day) = clock(minutes);
    match day {
        0 => hhmm,
        1 => format!("{hhmm} (+1 day)"),
        -1 => format!("{hhmm} (-1 day)"),
        d if d > 0 => format!("{hhmm} (+{d} days)"),
        d => format!("{hhmm} ({d} days)"),
    }
}

/// English ordinal suffix: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st…
pub(crate) fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands() {
        assert_eq!(int_sep(0.0), "0");
        assert_eq!(int_sep(999.4), "999");
        assert_eq!(int_sep(1450.0), "1,450");
        assert_eq!(int_sep(1_234_567.0), "1,234,567");
        assert_eq!(int_sep(-1200.0), "-1,200");
        assert_eq!(int_sep(f64::NAN), "?");
        assert_eq!(int_sep(1e300), "9,223,372,036,854,775,807");
    }

    #[test]
    fn decimals() {
        assert_eq!(one_decimal(12.34), "12.3");
        assert_eq!(one_decimal(12.96), "13.0");
        assert_eq!(one_decimal(1234.5), "1,234.5");
        assert_eq!(one_decimal(-0.04), "0.0");
        assert_eq!(one_decimal(-2.25), "-2.3");
    }

    #[test]
    fn clocks() {
        assert_eq!(clock(0.0), ("00:00".to_owned(), 0));
        assert_eq!(clock(1359.6), ("22:40".to_owned(), 0));
        assert_eq!(clock(1440.0 + 75.0), ("01:15".to_owned(), 1));
        assert_eq!(clock(-30.0), ("23:30".to_owned(), -1));
        assert_eq!(clock_with_day(1500.0), "01:00 (+1 day)");
        assert_eq!(clock_with_day(3000.0), "02:00 (+2 days)");
    }

    #[test]
    fn ordinals() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 111, 102]
            .into_iter()
            .map(ordinal)
            .collect();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd",
                "111th", "102nd"
            ]
        );
    }
}
