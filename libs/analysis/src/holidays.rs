//! National public holidays of the countries a European bike trip usually
//! crosses, computed from rules rather than looked up in a database.
//!
//! Every holiday is a fixed date, an offset from Gregorian Easter Sunday,
//! the n-th (or last) weekday of a month, or "the first given weekday on or
//! after a date" (Swedish Midsummer and All Saints). Rules reflect the law
//! in force when this was written; the few recent changes that matter for
//! trips planned now carry a first or last year (Poland's Christmas Eve from
//! 2025, Italy's St Francis from 2026, Denmark's Great Prayer Day until
//! 2023). Regional holidays (German Länder, Swiss cantons, Spanish
//! communities, Alsace-Moselle…) and one-off holidays (jubilees, state
//! funerals) are deliberately absent: the rule only nudges, and a regional
//! list would need data the caller does not pass.

use chrono::{Datelike, Days, NaiveDate, Weekday};

/// How the date of a holiday is found in a given year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Same month and day every year.
    Fixed(u32, u32),
    /// Days after (or before, if negative) Easter Sunday.
    Easter(i32),
    /// The n-th given weekday of a month; n = -1 is the last one.
    NthWeekday(u32, Weekday, i8),
    /// The first given weekday on or after month/day.
    WeekdayOnOrAfter(u32, u32, Weekday),
    /// Fixed month/day, moved to the Saturday before when it is a Sunday
    /// (Dutch King's Day).
    FixedSundayToSaturday(u32, u32),
}

/// One holiday of one country.
#[derive(Debug, Clone, Copy)]
struct Holiday {
    /// English name, shown in messages.
    name: &'static str,
    rule: Rule,
    /// First year in which the holiday exists under current law, if recent.
    from_year: Option<i32>,
    /// Last year in which the holiday existed, if abolished.
    until_year: Option<i32>,
    /// When it falls on a weekend, the next free weekday is also a holiday
    /// ("substitute day"), as for UK bank holidays.
    weekend_substitute: bool,
}

const fn h(name: &'static str, rule: Rule) -> Holiday {
    Holiday {
        name,
        rule,
        from_year: None,
        until_year: None,
        weekend_substitute: false,
    }
}

const fn h_from(name: &'static str, rule: Rule, year: i32) -> Holiday {
    Holiday {
        name,
        rule,
        from_year: Some(year),
        until_year: None,
        weekend_substitute: false,
    }
}

const fn h_until(name: &'static str, rule: Rule, year: i32) -> Holiday {
    Holiday {
        name,
        rule,
        from_year: None,
        until_year: Some(year),
        weekend_substitute: false,
    }
}

const fn h_sub(name: &'static str, rule: Rule) -> Holiday {
    Holiday {
        name,
        rule,
        from_year: None,
        until_year: None,
        weekend_substitute: true,
    }
}

use Rule::{Easter, Fixed, FixedSundayToSaturday, NthWeekday, WeekdayOnOrAfter};

// Shared names, so that the same holiday reads the same in every country.
const NEW_YEAR: &str = "New Year's Day";
const EPIPHANY: &str = "Epiphany";
const MAUNDY_THURSDAY: &str = "Maundy Thursday";
const GOOD_FRIDAY: &str = "Good Friday";
const EASTER_SUNDAY: &str = "Easter Sunday";
const EASTER_MONDAY: &str = "Easter Monday";
const LABOUR_DAY: &str = "Labour Day";
const ASCENSION: &str = "Ascension Day";
const WHIT_SUNDAY: &str = "Whit Sunday";
const WHIT_MONDAY: &str = "Whit Monday";
const CORPUS_CHRISTI: &str = "Corpus Christi";
const ASSUMPTION: &str = "Assumption Day";
const ALL_SAINTS: &str = "All Saints' Day";
const IMMACULATE: &str = "Immaculate Conception";
const CHRISTMAS_EVE: &str = "Christmas Eve";
const CHRISTMAS: &str = "Christmas Day";
const ST_STEPHEN: &str = "St Stephen's Day";
const BOXING_DAY: &str = "Boxing Day";

