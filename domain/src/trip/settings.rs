//! Trip settings: their defaults, their ranges, and which computations a change invalidates.
//! Every rule about a setting lives here, whichever transport the value came from.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::Category;

/// Kinds of accommodation a rider can enable for the scan around each day's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccommodationType {
    CampSite,
    Hostel,
    AlpineHut,
    Chalet,
    GuestHouse,
    Hotel,
    WildernessHut,
}

impl AccommodationType {
    /// Every type, in the order they are published.
    pub const ALL: [AccommodationType; 7] = [
        Self::CampSite,
        Self::Hostel,
        Self::AlpineHut,
        Self::Chalet,
        Self::GuestHouse,
        Self::Hotel,
        Self::WildernessHut,
    ];

    /// The wire name (`camp_site`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CampSite => "camp_site",
            Self::Hostel => "hostel",
            Self::AlpineHut => "alpine_hut",
            Self::Chalet => "chalet",
            Self::GuestHouse => "guest_house",
            Self::Hotel => "hotel",
            Self::WildernessHut => "wilderness_hut",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// Where the days end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NightsMode {
    /// Wherever the day's distance and climbing say (the rider finds a bed).
    #[default]
    Anywhere,
    /// At a place to sleep of the rider's enabled types, chosen by the pacer near each
    /// day's planned end (see `trip::nights`).
    AtAccommodation,
}

impl NightsMode {
    /// Every mode, in publication order.
    pub const ALL: [NightsMode; 2] = [Self::Anywhere, Self::AtAccommodation];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anywhere => "anywhere",
            Self::AtAccommodation => "at_accommodation",
        }
    }

    /// The mode of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

/// An inclusive numeric range with the wording used in error messages.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    /// `false` when `min` itself is refused (`> 0`).
    pub min_inclusive: bool,
}

impl Range {
    const fn inclusive(min: f64, max: f64) -> Self {
        Self {
            min,
            max,
            min_inclusive: true,
        }
    }

    /// Whether `value` lies in the range.
    pub fn contains(&self, value: f64) -> bool {
        value.is_finite()
            && value <= self.max
            && if self.min_inclusive {
                value >= self.min
            } else {
                value > self.min
            }
    }

    /// "from 0.5 to 1.0", "greater than 0".
    pub fn describe(&self) -> String {
        if self.min_inclusive {
            format!("from {} to {}", fmt_num(self.min), fmt_num(self.max))
        } else if self.max.is_finite() && self.max < f64::MAX {
            format!(
                "greater than {} and at most {}",
                fmt_num(self.min),
                fmt_num(self.max)
            )
        } else {
            format!("greater than {}", fmt_num(self.min))
        }
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// `fatigueFactor`: each day is this fraction of the day before.
pub const FATIGUE_FACTOR: Range = Range::inclusive(0.5, 1.0);
/// `elevationPenalty`: metres of climbing that count as one kilometre.
pub const ELEVATION_PENALTY: Range = Range {
    min: 0.0,
    max: 10_000.0,
    min_inclusive: false,
};
/// `maxDistancePerDay`, km.
pub const MAX_DISTANCE_PER_DAY: Range = Range::inclusive(10.0, 300.0);
/// `days`, a number of days asked without dates.
pub const DAYS: Range = Range::inclusive(1.0, 365.0);
/// `averageSpeed`, km/h.
pub const AVERAGE_SPEED: Range = Range::inclusive(5.0, 50.0);
/// `departureHour`, local hour of the day.
pub const DEPARTURE_HOUR: Range = Range::inclusive(0.0, 23.0);
/// `title`, characters.
pub const TITLE_MAX_CHARS: usize = 255;

/// The settings of a trip. Defaults and ranges are those of the product specification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TripSettings {
    pub title: Option<String>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    pub fatigue_factor: f64,
    pub elevation_penalty: f64,
    pub max_distance_per_day: f64,
    pub average_speed: f64,
    pub departure_hour: u8,
    pub ebike_mode: bool,
    /// In order of preference: with nights at accommodation, the first type wins a tie.
    pub enabled_accommodation_types: Vec<AccommodationType>,
    /// Where the days end (absent in settings stored before it existed: anywhere).
    #[serde(default)]
    pub nights: NightsMode,
    /// How many days, asked without dates ("in 6 days"); with both dates set, the dates rule.
    /// Left out of stored events when unset, so events written before it keep their shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<u32>,
}

impl Default for TripSettings {
    fn default() -> Self {
        Self {
            title: None,
            start_date: None,
            end_date: None,
            fatigue_factor: 0.9,
            elevation_penalty: 50.0,
            max_distance_per_day: 80.0,
            average_speed: 15.0,
            departure_hour: 8,
            ebike_mode: false,
            enabled_accommodation_types: AccommodationType::ALL.to_vec(),
            nights: NightsMode::Anywhere,
            days: None,
        }
    }
}

/// A setting, by its wire name. The order is the order of publication.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SettingField {
    Title,
    StartDate,
    EndDate,
    FatigueFactor,
    ElevationPenalty,
    MaxDistancePerDay,
    AverageSpeed,
    DepartureHour,
    EbikeMode,
    EnabledAccommodationTypes,
    Nights,
    Days,
}

