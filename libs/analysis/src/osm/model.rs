//! What was found along the route, independent of where it came from (a local index or
//! Overpass fill it), and the few facts about each day the OpenStreetMap rules read.
//!
//! [`FeatureKind::classify`] and [`WaySection::from_tags`] turn raw OSM tags into this model,
//! so both adapters keep exactly the same features.

use chrono::NaiveDate;

use crate::model::StagePoint;

/// The kinds of point features the rules read. Ford ways and closed ways arrive as points at
/// their centroid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureKind {
    /// `amenity=drinking_water|water_point`, `man_made=water_tap`, a fountain or spring with
    /// `drinking_water=yes`.
    DrinkingWater,
    /// A place to buy food (see [`FoodKind`]).
    Food(FoodKind),
    /// `shop=bicycle`; `repair` is `service:bicycle:repair=yes` (without it, sale only).
    BikeShop { repair: bool },
    /// `amenity=bicycle_repair_station`.
    RepairStation,
    /// `railway=station` (kept with its `usage`: tourist lines are no way home).
    RailwayStation,
    /// `amenity=pharmacy|hospital|clinic`.
    Health(HealthKind),
    /// A museum, viewpoint, castle… (see [`CulturalKind`]).
    Cultural(CulturalKind),
    /// A place to sleep (see [`AccommodationKind`]).
    Accommodation(AccommodationKind),
    /// `ford` present and not `no`.
    Ford,
    /// `amenity=charging_station` with `bicycle=yes` or a bicycle socket: an e-bike charger.
    Charger,
}

/// Food shops and restaurants (the upstream import list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FoodKind {
    Restaurant,
    Cafe,
    Bar,
    Pub,
    FastFood,
    Marketplace,
    Fuel,
    Supermarket,
    Convenience,
    Bakery,
    Butcher,
    Greengrocer,
    Deli,
    General,
    Pastry,
    Farm,
}

impl FoodKind {
    /// Whether it counts as resupply: everything but a pub (drinks, rarely food).
    pub fn is_resupply(self) -> bool {
        self != Self::Pub
    }

    /// The OSM value, for the found-along-the-day list.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Restaurant => "restaurant",
            Self::Cafe => "cafe",
            Self::Bar => "bar",
            Self::Pub => "pub",
            Self::FastFood => "fast_food",
            Self::Marketplace => "marketplace",
            Self::Fuel => "fuel",
            Self::Supermarket => "supermarket",
            Self::Convenience => "convenience",
            Self::Bakery => "bakery",
            Self::Butcher => "butcher",
            Self::Greengrocer => "greengrocer",
            Self::Deli => "deli",
            Self::General => "general",
            Self::Pastry => "pastry",
            Self::Farm => "farm",
        }
    }
}

/// Health services.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HealthKind {
    Pharmacy,
    Hospital,
    Clinic,
}

/// Cultural points of interest (`tourism=*` and `historic=*` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CulturalKind {
    Museum,
    Attraction,
    Viewpoint,
    Castle,
    Monument,
    Memorial,
    Ruins,
    ArchaeologicalSite,
    Church,
    Cathedral,
    Abbey,
    Fort,
}

impl CulturalKind {
    /// The OSM value, used as the suggestion's `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Museum => "museum",
            Self::Attraction => "attraction",
            Self::Viewpoint => "viewpoint",
            Self::Castle => "castle",
            Self::Monument => "monument",
            Self::Memorial => "memorial",
            Self::Ruins => "ruins",
            Self::ArchaeologicalSite => "archaeological_site",
            Self::Church => "church",
            Self::Cathedral => "cathedral",
            Self::Abbey => "abbey",
            Self::Fort => "fort",
        }
    }
}

/// Accommodation types (`tourism=*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccommodationKind {
    Hotel,
    Hostel,
    GuestHouse,
    Chalet,
    CampSite,
    AlpineHut,
    WildernessHut,
}