const FR: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h("Victory in Europe Day", Fixed(5, 8)),
    h(ASCENSION, Easter(39)),
    h(WHIT_MONDAY, Easter(50)),
    h("Bastille Day", Fixed(7, 14)),
    h(ASSUMPTION, Fixed(8, 15)),
    h(ALL_SAINTS, Fixed(11, 1)),
    h("Armistice Day", Fixed(11, 11)),
    h(CHRISTMAS, Fixed(12, 25)),
];

const DE: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h(ASCENSION, Easter(39)),
    h(WHIT_MONDAY, Easter(50)),
    h("German Unity Day", Fixed(10, 3)),
    h(CHRISTMAS, Fixed(12, 25)),
    h("Second Day of Christmas", Fixed(12, 26)),
];

const CH: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(ASCENSION, Easter(39)),
    h(WHIT_MONDAY, Easter(50)),
    h("Swiss National Day", Fixed(8, 1)),
    h(CHRISTMAS, Fixed(12, 25)),
];

const AT: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EPIPHANY, Fixed(1, 6)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h(ASCENSION, Easter(39)),
    h(WHIT_MONDAY, Easter(50)),
    h(CORPUS_CHRISTI, Easter(60)),
    h(ASSUMPTION, Fixed(8, 15)),
    h("Austrian National Day", Fixed(10, 26)),
    h(ALL_SAINTS, Fixed(11, 1)),
    h(IMMACULATE, Fixed(12, 8)),
    h(CHRISTMAS, Fixed(12, 25)),
    h(ST_STEPHEN, Fixed(12, 26)),
];

const IT: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EPIPHANY, Fixed(1, 6)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    h("Liberation Day", Fixed(4, 25)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h("Republic Day", Fixed(6, 2)),
    h(ASSUMPTION, Fixed(8, 15)),
    // Restored as a national holiday by a 2025 law, from 2026 on.
    h_from("St Francis of Assisi Day", Fixed(10, 4), 2026),
    h(ALL_SAINTS, Fixed(11, 1)),
    // Celebrated on the first Sunday of November since 1977.
    h(
        "National Unity and Armed Forces Day",
        NthWeekday(11, Weekday::Sun, 1),
    ),
    h(IMMACULATE, Fixed(12, 8)),
    h(CHRISTMAS, Fixed(12, 25)),
    h(ST_STEPHEN, Fixed(12, 26)),
];

const ES: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EPIPHANY, Fixed(1, 6)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h(ASSUMPTION, Fixed(8, 15)),
    h("National Day of Spain", Fixed(10, 12)),
    h(ALL_SAINTS, Fixed(11, 1)),
    h("Constitution Day", Fixed(12, 6)),
    h(IMMACULATE, Fixed(12, 8)),
    h(CHRISTMAS, Fixed(12, 25)),
];

/// The government's list of official holidays; Good Friday and Liberation
/// Day are on it every year, although many employers give them off only
/// sometimes (Liberation Day every fifth year).
const NL: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    h("King's Day", FixedSundayToSaturday(4, 27)),
    h("Liberation Day", Fixed(5, 5)),
    h(ASCENSION, Easter(39)),
    h(WHIT_SUNDAY, Easter(49)),
    h(WHIT_MONDAY, Easter(50)),
    h(CHRISTMAS, Fixed(12, 25)),
    h("Second Day of Christmas", Fixed(12, 26)),
];

const BE: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h(ASCENSION, Easter(39)),
    h(WHIT_SUNDAY, Easter(49)),
    h(WHIT_MONDAY, Easter(50)),
    h("Belgian National Day", Fixed(7, 21)),
    h(ASSUMPTION, Fixed(8, 15)),
    h(ALL_SAINTS, Fixed(11, 1)),
    h("Armistice Day", Fixed(11, 11)),
    h(CHRISTMAS, Fixed(12, 25)),
];

const LU: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h_from("Europe Day", Fixed(5, 9), 2019),
    h(ASCENSION, Easter(39)),
    h(WHIT_MONDAY, Easter(50)),
    h("Luxembourg National Day", Fixed(6, 23)),
    h(ASSUMPTION, Fixed(8, 15)),
    h(ALL_SAINTS, Fixed(11, 1)),
    h(CHRISTMAS, Fixed(12, 25)),
    h(ST_STEPHEN, Fixed(12, 26)),
];

