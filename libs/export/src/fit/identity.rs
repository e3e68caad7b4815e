//! What makes one FIT course distinguishable from another on a device: the `file_id`
//! (serial number and creation time) and names that fit the 15 bytes a course or course
//! point name may hold.
//!
//! The writer stays pure: the caller passes the export time in.

/// 1989-12-31T00:00:00Z (the FIT epoch) in Unix seconds.
const FIT_EPOCH_UNIX: i64 = 631_065_600;
/// Below this a FIT `date_time` means "seconds since device power-on", not a date.
const FIT_MIN_DATE: u32 = 0x1000_0000;
/// Bytes of text a FIT name field holds (16 with its NUL).
const NAME_BYTES: usize = 15;

/// The identity written into a course's `file_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FitIdentity {
    /// `serial_number`; 0 is FIT's invalid value and is written as 1.
    pub serial_number: u32,
    /// `time_created`, Unix seconds (the export time).
    pub time_created_unix: i64,
}

impl Default for FitIdentity {
    /// A fixed identity (serial 1, 2024-01-01T00:00:00Z) for callers that want the same
    /// bytes for the same input, such as tests; the server passes a real one.
    fn default() -> Self {
        Self {
            serial_number: 1,
            time_created_unix: 1_704_067_200,
        }
    }
}

impl FitIdentity {
    pub(crate) fn serial_number(&self) -> u32 {
        self.serial_number.max(1)
    }

    pub(crate) fn fit_time_created(&self) -> u32 {
        let fit = self.time_created_unix.saturating_sub(FIT_EPOCH_UNIX);
        u32::try_from(fit.clamp(i64::from(FIT_MIN_DATE), i64::from(u32::MAX - 1)))
            .unwrap_or(FIT_MIN_DATE)
    }
}

/// A non-zero serial number for the file of (trip, day, version): FNV-1a over the three,
/// so each day of each version of each trip gets its own and the same export gets the same.
/// `day` is 0 for the whole trip.
pub fn fit_serial(trip_id: &str, day: u32, version: u64) -> u32 {
    let mut hash: u32 = 0x811C_9DC5;
    let day = day.to_le_bytes();
    let version = version.to_le_bytes();
    for byte in trip_id
        .bytes()
        .chain([0])
        .chain(day)
        .chain([0])
        .chain(version)
    {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash.max(1)
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

/// Text without control characters and with whitespace runs made single spaces.
fn tidy(text: &str) -> String {
    text.split_whitespace()
        .map(|w| w.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A day's course name within 15 bytes, distinct per day: "D3 Passau-Linz". Both places
/// are shortened alike when they do not fit (each cut on a character boundary); without
/// places, "Day 3".
pub fn day_course_name(day: u32, start: Option<&str>, end: Option<&str>) -> String {
    let start = start.map(tidy).filter(|s| !s.is_empty());
    let end = end.map(tidy).filter(|s| !s.is_empty());
    let prefix = format!("D{day} ");
    let room = NAME_BYTES.saturating_sub(prefix.len());
    match (start, end) {
        (Some(a), Some(b)) => {
            let room = room.saturating_sub(1);
            let half = room / 2;
            // The shorter place lends the longer one what it does not need.
            let (a_room, b_room) = if a.len() < half {
                (a.len(), room - a.len())
            } else if b.len() < room - half {
                (room - b.len(), b.len())
            } else {
                (half, room - half)
            };
            format!("{prefix}{}-{}", cut(&a, a_room), cut(&b, b_room))
        }
        (Some(one), None) | (None, Some(one)) => format!("{prefix}{}", cut(&one, room)),
        (None, None) => format!("Day {day}"),
    }
}

/// A course point name within 15 bytes that keeps `name` first and `tag` whole after it:
/// ("Gasthof Post", "N1") gives "Gasthof Post N1"; a long name is cut on a character
/// boundary to leave room for the tag.
pub fn course_point_name(name: &str, tag: &str) -> String {
    let name = tidy(name);
    let tag = cut(tag, NAME_BYTES);
    let room = NAME_BYTES.saturating_sub(tag.len() + 1);
    let name = cut(&name, room).trim_end();
    match (name.is_empty(), tag.is_empty()) {
        (true, _) => tag.to_owned(),
        (false, true) => cut(name, NAME_BYTES).to_owned(),
        (false, false) => format!("{name} {tag}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_names_fit_and_stay_distinct() {
        assert_eq!(
            day_course_name(3, Some("Passau"), Some("Linz")),
            "D3 Passau-Linz"
        );
        let long = day_course_name(12, Some("Regensburg"), Some("Straubing"));
        assert!(long.len() <= 15, "{long}");
        assert_eq!(long, "D12 Regen-Strau");
        let short_start = day_course_name(1, Some("Ulm"), Some("Donauwörth"));
        assert_eq!(short_start, "D1 Ulm-Donauwö");
        let umlauts = day_course_name(4, Some("Größenwahn"), Some("Übersee"));
        assert!(umlauts.len() <= 15, "{umlauts}");
        assert!(umlauts.starts_with("D4 Grö"), "{umlauts}");
        assert_eq!(day_course_name(7, None, None), "Day 7");
        assert_eq!(day_course_name(7, Some(" \n"), Some("Wien")), "D7 Wien");
        let names: Vec<String> = (1..=30)
            .map(|d| day_course_name(d, Some("Donauradweg Passau"), Some("Donauradweg Passau")))
            .collect();
        for (i, a) in names.iter().enumerate() {
            assert!(a.len() <= 15);
            assert!(names[i + 1..].iter().all(|b| b != a), "{a}");
        }
    }

    #[test]
    fn course_point_names_keep_the_name_first() {
        assert_eq!(course_point_name("Gasthof Post", "N1"), "Gasthof Post N1");
        assert_eq!(
            course_point_name("Hotel Zur Goldenen Gans", "N12"),
            "Hotel Zur G N12"
        );
        let cut_umlaut = course_point_name("Gästehaus Übermüller", "N2");
        assert!(
            cut_umlaut.len() <= 15 && cut_umlaut.ends_with(" N2"),
            "{cut_umlaut}"
        );
        assert_eq!(course_point_name("", "N3"), "N3");
        assert_eq!(course_point_name("Spring", ""), "Spring");
    }

    #[test]
    fn serials_differ_by_trip_day_and_version_and_are_never_zero() {
        let a = fit_serial("trip-a", 1, 2);
        assert_eq!(a, fit_serial("trip-a", 1, 2));
        for other in [
            fit_serial("trip-b", 1, 2),
            fit_serial("trip-a", 2, 2),
            fit_serial("trip-a", 1, 3),
            fit_serial("trip-a", 0, 2),
        ] {
            assert_ne!(a, other);
            assert_ne!(other, 0);
        }
    }

    #[test]
    fn time_created_is_a_real_fit_date() {
        let now = FitIdentity {
            serial_number: 0,
            time_created_unix: 1_796_083_200,
        };
        assert_eq!(now.fit_time_created(), 1_796_083_200 - 631_065_600);
        assert_eq!(now.serial_number(), 1);
        let ancient = FitIdentity {
            serial_number: 5,
            time_created_unix: 0,
        };
        assert_eq!(ancient.fit_time_created(), FIT_MIN_DATE);
    }
}
