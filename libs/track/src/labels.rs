//! Naming where each day starts and ends, and knowing which country (and so which clock and
//! which holidays) a point is in. The embedded gazetteer answers offline; a production
//! geocoder can stand behind the same trait.

use chrono::{Datelike, NaiveDate, Weekday};

/// What is known about a place near a point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceLabel {
    /// The locality's name (third-party data).
    pub name: String,
    /// ISO 3166-1 alpha-2.
    pub country_code: String,
}

/// Reverse geocoding for day labels.
pub trait Labeller: Send + Sync + std::fmt::Debug {
    /// The place nearest to a point, if any is known.
    fn label(&self, lat: f64, lon: f64) -> Option<PlaceLabel>;
}

/// No labels at all (tests that do not care).
#[derive(Debug, Default)]
pub struct NoLabels;

impl Labeller for NoLabels {
    fn label(&self, _lat: f64, _lon: f64) -> Option<PlaceLabel> {
        None
    }
}

/// The UTC offset in minutes of civil time in `country` on `date`, for the countries whose
/// rules are simple and known here (Europe: WET/CET/EET with EU summer time from the last
/// Sunday of March to the last Sunday of October). `None` elsewhere: the sunset rule then
/// estimates from longitude, and says so.
pub fn utc_offset_minutes(country: &str, date: NaiveDate) -> Option<i32> {
    const WET: [&str; 4] = ["PT", "GB", "IE", "FO"];
    const CET: [&str; 22] = [
        "FR", "DE", "ES", "IT", "CH", "AT", "BE", "NL", "LU", "DK", "SE", "NO", "PL", "CZ", "SK",
        "SI", "HR", "HU", "LI", "MC", "SM", "AD",
    ];
    const EET: [&str; 7] = ["FI", "EE", "LV", "LT", "RO", "BG", "GR"];
    let standard = if WET.contains(&country) {
        0
    } else if CET.contains(&country) {
        60
    } else if EET.contains(&country) {
        120
    } else {
        return None;
    };
    let summer = last_sunday(date.year(), 3)
        .zip(last_sunday(date.year(), 10))
        .is_some_and(|(start, end)| date >= start && date < end);
    Some(standard + if summer { 60 } else { 0 })
}

fn last_sunday(year: i32, month: u32) -> Option<NaiveDate> {
    let next_month = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)
    }?;
    let mut day = next_month.pred_opt()?;
    while day.weekday() != Weekday::Sun {
        day = day.pred_opt()?;
    }
    Some(day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn european_clocks_follow_summer_time() {
        let d = |s: &str| s.parse::<NaiveDate>().expect("date");
        assert_eq!(utc_offset_minutes("FR", d("2026-06-21")), Some(120));
        assert_eq!(utc_offset_minutes("FR", d("2026-12-21")), Some(60));
        assert_eq!(utc_offset_minutes("PT", d("2026-07-01")), Some(60));
        assert_eq!(utc_offset_minutes("GR", d("2026-01-01")), Some(120));
        // 2026: summer time from 29 March to 25 October.
        assert_eq!(utc_offset_minutes("DE", d("2026-03-28")), Some(60));
        assert_eq!(utc_offset_minutes("DE", d("2026-03-29")), Some(120));
        assert_eq!(utc_offset_minutes("DE", d("2026-10-25")), Some(60));
        assert_eq!(utc_offset_minutes("US", d("2026-06-21")), None);
    }
}

/// Labels from the embedded GeoNames gazetteer.
#[derive(Debug, Default)]
pub struct GazetteerLabels;

impl Labeller for GazetteerLabels {
    fn label(&self, lat: f64, lon: f64) -> Option<PlaceLabel> {
        let gazetteer = etappe_gazetteer::Gazetteer::try_embedded().ok()?;
        let nearest = gazetteer.reverse(lat, lon)?;
        Some(PlaceLabel {
            name: nearest.place.name.to_owned(),
            country_code: nearest.place.country_code.to_owned(),
        })
    }
}

/// The embedded gazetteer's labeller, loaded (once) now so that the first job does not pay
/// for it; `None` if the embedded data cannot be read.
pub fn embedded() -> Option<std::sync::Arc<dyn Labeller>> {
    let gazetteer = etappe_gazetteer::Gazetteer::try_embedded().ok()?;
    gazetteer.warm_up();
    Some(std::sync::Arc::new(GazetteerLabels))
}