/// The tags of a point the analysis reads: what [`FeatureKind::classify`] looks at and what
/// a [`Feature`] carries. A source keeps these (and may keep more), so that a point it
/// stores classifies as the one it read.
pub const FEATURE_KEYS: &[&str] = &[
    "amenity",
    "shop",
    "man_made",
    "natural",
    "drinking_water",
    "railway",
    "tourism",
    "historic",
    "ford",
    "bicycle",
    "socket:bicycle",
    "service:bicycle:repair",
    "name",
    "opening_hours",
    "seasonal",
    "usage",
    "website",
    "contact:website",
    "wikidata",
];

/// The tags of a ferry line the analysis reads.
pub const FERRY_KEYS: &[&str] = &["route", "name"];

impl FeatureKind {
    /// The kind of a point with these tags, `None` when the analysis has no use for it.
    /// `tag(key)` returns the value of `key`, if any. The first matching family wins, in
    /// the order water, food, bike, rail, health, culture, accommodation, ford, charger.
    pub fn classify<'t>(tag: impl Fn(&str) -> Option<&'t str>) -> Option<Self> {
        let is = |k: &str, v: &str| tag(k) == Some(v);
        let drinkable = is("drinking_water", "yes");
        let amenity = tag("amenity").unwrap_or("");
        if matches!(amenity, "drinking_water" | "water_point")
            || is("man_made", "water_tap")
            || (amenity == "fountain" && drinkable)
            || (is("natural", "spring") && drinkable)
        {
            return Some(Self::DrinkingWater);
        }
        let food = match (amenity, tag("shop").unwrap_or("")) {
            ("restaurant", _) => Some(FoodKind::Restaurant),
            ("cafe", _) => Some(FoodKind::Cafe),
            ("bar", _) => Some(FoodKind::Bar),
            ("pub", _) => Some(FoodKind::Pub),
            ("fast_food", _) => Some(FoodKind::FastFood),
            ("marketplace", _) => Some(FoodKind::Marketplace),
            ("fuel", _) => Some(FoodKind::Fuel),
            (_, "supermarket") => Some(FoodKind::Supermarket),
            (_, "convenience") => Some(FoodKind::Convenience),
            (_, "bakery") => Some(FoodKind::Bakery),
            (_, "butcher") => Some(FoodKind::Butcher),
            (_, "greengrocer") => Some(FoodKind::Greengrocer),
            (_, "deli") => Some(FoodKind::Deli),
            (_, "general") => Some(FoodKind::General),
            (_, "pastry") => Some(FoodKind::Pastry),
            (_, "farm") => Some(FoodKind::Farm),
            _ => None,
        };
        if let Some(food) = food {
            return Some(Self::Food(food));
        }
        if is("shop", "bicycle") {
            return Some(Self::BikeShop {
                repair: is("service:bicycle:repair", "yes"),
            });
        }
        if amenity == "bicycle_repair_station" {
            return Some(Self::RepairStation);
        }
        if is("railway", "station") {
            return Some(Self::RailwayStation);
        }
        match amenity {
            "pharmacy" => return Some(Self::Health(HealthKind::Pharmacy)),
            "hospital" => return Some(Self::Health(HealthKind::Hospital)),
            "clinic" => return Some(Self::Health(HealthKind::Clinic)),
            _ => {}
        }
        let tourism = tag("tourism").unwrap_or("");
        let cultural = match (tourism, tag("historic").unwrap_or("")) {
            ("museum", _) => Some(CulturalKind::Museum),
            ("attraction", _) => Some(CulturalKind::Attraction),
            ("viewpoint", _) => Some(CulturalKind::Viewpoint),
            (_, "castle") => Some(CulturalKind::Castle),
            (_, "monument") => Some(CulturalKind::Monument),
            (_, "memorial") => Some(CulturalKind::Memorial),
            (_, "ruins") => Some(CulturalKind::Ruins),
            (_, "archaeological_site") => Some(CulturalKind::ArchaeologicalSite),
            (_, "church") => Some(CulturalKind::Church),
            (_, "cathedral") => Some(CulturalKind::Cathedral),
            (_, "abbey") => Some(CulturalKind::Abbey),
            (_, "fort") => Some(CulturalKind::Fort),
            _ => None,
        };
        if let Some(cultural) = cultural {
            return Some(Self::Cultural(cultural));
        }
        let accommodation = match tourism {
            "hotel" => Some(AccommodationKind::Hotel),
            "hostel" => Some(AccommodationKind::Hostel),
            "guest_house" => Some(AccommodationKind::GuestHouse),
            "chalet" => Some(AccommodationKind::Chalet),
            "camp_site" => Some(AccommodationKind::CampSite),
            "alpine_hut" => Some(AccommodationKind::AlpineHut),
            "wilderness_hut" => Some(AccommodationKind::WildernessHut),
            _ => None,
        };
        if let Some(accommodation) = accommodation {
            return Some(Self::Accommodation(accommodation));
        }
        if tag("ford").is_some_and(|v| v != "no") {
            return Some(Self::Ford);
        }
        if amenity == "charging_station"
            && (is("bicycle", "yes") || tag("socket:bicycle").is_some_and(|v| v != "no"))
        {
            return Some(Self::Charger);
        }
        None
    }

    /// Resupply for the `resupply_*` rules and the found-along-the-day list.
    pub fn is_resupply(self) -> bool {
        matches!(self, Self::Food(food) if food.is_resupply())
    }

    /// A repair resource for `bike_shop_none_nearby`.
    pub fn is_repair(self) -> bool {
        matches!(self, Self::RepairStation | Self::BikeShop { repair: true })
    }
}