impl SettingField {
    /// Every setting.
    pub const ALL: [SettingField; 12] = [
        Self::Title,
        Self::StartDate,
        Self::EndDate,
        Self::FatigueFactor,
        Self::ElevationPenalty,
        Self::MaxDistancePerDay,
        Self::AverageSpeed,
        Self::DepartureHour,
        Self::EbikeMode,
        Self::EnabledAccommodationTypes,
        Self::Nights,
        Self::Days,
    ];

    /// The wire (JSON) name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Title => "title",
            Self::StartDate => "startDate",
            Self::EndDate => "endDate",
            Self::FatigueFactor => "fatigueFactor",
            Self::ElevationPenalty => "elevationPenalty",
            Self::MaxDistancePerDay => "maxDistancePerDay",
            Self::AverageSpeed => "averageSpeed",
            Self::DepartureHour => "departureHour",
            Self::EbikeMode => "ebikeMode",
            Self::EnabledAccommodationTypes => "enabledAccommodationTypes",
            Self::Nights => "nights",
            Self::Days => "days",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A partial change of settings: `None` leaves a setting as it is. Dates can be cleared, so
/// they carry a second level (`Some(None)` clears).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SettingsPatch {
    pub title: Option<String>,
    pub start_date: Option<Option<NaiveDate>>,
    pub end_date: Option<Option<NaiveDate>>,
    pub fatigue_factor: Option<f64>,
    pub elevation_penalty: Option<f64>,
    pub max_distance_per_day: Option<f64>,
    pub average_speed: Option<f64>,
    pub departure_hour: Option<u8>,
    pub ebike_mode: Option<bool>,
    pub enabled_accommodation_types: Option<Vec<AccommodationType>>,
    pub nights: Option<NightsMode>,
    /// `Some(None)` clears the number of days.
    pub days: Option<Option<u32>>,
}

impl SettingsPatch {
    /// Whether the patch names no setting at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The settings after the patch.
    pub fn apply_to(&self, base: &TripSettings) -> TripSettings {
        let mut s = base.clone();
        if let Some(v) = &self.title {
            s.title = Some(v.clone());
        }
        if let Some(v) = self.start_date {
            s.start_date = v;
        }
        if let Some(v) = self.end_date {
            s.end_date = v;
        }
        if let Some(v) = self.fatigue_factor {
            s.fatigue_factor = v;
        }
        if let Some(v) = self.elevation_penalty {
            s.elevation_penalty = v;
        }
        if let Some(v) = self.max_distance_per_day {
            s.max_distance_per_day = v;
        }
        if let Some(v) = self.average_speed {
            s.average_speed = v;
        }
        if let Some(v) = self.departure_hour {
            s.departure_hour = v;
        }
        if let Some(v) = self.ebike_mode {
            s.ebike_mode = v;
        }
        if let Some(v) = &self.enabled_accommodation_types {
            s.enabled_accommodation_types = v.clone();
        }
        if let Some(v) = self.nights {
            s.nights = v;
        }
        if let Some(v) = self.days {
            s.days = v;
        }
        s
    }
}

impl TripSettings {
    /// Rules that involve more than one setting. Single values are checked when parsed.
    pub fn cross_field_errors(&self) -> Vec<super::FieldError> {
        let mut errors = Vec::new();
        if let (Some(start), Some(end)) = (self.start_date, self.end_date)
            && end <= start
        {
            errors.push(super::FieldError::new(
                "endDate",
                format!("endDate must be after startDate ({start}); got {end}"),
            ));
        }
        errors
    }