/// England and Wales bank holidays (Scotland and Northern Ireland differ).
const GB: &[Holiday] = &[
    h_sub(NEW_YEAR, Fixed(1, 1)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(EASTER_MONDAY, Easter(1)),
    h("Early May Bank Holiday", NthWeekday(5, Weekday::Mon, 1)),
    h("Spring Bank Holiday", NthWeekday(5, Weekday::Mon, -1)),
    h("Summer Bank Holiday", NthWeekday(8, Weekday::Mon, -1)),
    h_sub(CHRISTMAS, Fixed(12, 25)),
    h_sub(BOXING_DAY, Fixed(12, 26)),
];

const PT: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(EASTER_SUNDAY, Easter(0)),
    h("Freedom Day", Fixed(4, 25)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h(CORPUS_CHRISTI, Easter(60)),
    h("Portugal Day", Fixed(6, 10)),
    h(ASSUMPTION, Fixed(8, 15)),
    h("Republic Day", Fixed(10, 5)),
    h(ALL_SAINTS, Fixed(11, 1)),
    h("Restoration of Independence", Fixed(12, 1)),
    h(IMMACULATE, Fixed(12, 8)),
    h(CHRISTMAS, Fixed(12, 25)),
];

const DK: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(MAUNDY_THURSDAY, Easter(-3)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    // Abolished by law from 2024 on.
    h_until("General Prayer Day", Easter(26), 2023),
    h(ASCENSION, Easter(39)),
    h(WHIT_SUNDAY, Easter(49)),
    h(WHIT_MONDAY, Easter(50)),
    h(CHRISTMAS, Fixed(12, 25)),
    h("Second Day of Christmas", Fixed(12, 26)),
];

const SE: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EPIPHANY, Fixed(1, 6)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h(ASCENSION, Easter(39)),
    h(WHIT_SUNDAY, Easter(49)),
    h("National Day of Sweden", Fixed(6, 6)),
    h("Midsummer Day", WeekdayOnOrAfter(6, 20, Weekday::Sat)),
    h(ALL_SAINTS, WeekdayOnOrAfter(10, 31, Weekday::Sat)),
    h(CHRISTMAS, Fixed(12, 25)),
    h(ST_STEPHEN, Fixed(12, 26)),
];

const NO: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(MAUNDY_THURSDAY, Easter(-3)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h("Constitution Day", Fixed(5, 17)),
    h(ASCENSION, Easter(39)),
    h(WHIT_SUNDAY, Easter(49)),
    h(WHIT_MONDAY, Easter(50)),
    h(CHRISTMAS, Fixed(12, 25)),
    h(ST_STEPHEN, Fixed(12, 26)),
];

const PL: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EPIPHANY, Fixed(1, 6)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h("Constitution Day", Fixed(5, 3)),
    h(WHIT_SUNDAY, Easter(49)),
    h(CORPUS_CHRISTI, Easter(60)),
    h(ASSUMPTION, Fixed(8, 15)),
    h(ALL_SAINTS, Fixed(11, 1)),
    h("Independence Day", Fixed(11, 11)),
    // A public holiday since 2025.
    h_from(CHRISTMAS_EVE, Fixed(12, 24), 2025),
    h(CHRISTMAS, Fixed(12, 25)),
    h("Second Day of Christmas", Fixed(12, 26)),
];

const CZ: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(GOOD_FRIDAY, Easter(-2)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h("Liberation Day", Fixed(5, 8)),
    h("Saints Cyril and Methodius Day", Fixed(7, 5)),
    h("Jan Hus Day", Fixed(7, 6)),
    h("Statehood Day", Fixed(9, 28)),
    h("Independent Czechoslovak State Day", Fixed(10, 28)),
    h("Struggle for Freedom and Democracy Day", Fixed(11, 17)),
    h(CHRISTMAS_EVE, Fixed(12, 24)),
    h(CHRISTMAS, Fixed(12, 25)),
    h(ST_STEPHEN, Fixed(12, 26)),
];

