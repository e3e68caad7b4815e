//! Embedded offline gazetteer for the Etappe bicycle trip planner.
//!
//! The crate ships GeoNames populated places (CC BY 4.0, see
//! `data/ATTRIBUTION.md`) inside the binary and answers two questions
//! without any network:
//!
//! * [`Gazetteer::reverse`]: which place is nearest to a coordinate?
//! * [`Gazetteer::search`]: which places match a typed name (accent- and
//!   case-insensitive, prefix and typo tolerant, optional country filter)?
//!
//! ```
//! let gaz = etappe_gazetteer::Gazetteer::embedded();
//! let hits = gaz.search("Grenoble", 1);
//! assert_eq!(hits[0].place.country_code, "FR");
//! let near = gaz.reverse(45.188, 5.724).map(|n| n.place.name);
//! assert_eq!(near, Some("Grenoble"));
//! ```
//!
//! Parsing is zero-copy: every [`Place`] borrows its strings from the TSV
//! text, which for the embedded data is decompressed once into a `static`.
//! The two indexes are built lazily and separately, so a caller that only
//! reverse-geocodes never pays for the name index and vice versa.
//!
//! Data and limits (how `data/places.tsv.gz` is made is in
//! `data/build_gazetteer.py`; the script is reproducible and pinned):
//!
//! - The data is GeoNames `cities1000` with all its rows: every place of at
//!   least 1,000 inhabitants plus the administrative seats below that, which
//!   are the villages where bicycle stages end. Hamlets, passes, campsites
//!   and ski stations are absent. An app shipping the crate must show the
//!   GeoNames attribution.
//! - `admin1` is the GeoNames *code*, not a name; only country suffixes are
//!   understood in queries ("Paris, US", "Köln, Deutschland").
//! - Alternate names carry no language tag, so a foreign spelling can collide
//!   with a real name; alternate-name matches weigh an eighth of a primary
//!   name, which settles the common cases but not every one.
//! - Reverse lookups use unit vectors in a 3-d k-d tree: chord length is
//!   monotonic in great-circle distance, so the nearest neighbour is exact and
//!   the poles and the antimeridian need no special case.
//! - Fuzzy search allows one edit (two for names of 8 characters or more)
//!   only when nothing closer matched, and never for queries under 4
//!   characters; row budgets bound a hostile query, at the price of possibly
//!   incomplete (never wrong) results.
//! - The heap after both indexes are built is in [`Gazetteer::memory_usage`];
//!   `gazetteer-bench` measures start-up, search and reverse latency.

mod countries;
mod fold;
mod geo;
mod search;

use std::fmt;
use std::io::Read;
use std::sync::OnceLock;

/// The distance [`Nearest::distance_m`] is measured with (one formula across Etappe).
pub use etappe_geo::{EARTH_RADIUS_M, haversine_m};
pub use fold::fold;
pub use search::{MAX_LIMIT, MatchKind};

/// Queries are cut to this many characters before folding: no place name is
/// longer, and it bounds the work a hostile query can cause.
pub const MAX_QUERY_CHARS: usize = 200;

static EMBEDDED_GZ: &[u8] = include_bytes!("../data/places.tsv.gz");

/// One populated place.
#[derive(Clone, Debug, PartialEq)]
pub struct Place<'a> {
    /// Name as written locally (UTF-8, e.g. "Zürich").
    pub name: &'a str,
    /// ASCII transliteration of the name (e.g. "Zurich").
    pub ascii_name: &'a str,
    /// Latitude in degrees, WGS84, 5 decimals.
    pub lat: f64,
    /// Longitude in degrees, WGS84, 5 decimals.
    pub lon: f64,
    /// ISO 3166-1 alpha-2 code, upper case (e.g. "CH").
    pub country_code: &'a str,
    /// GeoNames first-level administrative code (e.g. "25" for Zürich
    /// canton, "TX" for Texas); empty when unknown.
    pub admin1: &'a str,
    /// Population as recorded by GeoNames.
    pub population: u32,
    /// IANA time zone (e.g. "Europe/Zurich").
    pub timezone: &'a str,
    /// Latin-script alternate names, '|' separated; see
    /// [`Place::alternate_names`].
    alternate_names_raw: &'a str,
}

