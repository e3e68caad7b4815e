//! Solar position and the end of civil twilight ("civil dusk").
//!
//! The planner must work offline and without a timezone or ephemeris
//! database, so the Sun is computed here from the NOAA solar calculator
//! equations (themselves from Meeus, *Astronomical Algorithms*): mean
//! longitude and anomaly, equation of centre, apparent longitude, obliquity,
//! then declination and the equation of time. Their stated accuracy is about
//! one minute for latitudes within ±72°, which is far finer than the
//! question "will the rider arrive after dark?" needs.
//!
//! Civil dusk is the moment, in the evening, when the Sun's centre reaches a
//! zenith distance of 96° (6° below the horizon). Refraction is ignored on
//! purpose: the 96° convention already is the geometric definition.

use chrono::{Datelike, NaiveDate};

/// Zenith distance of the Sun's centre at the end of civil twilight.
pub const CIVIL_TWILIGHT_ZENITH_DEG: f64 = 96.0;

/// Julian Day of 0001-01-01T00:00 UTC minus one, so that adding chrono's
/// `num_days_from_ce` (1 for that date) gives the Julian Day at 00:00 UTC.
const JD_BEFORE_CE: f64 = 1_721_424.5;
/// Julian Day of the J2000.0 epoch.
const JD_J2000: f64 = 2_451_545.0;

/// Result of asking for the civil dusk of one date at one place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CivilDusk {
    /// Civil dusk happens at this many minutes after 00:00 UTC of the given
    /// date. It may be above 1,440 (the next UTC day) or negative, because
    /// the date is the *local* date and the evening of a place far from
    /// Greenwich falls on another UTC day.
    At {
        /// Minutes after 00:00 UTC of the requested date.
        utc_minutes: f64,
    },
    /// The Sun never gets 6° below the horizon that day (white nights,
    /// polar day): there is no civil dusk and it never gets dark.
    NeverDark,
    /// The Sun never rises above 6° below the horizon that day (civil polar
    /// night): there is no civil daylight at all.
    NeverLight,
}

/// Sun parameters at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SunState {
    /// Apparent declination in degrees.
    pub declination_deg: f64,
    /// Equation of time in minutes (apparent minus mean solar time).
    pub equation_of_time_min: f64,
}

/// Julian Day at 00:00 UTC of `date` (proleptic Gregorian calendar).
pub fn julian_day(date: NaiveDate) -> f64 {
    JD_BEFORE_CE + f64::from(date.num_days_from_ce())
}

/// Declination and equation of time at Julian Day `jd` (NOAA equations).
pub fn sun_state(jd: f64) -> SunState {
    // Julian centuries since J2000.0.
    let t = (jd - JD_J2000) / 36_525.0;
    let mean_long = (280.466_46 + t * (36_000.769_83 + t * 0.000_303_2)).rem_euclid(360.0);
    let mean_anom = 357.529_11 + t * (35_999.050_29 - 0.000_153_7 * t);
    let ecc = 0.016_708_634 - t * (0.000_042_037 + 0.000_000_126_7 * t);
    let m = mean_anom.to_radians();
    let centre = m.sin() * (1.914_602 - t * (0.004_817 + 0.000_014 * t))
        + (2.0 * m).sin() * (0.019_993 - 0.000_101 * t)
        + (3.0 * m).sin() * 0.000_289;
    let true_long = mean_long + centre;
    // Nutation and aberration correction to the apparent longitude.
    let omega = (125.04 - 1_934.136 * t).to_radians();
    let apparent_long = true_long - 0.005_69 - 0.004_78 * omega.sin();
    let mean_obliquity =
        23.0 + (26.0 + (21.448 - t * (46.815 + t * (0.000_59 - t * 0.001_813))) / 60.0) / 60.0;
    let obliquity = (mean_obliquity + 0.002_56 * omega.cos()).to_radians();
    let declination = (obliquity.sin() * apparent_long.to_radians().sin()).asin();

    let y = (obliquity / 2.0).tan().powi(2);
    let l0 = mean_long.to_radians();
    let eot_rad = y * (2.0 * l0).sin() - 2.0 * ecc * m.sin()
        + 4.0 * ecc * y * m.sin() * (2.0 * l0).cos()
        - 0.5 * y * y * (4.0 * l0).sin()
        - 1.25 * ecc * ecc * (2.0 * m).sin();
    SunState {
        declination_deg: declination.to_degrees(),
        // Radians of hour angle → minutes of time (4 min per degree).
        equation_of_time_min: 4.0 * eot_rad.to_degrees(),
    }
}