    /// The settings whose value differs between `self` and `other`.
    pub fn changed_fields(&self, other: &TripSettings) -> Vec<SettingField> {
        SettingField::ALL
            .into_iter()
            .filter(|f| match f {
                SettingField::Title => self.title != other.title,
                SettingField::StartDate => self.start_date != other.start_date,
                SettingField::EndDate => self.end_date != other.end_date,
                SettingField::FatigueFactor => self.fatigue_factor != other.fatigue_factor,
                SettingField::ElevationPenalty => self.elevation_penalty != other.elevation_penalty,
                SettingField::MaxDistancePerDay => {
                    self.max_distance_per_day != other.max_distance_per_day
                }
                SettingField::AverageSpeed => self.average_speed != other.average_speed,
                SettingField::DepartureHour => self.departure_hour != other.departure_hour,
                SettingField::EbikeMode => self.ebike_mode != other.ebike_mode,
                SettingField::EnabledAccommodationTypes => {
                    self.enabled_accommodation_types != other.enabled_accommodation_types
                }
                SettingField::Nights => self.nights != other.nights,
                SettingField::Days => self.days != other.days,
            })
            .collect()
    }

    /// The number of days the dates ask for, when both are set.
    pub fn dated_day_count(&self) -> Option<i64> {
        match (self.start_date, self.end_date) {
            (Some(s), Some(e)) => Some((e - s).num_days() + 1),
            _ => None,
        }
    }

    /// The number of days the rider asked for: the dates' when both are set, else `days`;
    /// `None` lets the daily maximum decide.
    pub fn asked_day_count(&self) -> Option<u32> {
        match self.dated_day_count() {
            Some(n) => u32::try_from(n).ok(),
            None => self.days,
        }
    }
}

/// What a change of settings invalidates. One table, used by every transport, so that a
/// settings edit recomputes exactly what it must and nothing more.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Invalidation {
    /// The days must be cut again (new stage ids, manual split and choices dropped).
    pub repace: bool,
    /// The computation categories to run again.
    pub categories: BTreeSet<Category>,
}

impl Invalidation {
    /// What changing `before` into `after` invalidates.
    pub fn between(before: &TripSettings, after: &TripSettings) -> Self {
        let mut inv = Self::default();
        for field in before.changed_fields(after) {
            match field {
                SettingField::Title => {}
                SettingField::EndDate
                | SettingField::FatigueFactor
                | SettingField::ElevationPenalty
                | SettingField::MaxDistancePerDay => inv.repace = true,
                // Only when it decides: with both dates set they rule.
                SettingField::Days => {
                    if before.asked_day_count() != after.asked_day_count() {
                        inv.repace = true;
                    }
                }
                SettingField::StartDate => {
                    if before.dated_day_count() != after.dated_day_count() {
                        inv.repace = true;
                    }
                    inv.categories.extend([
                        Category::PointsOfInterest,
                        Category::Accommodations,
                        Category::TerrainSecurity,
                        Category::Weather,
                        Category::Context,
                    ]);
                }
                // The hours on the road move, and with them the forecast hours sampled and
                // the passage times judged against opening hours.
                SettingField::AverageSpeed | SettingField::DepartureHour => {
                    inv.categories.extend([
                        Category::TerrainSecurity,
                        Category::Weather,
                        Category::PointsOfInterest,
                    ]);
                }
                // The battery range is terrain; its nearest charger is read along the route.
                SettingField::EbikeMode => {
                    inv.categories
                        .extend([Category::TerrainSecurity, Category::PointsOfInterest]);
                }
                // With nights at accommodation the types decide where the days end.
                SettingField::EnabledAccommodationTypes => {
                    if after.nights == NightsMode::AtAccommodation {
                        inv.repace = true;
                    }
                    inv.categories.insert(Category::Accommodations);
                }
                SettingField::Nights => inv.repace = true,
            }
        }
        if inv.repace {
            inv.categories.extend(Category::ALL);
        }
        inv
    }

    /// Whether anything must be computed again (and so the structural version moves).
    pub fn is_empty(&self) -> bool {
        !self.repace && self.categories.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().expect("test date")
    }

    #[test]
    fn defaults_are_those_of_the_specification() {
        let s = TripSettings::default();
        assert_eq!(s.fatigue_factor, 0.9);
        assert_eq!(s.elevation_penalty, 50.0);
        assert_eq!(s.max_distance_per_day, 80.0);
        assert_eq!(s.average_speed, 15.0);
        assert_eq!(s.departure_hour, 8);
        assert!(!s.ebike_mode);
        assert_eq!(s.enabled_accommodation_types.len(), 7);
    }