impl<'a> Place<'a> {
    /// Latin-script alternate names (exonyms such as "Munich"/"München").
    pub fn alternate_names(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.alternate_names_raw
            .split('|')
            .filter(|s| !s.is_empty())
    }
}

/// Result of [`Gazetteer::reverse`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nearest<'g, 'a> {
    pub place: &'g Place<'a>,
    /// Great-circle (haversine) distance from the query point, metres.
    pub distance_m: f64,
}

/// One result of [`Gazetteer::search`], best first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Match<'g, 'a> {
    pub place: &'g Place<'a>,
    /// How the query matched; results are ordered by kind first.
    pub kind: MatchKind,
    /// Edit distance for [`MatchKind::Fuzzy`] (1 or 2), otherwise 0.
    pub distance: u8,
}

/// Why TSV data could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GazetteerError {
    /// The embedded gzip stream could not be decompressed.
    Decompress(String),
    /// A line is malformed; `line` is 1-based.
    Parse { line: usize, reason: String },
    /// More places than a `u32` index can address.
    TooManyPlaces,
}

impl fmt::Display for GazetteerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GazetteerError::Decompress(e) => write!(f, "cannot decompress embedded data: {e}"),
            GazetteerError::Parse { line, reason } => write!(f, "line {line}: {reason}"),
            GazetteerError::TooManyPlaces => write!(f, "too many places (more than u32::MAX)"),
        }
    }
}

impl std::error::Error for GazetteerError {}

/// Places plus lazily built search structures.
#[derive(Debug)]
pub struct Gazetteer<'a> {
    places: Vec<Place<'a>>,
    names: OnceLock<search::NameIndex>,
    tree: OnceLock<geo::KdTree>,
}

/// Approximate heap usage, for capacity planning and the benchmark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUsage {
    /// Decompressed TSV text the places borrow from (embedded data only).
    pub text_bytes: usize,
    /// `Vec<Place>`.
    pub places_bytes: usize,
    /// Name index (arena of folded keys plus sorted key entries), if built.
    pub name_index_bytes: usize,
    /// Number of keys in the name index, if built.
    pub name_keys: usize,
    /// Spatial index, if built.
    pub spatial_index_bytes: usize,
}

static EMBEDDED_TEXT: OnceLock<Result<String, GazetteerError>> = OnceLock::new();
static EMBEDDED: OnceLock<Result<Gazetteer<'static>, GazetteerError>> = OnceLock::new();
static EMPTY: Gazetteer<'static> = Gazetteer::empty();

fn embedded_text() -> Result<&'static str, GazetteerError> {
    let text = EMBEDDED_TEXT.get_or_init(|| {
        let mut out = String::new();
        flate2::read::GzDecoder::new(EMBEDDED_GZ)
            .read_to_string(&mut out)
            .map_err(|e| GazetteerError::Decompress(e.to_string()))?;
        Ok(out)
    });
    match text {
        Ok(s) => Ok(s.as_str()),
        Err(e) => Err(e.clone()),
    }
}

impl Gazetteer<'static> {
    /// The embedded GeoNames data, decompressed and parsed on first call.
    ///
    /// Never fails: should the embedded data be unreadable (a build
    /// problem that the crate's tests catch), an empty gazetteer is
    /// returned. Use [`Gazetteer::try_embedded`] to see the error.
    pub fn embedded() -> &'static Gazetteer<'static> {
        Self::try_embedded().unwrap_or(&EMPTY)
    }

    /// Like [`Gazetteer::embedded`], but reports a load failure.
    pub fn try_embedded() -> Result<&'static Gazetteer<'static>, GazetteerError> {
        let loaded = EMBEDDED.get_or_init(|| Gazetteer::from_tsv(embedded_text()?));
        match loaded {
            Ok(g) => Ok(g),
            Err(e) => Err(e.clone()),
        }
    }
}