/// One point found along the route.
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    pub kind: FeatureKind,
    pub lat: f64,
    pub lon: f64,
    /// `name`, shown as data (never trusted as text).
    pub name: Option<String>,
    /// `opening_hours`, raw.
    pub opening_hours: Option<String>,
    /// `seasonal`, raw.
    pub seasonal: Option<String>,
    /// `usage` (railway stations: `tourism` lines are skipped).
    pub usage: Option<String>,
    /// `website`, for cultural suggestions.
    pub website: Option<String>,
    /// `wikidata`, for cultural suggestions.
    pub wikidata: Option<String>,
}

impl Feature {
    /// A feature of `kind` at (`lat`, `lon`) with no tags.
    pub fn new(kind: FeatureKind, lat: f64, lon: f64) -> Self {
        Self {
            kind,
            lat,
            lon,
            name: None,
            opening_hours: None,
            seasonal: None,
            usage: None,
            website: None,
            wikidata: None,
        }
    }

    /// The same feature with a name.
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }
}

/// A stretch of a day ridden on one road way (see [`crate::osm::matching`]); before it is
/// matched, a way's tags as a source holds them (length and place not yet known).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WaySection {
    /// Metres ridden on the way in this stretch.
    pub length_m: f64,
    /// Centroid of the stretch.
    pub centroid: (f64, f64),
    /// Metres from the day's start where the stretch begins.
    pub from_m: f64,
    /// The OpenStreetMap way, when the source gives its id.
    pub way_id: Option<i64>,
    pub highway: String,
    pub surface: Option<String>,
    pub tracktype: Option<String>,
    pub smoothness: Option<String>,
    /// Values of `cycleway`, `cycleway:left`, `cycleway:right`, `cycleway:both`.
    pub cycleway: Vec<String>,
    pub bicycle: Option<String>,
    pub maxspeed: Option<String>,
}