const SI: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h("New Year Holiday", Fixed(1, 2)),
    h("Prešeren Day", Fixed(2, 8)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    h("Day of Uprising Against Occupation", Fixed(4, 27)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h("Labour Day Holiday", Fixed(5, 2)),
    h(WHIT_SUNDAY, Easter(49)),
    h("Statehood Day", Fixed(6, 25)),
    h(ASSUMPTION, Fixed(8, 15)),
    h("Reformation Day", Fixed(10, 31)),
    h("Remembrance Day", Fixed(11, 1)),
    h(CHRISTMAS, Fixed(12, 25)),
    h("Independence and Unity Day", Fixed(12, 26)),
];

const HR: &[Holiday] = &[
    h(NEW_YEAR, Fixed(1, 1)),
    h(EPIPHANY, Fixed(1, 6)),
    h(EASTER_SUNDAY, Easter(0)),
    h(EASTER_MONDAY, Easter(1)),
    h(LABOUR_DAY, Fixed(5, 1)),
    h_from("Statehood Day", Fixed(5, 30), 2020),
    h(CORPUS_CHRISTI, Easter(60)),
    h("Anti-Fascist Struggle Day", Fixed(6, 22)),
    h("Victory and Homeland Thanksgiving Day", Fixed(8, 5)),
    h(ASSUMPTION, Fixed(8, 15)),
    h(ALL_SAINTS, Fixed(11, 1)),
    h_from("Remembrance Day", Fixed(11, 18), 2020),
    h(CHRISTMAS, Fixed(12, 25)),
    h(ST_STEPHEN, Fixed(12, 26)),
];

/// Country codes with holiday rules, in the order of the product brief.
pub const SUPPORTED_COUNTRIES: &[&str] = &[
    "FR", "DE", "CH", "AT", "IT", "ES", "NL", "BE", "LU", "GB", "PT", "DK", "SE", "NO", "PL", "CZ",
    "SI", "HR",
];

fn table(country: &str) -> Option<&'static [Holiday]> {
    Some(match country {
        "FR" => FR,
        "DE" => DE,
        "CH" => CH,
        "AT" => AT,
        "IT" => IT,
        "ES" => ES,
        "NL" => NL,
        "BE" => BE,
        "LU" => LU,
        "GB" => GB,
        "PT" => PT,
        "DK" => DK,
        "SE" => SE,
        "NO" => NO,
        "PL" => PL,
        "CZ" => CZ,
        "SI" => SI,
        "HR" => HR,
        _ => return None,
    })
}

/// Gregorian Easter Sunday of `year` (anonymous Gregorian algorithm, also
/// known as Meeus/Jones/Butcher). `None` only outside chrono's date range.
pub fn easter_sunday(year: i32) -> Option<NaiveDate> {
    let y = i64::from(year);
    let a = y.rem_euclid(19);
    let b = y.div_euclid(100);
    let c = y.rem_euclid(100);
    let d = b.div_euclid(4);
    let e = b.rem_euclid(4);
    let f = (b + 8).div_euclid(25);
    let g = (b - f + 1).div_euclid(3);
    let h = (19 * a + b - d - g + 15).rem_euclid(30);
    let i = c.div_euclid(4);
    let k = c.rem_euclid(4);
    let l = (32 + 2 * e + 2 * i - h - k).rem_euclid(7);
    let m = (a + 11 * h + 22 * l).div_euclid(451);
    let n = h + l - 7 * m + 114;
    let month = u32::try_from(n.div_euclid(31)).ok()?;
    let day = u32::try_from(n.rem_euclid(31) + 1).ok()?;
    NaiveDate::from_ymd_opt(year, month, day)
}

fn add_days(date: NaiveDate, offset: i32) -> Option<NaiveDate> {
    let magnitude = Days::new(u64::from(offset.unsigned_abs()));
    if offset >= 0 {
        date.checked_add_days(magnitude)
    } else {
        date.checked_sub_days(magnitude)
    }
}

/// The date of `rule` in `year`, if it exists (chrono range, valid day).
fn resolve(rule: Rule, year: i32) -> Option<NaiveDate> {
    match rule {
        Rule::Fixed(month, day) => NaiveDate::from_ymd_opt(year, month, day),
        Rule::Easter(offset) => add_days(easter_sunday(year)?, offset),
        Rule::NthWeekday(month, weekday, n) => {
            let n = if n == -1 { 5 } else { n };
            let first = NaiveDate::from_ymd_opt(year, month, 1)?;
            let shift =
                (7 + weekday.num_days_from_monday() - first.weekday().num_days_from_monday()) % 7;
            // Step forward n-1 weeks; for "last" step back until still in
            // the month.
            let mut date = add_days(first, i32::try_from(shift).ok()?)?;
            for _ in 1..n {
                let next = add_days(date, 7)?;
                if next.month() != month {
                    break;
                }
                date = next;
            }
            Some(date)
        }
        Rule::WeekdayOnOrAfter(month, day, weekday) => {
            let start = NaiveDate::from_ymd_opt(year, month, day)?;
            let shift =
                (7 + weekday.num_days_from_monday() - start.weekday().num_days_from_monday()) % 7;
            add_days(start, i32::try_from(shift).ok()?)
        }
        Rule::FixedSundayToSaturday(month, day) => {
            let date = NaiveDate::from_ymd_opt(year, month, day)?;
            if date.weekday() == Weekday::Sun {
                add_days(date, -1)
            } else {
                Some(date)
            }
        }
    }
}