impl<'a> Gazetteer<'a> {
    /// An empty gazetteer (usable in `static`s).
    pub const fn empty() -> Gazetteer<'a> {
        Gazetteer {
            places: Vec::new(),
            names: OnceLock::new(),
            tree: OnceLock::new(),
        }
    }

    /// Parses TSV text in the `data/places.tsv` format:
    /// `name, ascii_name, lat, lon, country_code, admin1, population,
    /// timezone[, alternate_names]`, tab separated, one place per line.
    /// Empty lines and lines starting with `#` are skipped. The places
    /// borrow from `text`; no string is copied.
    pub fn from_tsv(text: &'a str) -> Result<Gazetteer<'a>, GazetteerError> {
        let mut places = Vec::with_capacity(text.len() / 96);
        for (i, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            places.push(parse_line(line).map_err(|reason| GazetteerError::Parse {
                line: i + 1,
                reason,
            })?);
        }
        if u32::try_from(places.len()).is_err() {
            return Err(GazetteerError::TooManyPlaces);
        }
        places.shrink_to_fit();
        Ok(Gazetteer {
            places,
            names: OnceLock::new(),
            tree: OnceLock::new(),
        })
    }

    /// Number of places.
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// True when there are no places.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// All places, in file order.
    pub fn places(&self) -> &[Place<'a>] {
        &self.places
    }

    /// English country name for an ISO alpha-2 code ("de" → "Germany").
    pub fn country_name(&self, code: &str) -> Option<&'static str> {
        countries::name_of(code)
    }

    /// Builds both indexes now instead of on first use (e.g. at start-up,
    /// so that the first user query is not the slow one).
    pub fn warm_up(&self) {
        self.name_index();
        self.kd_tree();
    }

    fn name_index(&self) -> &search::NameIndex {
        self.names
            .get_or_init(|| search::NameIndex::build(&self.places))
    }

    fn kd_tree(&self) -> &geo::KdTree {
        self.tree.get_or_init(|| {
            geo::KdTree::build(
                self.places
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (geo::unit_vector(p.lat, p.lon), i as u32)),
            )
        })
    }

    /// Nearest place to (`lat`, `lon`) in degrees, by great-circle distance.
    ///
    /// Returns `None` for an empty gazetteer, non-finite input or a latitude
    /// outside ±90°. Any finite longitude is accepted (190° is −170°).
    pub fn reverse(&self, lat: f64, lon: f64) -> Option<Nearest<'_, 'a>> {
        if !lat.is_finite() || !lon.is_finite() || !(-90.0..=90.0).contains(&lat) {
            return None;
        }
        let id = self.kd_tree().nearest(&geo::unit_vector(lat, lon))?;
        let place = self.places.get(id as usize)?;
        Some(Nearest {
            place,
            distance_m: haversine_m(lat, lon, place.lat, place.lon),
        })
    }

    /// Places matching `query`, best first, at most `limit` (capped at
    /// [`MAX_LIMIT`]).
    ///
    /// Matching is on [`fold()`]ed text (case, accents, punctuation ignored)
    /// against each place's name, ASCII name and Latin alternate names.
    /// Ranking: exact name > prefix of a name > prefix of a later word of a
    /// name > fuzzy; within a kind, larger population first, where a match
    /// through an alternate name counts the population divided by 8.
    ///
    /// Fuzzy matches (Damerau–Levenshtein, optimal string alignment, against
    /// name prefixes) only fill slots left after exact and prefix matches,
    /// from queries of 4 characters on, closest first: one edit after the
    /// first letter; if nothing matched, one edit anywhere; if still
    /// nothing and the query has 8+ characters, two edits (at most one in
    /// the first three letters, first letter right or swapped).
    ///
    /// A trailing ", XX" or ", Country" restricts results to that country
    /// ("Paris, US", "Paris, France"); an unknown suffix ("Paris, Texas")
    /// is ignored. Never panics; queries are cut to [`MAX_QUERY_CHARS`]
    /// characters.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Match<'_, 'a>> {
        if limit == 0 {
            return Vec::new();
        }
        let query = match query.char_indices().nth(MAX_QUERY_CHARS) {
            Some((cut, _)) => &query[..cut],
            None => query,
        };
        let (name_part, country) = split_country(query);
        let folded = fold(name_part);
        if folded.is_empty() {
            return Vec::new();
        }
        let filter = search::Filter { country };
        self.name_index()
            .search(&folded, filter, limit)
            .into_iter()
            .filter_map(|hit| {
                Some(Match {
                    place: self.places.get(hit.place as usize)?,
                    kind: hit.kind,
                    distance: hit.distance,
                })
            })
            .collect()
    }

    /// Approximate heap usage of the loaded data and of the indexes built
    /// so far.
    pub fn memory_usage(&self) -> MemoryUsage {
        let is_embedded = EMBEDDED
            .get()
            .and_then(|r| r.as_ref().ok())
            .is_some_and(|g| {
                let me: *const Self = self;
                let it: *const Gazetteer<'static> = g;
                std::ptr::eq(me.cast::<()>(), it.cast::<()>())
            });
        let text_bytes = match (is_embedded, EMBEDDED_TEXT.get()) {
            (true, Some(Ok(s))) => s.capacity(),
            _ => 0,
        };
        MemoryUsage {
            text_bytes,
            places_bytes: self.places.capacity() * std::mem::size_of::<Place<'a>>(),
            name_index_bytes: self.names.get().map_or(0, |n| n.heap_bytes()),
            name_keys: self.names.get().map_or(0, |n| n.key_count()),
            spatial_index_bytes: self.tree.get().map_or(0, |t| t.heap_bytes()),
        }
    }
}