    #[test]
    fn ranges_refuse_their_bounds_as_specified() {
        assert!(FATIGUE_FACTOR.contains(0.5) && FATIGUE_FACTOR.contains(1.0));
        assert!(!FATIGUE_FACTOR.contains(0.49) && !FATIGUE_FACTOR.contains(f64::NAN));
        assert!(!ELEVATION_PENALTY.contains(0.0) && ELEVATION_PENALTY.contains(0.1));
        assert_eq!(MAX_DISTANCE_PER_DAY.describe(), "from 10 to 300");
        assert_eq!(FATIGUE_FACTOR.describe(), "from 0.5 to 1");
    }

    #[test]
    fn a_title_change_invalidates_nothing() {
        let before = TripSettings::default();
        let after = SettingsPatch {
            title: Some("New".into()),
            ..Default::default()
        }
        .apply_to(&before);
        assert!(Invalidation::between(&before, &after).is_empty());
    }

    #[test]
    fn a_pacing_change_recuts_the_days_and_everything_after() {
        let before = TripSettings::default();
        let after = SettingsPatch {
            max_distance_per_day: Some(100.0),
            ..Default::default()
        }
        .apply_to(&before);
        let inv = Invalidation::between(&before, &after);
        assert!(inv.repace);
        assert_eq!(inv.categories.len(), Category::ALL.len());
    }

    #[test]
    fn the_hours_on_the_road_rerun_the_weather_and_the_battery_its_terrain_and_charger() {
        let before = TripSettings::default();
        let change = |patch: SettingsPatch| {
            Invalidation::between(&before, &patch.apply_to(&before)).categories
        };
        let speed = change(SettingsPatch {
            average_speed: Some(20.0),
            ..Default::default()
        });
        assert!(speed.contains(&Category::Weather) && speed.contains(&Category::TerrainSecurity));
        let departure = change(SettingsPatch {
            departure_hour: Some(6),
            ..Default::default()
        });
        assert!(departure.contains(&Category::Weather));
        let ebike = change(SettingsPatch {
            ebike_mode: Some(true),
            ..Default::default()
        });
        assert_eq!(
            ebike,
            BTreeSet::from([Category::PointsOfInterest, Category::TerrainSecurity])
        );
    }

    #[test]
    fn moving_the_start_keeps_the_days_when_no_end_is_set() {
        let before = TripSettings::default();
        let after = SettingsPatch {
            start_date: Some(Some(d("2030-06-01"))),
            ..Default::default()
        }
        .apply_to(&before);
        let inv = Invalidation::between(&before, &after);
        assert!(!inv.repace);
        assert!(inv.categories.contains(&Category::Weather));
        assert!(!inv.categories.contains(&Category::Route));
    }

    #[test]
    fn moving_the_start_with_an_end_changes_the_day_count() {
        let before = TripSettings {
            start_date: Some(d("2030-06-01")),
            end_date: Some(d("2030-06-05")),
            ..Default::default()
        };
        let after = SettingsPatch {
            start_date: Some(Some(d("2030-06-02"))),
            ..Default::default()
        }
        .apply_to(&before);
        assert!(Invalidation::between(&before, &after).repace);
    }

    #[test]
    fn e_bike_mode_reruns_terrain_and_the_charger_search_only() {
        let before = TripSettings::default();
        let after = SettingsPatch {
            ebike_mode: Some(true),
            ..Default::default()
        }
        .apply_to(&before);
        let inv = Invalidation::between(&before, &after);
        assert!(!inv.repace);
        assert!(inv.categories.contains(&Category::TerrainSecurity));
        assert!(inv.categories.contains(&Category::PointsOfInterest));
        assert!(!inv.categories.contains(&Category::Accommodations));
        assert!(!inv.categories.contains(&Category::Weather));
    }

    #[test]
    fn a_new_pace_rejudges_weather_hours_and_opening_hours_but_keeps_the_beds() {
        let before = TripSettings::default();
        let after = SettingsPatch {
            average_speed: Some(before.average_speed + 3.0),
            ..Default::default()
        }
        .apply_to(&before);
        let inv = Invalidation::between(&before, &after);
        assert!(!inv.repace);
        for category in [
            Category::TerrainSecurity,
            Category::Weather,
            Category::PointsOfInterest,
        ] {
            assert!(inv.categories.contains(&category), "{category:?}");
        }
        assert!(!inv.categories.contains(&Category::Accommodations));
    }

    #[test]
    fn an_end_before_the_start_is_refused_by_name() {
        let s = TripSettings {
            start_date: Some(d("2030-06-05")),
            end_date: Some(d("2030-06-05")),
            ..Default::default()
        };
        let errors = s.cross_field_errors();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "endDate");
    }
}