impl WaySection {
    /// The tags a road way keeps: what [`WaySection::from_tags`] reads. Both sources store
    /// exactly these.
    pub const TAG_KEYS: &'static [&'static str] = &[
        "highway",
        "surface",
        "tracktype",
        "smoothness",
        "cycleway",
        "cycleway:left",
        "cycleway:right",
        "cycleway:both",
        "bicycle",
        "maxspeed",
    ];

    /// `highway` values that are not (yet, or any more) a road one can ride.
    const NOT_ROADS: &'static [&'static str] = &[
        "proposed",
        "construction",
        "abandoned",
        "razed",
        "disused",
        "platform",
    ];

    /// Whether a way with this `highway` value is a road the surface and traffic rules read.
    pub fn is_road(highway: &str) -> bool {
        !Self::NOT_ROADS.contains(&highway)
    }

    /// A section from raw tags; `None` for a way without `highway` or with one that is not
    /// a road ([`WaySection::is_road`]).
    pub fn from_tags<'t>(
        length_m: f64,
        centroid: (f64, f64),
        tag: impl Fn(&str) -> Option<&'t str>,
    ) -> Option<Self> {
        let own = |k: &str| tag(k).map(str::to_owned);
        let highway = tag("highway").filter(|h| Self::is_road(h))?.to_owned();
        Some(Self {
            length_m,
            centroid,
            from_m: 0.0,
            way_id: None,
            highway,
            surface: own("surface"),
            tracktype: own("tracktype"),
            smoothness: own("smoothness"),
            cycleway: [
                "cycleway",
                "cycleway:left",
                "cycleway:right",
                "cycleway:both",
            ]
            .iter()
            .filter_map(|k| own(k))
            .collect(),
            bicycle: own("bicycle"),
            maxspeed: own("maxspeed"),
        })
    }
}

/// A ferry route (`route=ferry` way or relation member), with its full geometry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FerryLine {
    pub name: Option<String>,
    /// (lat, lon) vertices.
    pub points: Vec<(f64, f64)>,
}

/// A stretch of a day ridden on a ferry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FerryRide {
    pub name: Option<String>,
    /// Metres ridden on the ferry line.
    pub length_m: f64,
    /// Metres from the day's start where the ferry is boarded.
    pub from_m: f64,
    /// The middle of the crossing, (lat, lon).
    pub at: (f64, f64),
}

/// What was found around one day: points within 15 km of its line (the widest radius, the
/// health rule's; each rule applies its own), the stretches it rides on road ways and on
/// ferries, in order along the day. [`crate::osm::corridors`] builds one per day from
/// route-wide results; a point where two days meet belongs to both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Corridor {
    pub points: Vec<Feature>,
    pub ways: Vec<WaySection>,
    pub ferries: Vec<FerryRide>,
}

impl<'a> From<&crate::model::StageInput<'a>> for OsmStage<'a> {
    /// The day the geometry rules saw, with the start's country for public holidays.
    fn from(stage: &crate::model::StageInput<'a>) -> Self {
        Self {
            day_number: stage.day_number,
            is_rest_day: stage.is_rest_day,
            points: stage.points,
            start: stage.start,
            end: stage.end,
            distance_km: stage.distance_km,
            ascent_m: stage.ascent_m,
            date: stage.date,
            country: stage.start_country.clone(),
        }
    }
}

/// One day as the OpenStreetMap rules see it.
#[derive(Debug, Clone, PartialEq)]
pub struct OsmStage<'a> {
    /// 1-based, for messages.
    pub day_number: u32,
    pub is_rest_day: bool,
    /// Full-resolution points with cumulative distance (empty on a rest day).
    pub points: &'a [StagePoint],
    pub start: (f64, f64),
    pub end: (f64, f64),
    /// Day distance, km.
    pub distance_km: f64,
    /// Day ascent, m (slows the estimated passage times); `None`: unknown, timed as flat.
    pub ascent_m: Option<f64>,
    /// Calendar date; without it no opening hours or seasons are judged.
    pub date: Option<NaiveDate>,
    /// ISO 3166-1 alpha-2 code of the start, for public holidays in opening hours.
    pub country: Option<String>,
}