/// Splits "Paris, FR" into ("Paris", Some("FR")) when the part after the
/// last comma names a country; otherwise drops an unknown suffix so that
/// "Paris, Île-de-France" still finds Paris.
fn split_country(query: &str) -> (&str, Option<&'static str>) {
    match query.rsplit_once(',') {
        Some((head, tail)) if !fold(head).is_empty() => (head, countries::resolve(tail)),
        _ => (query, None),
    }
}

fn parse_line(line: &str) -> Result<Place<'_>, String> {
    let mut cols = line.split('\t');
    let mut next = |what: &str| cols.next().ok_or_else(|| format!("missing column {what}"));
    let name = next("name")?;
    let ascii_name = next("ascii_name")?;
    let lat = next("lat")?;
    let lon = next("lon")?;
    let country_code = next("country_code")?;
    let admin1 = next("admin1")?;
    let population = next("population")?;
    let timezone = next("timezone")?;
    let alternate_names_raw = cols.next().unwrap_or("");
    if cols.next().is_some() {
        return Err("too many columns".to_owned());
    }
    if name.trim().is_empty() {
        return Err("empty name".to_owned());
    }
    let lat: f64 = lat.parse().map_err(|_| format!("bad latitude {lat:?}"))?;
    let lon: f64 = lon.parse().map_err(|_| format!("bad longitude {lon:?}"))?;
    if !lat.is_finite() || !(-90.0..=90.0).contains(&lat) {
        return Err(format!("latitude out of range: {lat}"));
    }
    if !lon.is_finite() || !(-180.0..=180.0).contains(&lon) {
        return Err(format!("longitude out of range: {lon}"));
    }
    if country_code.len() != 2 || !country_code.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!("bad country code {country_code:?}"));
    }
    let population: u32 = population
        .parse()
        .map_err(|_| format!("bad population {population:?}"))?;
    Ok(Place {
        name,
        ascii_name: if ascii_name.is_empty() {
            name
        } else {
            ascii_name
        },
        lat,
        lon,
        country_code,
        admin1,
        population,
        timezone,
        alternate_names_raw,
    })
}