/// Cosine of the hour angle at which the Sun's centre is at `zenith_deg`.
/// Outside [-1, 1] the Sun never reaches that zenith distance that day.
fn cos_hour_angle(lat_deg: f64, declination_deg: f64, zenith_deg: f64) -> f64 {
    let lat = lat_deg.clamp(-90.0, 90.0).to_radians();
    let dec = declination_deg.to_radians();
    // At |lat| = 90° cos(lat) is ~6e-17, not 0, so the quotient is huge but
    // finite and has the right sign: the pole is handled without a branch.
    (zenith_deg.to_radians().cos() - lat.sin() * dec.sin()) / (lat.cos() * dec.cos())
}

/// Civil dusk (Sun 6° below the horizon, evening) on local date `date` at
/// (`lat_deg`, `lon_deg`, positive east). Returns `None` for non-finite
/// coordinates.
///
/// The event time depends on the Sun's position at that time, so the
/// computation starts at local solar noon and is refined three times at the
/// previous estimate; it converges to well under a second.
pub fn civil_dusk(date: NaiveDate, lat_deg: f64, lon_deg: f64) -> Option<CivilDusk> {
    sun_event(date, lat_deg, lon_deg, CIVIL_TWILIGHT_ZENITH_DEG)
}

/// Evening crossing of `zenith_deg`; see [`civil_dusk`].
pub fn sun_event(
    date: NaiveDate,
    lat_deg: f64,
    lon_deg: f64,
    zenith_deg: f64,
) -> Option<CivilDusk> {
    if !(lat_deg.is_finite() && lon_deg.is_finite() && zenith_deg.is_finite()) {
        return None;
    }
    // Wrap so that e.g. 190° E behaves like 170° W.
    let lon = (lon_deg + 180.0).rem_euclid(360.0) - 180.0;
    let jd0 = julian_day(date);
    // First guess: mean solar noon, in minutes after 00:00 UTC.
    let mut minutes = 720.0 - 4.0 * lon;
    for _ in 0..4 {
        let sun = sun_state(jd0 + minutes / 1440.0);
        let cos_h = cos_hour_angle(lat_deg, sun.declination_deg, zenith_deg);
        if cos_h < -1.0 {
            return Some(CivilDusk::NeverDark);
        }
        if cos_h > 1.0 {
            return Some(CivilDusk::NeverLight);
        }
        let hour_angle_deg = cos_h.acos().to_degrees();
        minutes = 720.0 - 4.0 * lon - sun.equation_of_time_min + 4.0 * hour_angle_deg;
    }
    Some(CivilDusk::At {
        utc_minutes: minutes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default()
    }

    #[test]
    fn julian_day_epochs() {
        assert_eq!(julian_day(date(2000, 1, 1)), 2_451_544.5);
        assert_eq!(julian_day(date(1970, 1, 1)), 2_440_587.5);
    }

    #[test]
    fn declination_at_solstices_and_equinox() {
        let june = sun_state(julian_day(date(2026, 6, 21)) + 0.5);
        assert!((june.declination_deg - 23.44).abs() < 0.05, "{june:?}");
        let dec = sun_state(julian_day(date(2026, 12, 21)) + 0.5);
        assert!((dec.declination_deg + 23.44).abs() < 0.05, "{dec:?}");
        // Equation of time: about +16.4 min in early November, about
        // -14.2 min in mid-February (published almanac values).
        let nov = sun_state(julian_day(date(2026, 11, 3)) + 0.5);
        assert!((nov.equation_of_time_min - 16.4).abs() < 0.3, "{nov:?}");
        let feb = sun_state(julian_day(date(2026, 2, 11)) + 0.5);
        assert!((feb.equation_of_time_min + 14.2).abs() < 0.3, "{feb:?}");
    }

    #[test]
    fn non_finite_coordinates() {
        assert_eq!(civil_dusk(date(2026, 6, 21), f64::NAN, 0.0), None);
        assert_eq!(civil_dusk(date(2026, 6, 21), 0.0, f64::INFINITY), None);
    }

    #[test]
    fn poles() {
        assert_eq!(
            civil_dusk(date(2026, 6, 21), 89.9, 0.0),
            Some(CivilDusk::NeverDark)
        );
        assert_eq!(
            civil_dusk(date(2026, 12, 21), 89.9, 0.0),
            Some(CivilDusk::NeverLight)
        );
        assert_eq!(
            civil_dusk(date(2026, 6, 21), -89.9, 0.0),
            Some(CivilDusk::NeverLight)
        );
        assert_eq!(
            civil_dusk(date(2026, 12, 21), 90.0, 180.0),
            Some(CivilDusk::NeverLight)
        );
    }
}