fn in_force(holiday: &Holiday, year: i32) -> bool {
    holiday.from_year.is_none_or(|from| year >= from)
        && holiday.until_year.is_none_or(|until| year <= until)
}

fn is_weekend(date: NaiveDate) -> bool {
    matches!(date.weekday(), Weekday::Sat | Weekday::Sun)
}

/// Holidays of `country` (upper-case ISO alpha-2) falling on `date`, in
/// table order. An unsupported country yields an empty list. A weekend
/// holiday with a substitute day shows up on both dates, the substitute as
/// "… (substitute day)".
pub fn holidays_on(country: &str, date: NaiveDate) -> Vec<&'static str> {
    let Some(list) = table(country) else {
        return Vec::new();
    };
    let year = date.year();
    let mut names = Vec::new();
    for holiday in list.iter().filter(|hd| in_force(hd, year)) {
        if resolve(holiday.rule, year) == Some(date) {
            names.push(holiday.name);
        }
    }
    if let Some(name) = substitute_on(list, date) {
        names.push(name);
    }
    names
}

/// Name of the substitute holiday observed on `date`, if any.
///
/// Substitutes only exist for late-December and 1 January holidays, whose
/// substitutes stay in the same year (28 December and 3 January at the
/// latest), so only the date's own year is examined. Weekend holidays are
/// processed in date order and
/// each takes the first weekday that is neither a holiday nor already taken,
/// which reproduces the UK rule (Christmas on Saturday → Monday 27th,
/// Boxing Day on Sunday → Tuesday 28th).
fn substitute_on(list: &[Holiday], date: NaiveDate) -> Option<&'static str> {
    if !list.iter().any(|hd| hd.weekend_substitute) {
        return None;
    }
    let year = date.year();
    let mut actual: Vec<(NaiveDate, &Holiday)> = list
        .iter()
        .filter(|hd| in_force(hd, year))
        .filter_map(|hd| resolve(hd.rule, year).map(|d| (d, hd)))
        .collect();
    actual.sort_by_key(|(d, _)| *d);
    let mut taken: Vec<NaiveDate> = Vec::new();
    for (day, holiday) in &actual {
        if !holiday.weekend_substitute || !is_weekend(*day) {
            continue;
        }
        let mut candidate = add_days(*day, 1)?;
        // At most a week of searching: a real calendar never needs more.
        for _ in 0..7 {
            let busy = is_weekend(candidate)
                || actual.iter().any(|(d, _)| *d == candidate)
                || taken.contains(&candidate);
            if !busy {
                break;
            }
            candidate = add_days(candidate, 1)?;
        }
        taken.push(candidate);
        if candidate == date {
            return Some(match holiday.name {
                NEW_YEAR => "New Year's Day (substitute day)",
                CHRISTMAS => "Christmas Day (substitute day)",
                BOXING_DAY => "Boxing Day (substitute day)",
                _ => "Bank holiday (substitute day)",
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap_or_default()
    }

    #[test]
    fn easter_known_dates() {
        let known = [
            (1818, 3, 22),
            (1943, 4, 25),
            (2008, 3, 23),
            (2019, 4, 21),
            (2024, 3, 31),
            (2025, 4, 20),
            (2026, 4, 5),
            (2027, 3, 28),
            (2028, 4, 16),
            (2038, 4, 25),
            (2285, 3, 22),
        ];
        for (y, m, day) in known {
            assert_eq!(easter_sunday(y), Some(d(y, m, day)), "{y}");
        }
    }

    #[test]
    fn easter_always_in_window() {
        for year in 1583..=4099 {
            let easter = easter_sunday(year);
            assert!(easter.is_some_and(|e| e.weekday() == Weekday::Sun
                && e >= d(year, 3, 22)
                && e <= d(year, 4, 25)));
        }
    }

    #[test]
    fn easter_out_of_chrono_range() {
        assert_eq!(easter_sunday(i32::MAX), None);
        assert_eq!(easter_sunday(i32::MIN), None);
    }

    #[test]
    fn brief_examples() {
        assert_eq!(holidays_on("FR", d(2027, 5, 6)), vec![ASCENSION]);
        assert_eq!(holidays_on("DE", d(2026, 10, 3)), vec!["German Unity Day"]);
        assert_eq!(
            holidays_on("GB", d(2026, 5, 25)),
            vec!["Spring Bank Holiday"]
        );
    }

    #[test]
    fn gb_nth_weekday_rules() {
        assert_eq!(
            holidays_on("GB", d(2026, 5, 4)),
            vec!["Early May Bank Holiday"]
        );
        assert_eq!(
            holidays_on("GB", d(2026, 8, 31)),
            vec!["Summer Bank Holiday"]
        );
        // 2027: May starts on a Saturday.
        assert_eq!(
            holidays_on("GB", d(2027, 5, 3)),
            vec!["Early May Bank Holiday"]
        );
        assert_eq!(
            holidays_on("GB", d(2027, 5, 31)),
            vec!["Spring Bank Holiday"]
        );
        assert!(holidays_on("GB", d(2027, 5, 24)).is_empty());
    }

    #[test]
    fn gb_substitute_days() {
        // 2027: Christmas on Saturday, Boxing Day on Sunday.
        assert_eq!(
            holidays_on("GB", d(2027, 12, 27)),
            vec!["Christmas Day (substitute day)"]
        );
        assert_eq!(
            holidays_on("GB", d(2027, 12, 28)),
            vec!["Boxing Day (substitute day)"]
        );
        assert_eq!(holidays_on("GB", d(2027, 12, 25)), vec![CHRISTMAS]);
        // 2022: Christmas on Sunday → Tuesday 27th; Boxing Day on Monday.
        assert_eq!(holidays_on("GB", d(2022, 12, 26)), vec![BOXING_DAY]);
        assert_eq!(
            holidays_on("GB", d(2022, 12, 27)),
            vec!["Christmas Day (substitute day)"]
        );
        // 2028: New Year's Day on Saturday → Monday 3 January.
        assert_eq!(
            holidays_on("GB", d(2028, 1, 3)),
            vec!["New Year's Day (substitute day)"]
        );
        // 2023: New Year's Day on Sunday → Monday 2 January.
        assert_eq!(
            holidays_on("GB", d(2023, 1, 2)),
            vec!["New Year's Day (substitute day)"]
        );
        // No substitutes for countries that do not have them.
        assert!(holidays_on("DE", d(2027, 12, 27)).is_empty());
    }

    #[test]
    fn easter_based_days() {
        // Easter 2026 is 5 April.
        assert_eq!(holidays_on("DE", d(2026, 4, 3)), vec![GOOD_FRIDAY]);
        assert_eq!(holidays_on("FR", d(2026, 4, 6)), vec![EASTER_MONDAY]);
        assert_eq!(holidays_on("CH", d(2026, 5, 14)), vec![ASCENSION]);
        assert_eq!(holidays_on("BE", d(2026, 5, 25)), vec![WHIT_MONDAY]);
        assert_eq!(holidays_on("AT", d(2026, 6, 4)), vec![CORPUS_CHRISTI]);
        assert_eq!(holidays_on("NO", d(2026, 4, 2)), vec![MAUNDY_THURSDAY]);
        // Corpus Christi is not national in Germany or France.
        assert!(holidays_on("DE", d(2026, 6, 4)).is_empty());
        assert!(holidays_on("FR", d(2026, 6, 4)).is_empty());
        // Good Friday is not a public holiday in France or Austria.
        assert!(holidays_on("FR", d(2026, 4, 3)).is_empty());
        assert!(holidays_on("AT", d(2026, 4, 3)).is_empty());
    }

    #[test]
    fn fixed_and_special_rules() {
        assert_eq!(holidays_on("CH", d(2026, 8, 1)), vec!["Swiss National Day"]);
        assert_eq!(holidays_on("FR", d(2026, 7, 14)), vec!["Bastille Day"]);
        assert_eq!(
            holidays_on("ES", d(2026, 10, 12)),
            vec!["National Day of Spain"]
        );
        assert_eq!(holidays_on("NO", d(2026, 5, 17)), vec!["Constitution Day"]);
        // King's Day 2025 fell on a Sunday and was held on Saturday 26 April.
        assert_eq!(holidays_on("NL", d(2025, 4, 26)), vec!["King's Day"]);
        assert!(holidays_on("NL", d(2025, 4, 27)).is_empty());
        assert_eq!(holidays_on("NL", d(2026, 4, 27)), vec!["King's Day"]);
        // Swedish Midsummer Day: Saturday 20–26 June.
        assert_eq!(holidays_on("SE", d(2026, 6, 20)), vec!["Midsummer Day"]);
        assert_eq!(holidays_on("SE", d(2027, 6, 26)), vec!["Midsummer Day"]);
        // Swedish All Saints' Day: Saturday 31 October – 6 November.
        assert_eq!(holidays_on("SE", d(2026, 10, 31)), vec![ALL_SAINTS]);
        assert_eq!(holidays_on("SE", d(2027, 11, 6)), vec![ALL_SAINTS]);
        assert!(holidays_on("SE", d(2027, 11, 1)).is_empty());
    }

    #[test]
    fn sunday_holidays_where_national_law_lists_them() {
        // Easter 2026 is 5 April, Whit Sunday 24 May.
        assert_eq!(holidays_on("BE", d(2026, 4, 5)), vec![EASTER_SUNDAY]);
        assert_eq!(holidays_on("BE", d(2026, 5, 24)), vec![WHIT_SUNDAY]);
        assert_eq!(holidays_on("IT", d(2026, 4, 5)), vec![EASTER_SUNDAY]);
        assert_eq!(
            holidays_on("IT", d(2026, 11, 1)),
            vec![ALL_SAINTS, "National Unity and Armed Forces Day"]
        );
        assert_eq!(
            holidays_on("IT", d(2027, 11, 7)),
            vec!["National Unity and Armed Forces Day"]
        );
        assert_eq!(holidays_on("NL", d(2026, 4, 3)), vec![GOOD_FRIDAY]);
        assert!(holidays_on("DE", d(2026, 4, 5)).is_empty());
    }

    #[test]
    fn year_bounded_rules() {
        assert_eq!(holidays_on("PL", d(2025, 12, 24)), vec![CHRISTMAS_EVE]);
        assert!(holidays_on("PL", d(2024, 12, 24)).is_empty());
        assert_eq!(
            holidays_on("IT", d(2026, 10, 4)),
            vec!["St Francis of Assisi Day"]
        );
        assert!(holidays_on("IT", d(2025, 10, 4)).is_empty());
        // Denmark's General Prayer Day: 5 May 2023, gone in 2024 (26 April).
        assert_eq!(holidays_on("DK", d(2023, 5, 5)), vec!["General Prayer Day"]);
        assert!(holidays_on("DK", d(2024, 4, 26)).is_empty());
    }

    #[test]
    fn coinciding_holidays_are_all_listed() {
        // 2038: Easter Sunday is 25 April, Portugal's Freedom Day.
        assert_eq!(
            holidays_on("PT", d(2038, 4, 25)),
            vec![EASTER_SUNDAY, "Freedom Day"]
        );
    }

    #[test]
    fn every_country_has_new_year_and_christmas() {
        for country in SUPPORTED_COUNTRIES {
            assert!(table(country).is_some());
            assert!(holidays_on(country, d(2026, 1, 1)).contains(&NEW_YEAR));
            assert!(holidays_on(country, d(2026, 12, 25)).contains(&CHRISTMAS));
            assert!(holidays_on(country, d(2026, 3, 10)).is_empty(), "{country}");
        }
        assert!(holidays_on("US", d(2026, 1, 1)).is_empty());
        assert!(holidays_on("fr", d(2026, 1, 1)).is_empty());
    }

    #[test]
    fn extreme_dates_do_not_panic() {
        for country in SUPPORTED_COUNTRIES {
            let _ = holidays_on(country, NaiveDate::MIN);
            let _ = holidays_on(country, NaiveDate::MAX);
        }
    }
}
