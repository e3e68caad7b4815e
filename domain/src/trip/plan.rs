//! A route planned from places rather than fetched from a link: `from`, optional `via`
//! places, `to` and a riding profile, routed by the configured routing engine. Only the shape
//! of a caller's plan is judged here (which fields, places as coordinates or names, the
//! profile); resolving names to coordinates is the geocoder's job in the application layer,
//! which then hands the domain a [`RoutePlan`] of resolved places.

pub mod choice;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::FieldError;
use super::input::describe;
use crate::text::{quote, strip_controls};

/// The most `via` places a plan may name (a routing request stays well under the engines'
/// location limits, Valhalla's 50 for bicycles, even after long legs are cut).
pub const MAX_VIA: usize = 20;
/// The longest place name accepted (the one limit of names people give).
pub const PLACE_NAME_MAX_CHARS: usize = crate::text::NAME_MAX_CHARS;
/// The fields of a plan object.
pub const PLAN_FIELDS: [&str; 4] = ["from", "via", "to", "profile"];

/// How the rider rides, which decides the roads the router prefers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RideProfile {
    /// A loaded touring bike: quiet roads and cycleways, smooth surfaces, hills avoided a little.
    #[default]
    Touring,
    /// A road bike: paved roads only, hills accepted.
    Road,
    /// A gravel bike: tracks and unpaved roads welcome.
    Gravel,
    /// A mountain bike: trails welcome, steep climbs accepted.
    Mountain,
}

impl RideProfile {
    /// Every profile, in publication order.
    pub const ALL: [RideProfile; 4] = [Self::Touring, Self::Road, Self::Gravel, Self::Mountain];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Touring => "touring",
            Self::Road => "road",
            Self::Gravel => "gravel",
            Self::Mountain => "mountain",
        }
    }

    /// The profile of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

/// A place of a plan, resolved: where it is and, when the caller named it, its name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanPlace {
    /// The name the geocoder matched (third-party text, stripped), or the caller's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub lat: f64,
    pub lon: f64,
}

impl PlanPlace {
    /// How the place reads in a sentence: its name, else its coordinates.
    pub fn describe(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("{:.4}, {:.4}", self.lat, self.lon))
    }
}

/// A route to plan: from, via, to, and how to ride it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoutePlan {
    pub from: PlanPlace,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<PlanPlace>,
    pub to: PlanPlace,
    #[serde(default)]
    pub profile: RideProfile,
}

impl RoutePlan {
    /// Every place in riding order.
    pub fn places(&self) -> impl Iterator<Item = &PlanPlace> {
        std::iter::once(&self.from)
            .chain(self.via.iter())
            .chain(std::iter::once(&self.to))
    }

    /// "Basel → Vienna (via Zürich, Innsbruck; touring)", for titles and the history.
    pub fn describe(&self) -> String {
        let via = if self.via.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = self.via.iter().map(PlanPlace::describe).collect();
            format!("via {}; ", names.join(", "))
        };
        format!(
            "{} → {} ({via}{})",
            self.from.describe(),
            self.to.describe(),
            self.profile.as_str()
        )
    }
}

/// A place as a caller gave it: coordinates, or a name still to be resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum PlaceInput {
    At {
        lat: f64,
        lon: f64,
        name: Option<String>,
    },
    Named(String),
}

/// A plan as a caller gave it, its shape checked; its names are still to be resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanInput {
    pub from: PlaceInput,
    pub via: Vec<PlaceInput>,
    pub to: PlaceInput,
    pub profile: RideProfile,
}

impl PlanInput {
    /// Every place with the field it came from (`from`, `via[0]`, `to`).
    pub fn places(&self) -> Vec<(String, &PlaceInput)> {
        let mut out = vec![("from".to_owned(), &self.from)];
        out.extend(
            self.via
                .iter()
                .enumerate()
                .map(|(i, p)| (format!("via[{i}]"), p)),
        );
        out.push(("to".to_owned(), &self.to));
        out
    }
}

fn profile_error(field: &str, got: &Value) -> FieldError {
    let accepted: Vec<&str> = RideProfile::ALL.iter().map(|p| p.as_str()).collect();
    FieldError::new(
        field,
        format!(
            "{field} must be one of {}; got {}",
            accepted.join(", "),
            describe(got)
        ),
    )
}

/// Reads a profile name (absent: touring).
pub fn parse_profile(field: &str, value: Option<&Value>) -> Result<RideProfile, FieldError> {
    match value {
        None | Some(Value::Null) => Ok(RideProfile::default()),
        Some(Value::String(name)) => RideProfile::parse(name)
            .ok_or_else(|| profile_error(field, &Value::String(name.clone()))),
        Some(other) => Err(profile_error(field, other)),
    }
}

/// Reads one place: `{"lat": …, "lon": …}` (with an optional `name`), a name, or a
/// `"lat,lon"` text.
pub fn parse_place(field: &str, value: &Value) -> Result<PlaceInput, FieldError> {
    let accepted =
        "a place name (\"Basel\"), \"lat,lon\" (\"47.56,7.59\") or {\"lat\": 47.56, \"lon\": 7.59}";
    match value {
        Value::String(text) => parse_place_text(field, text),
        Value::Object(object) => {
            let unknown: Vec<&String> = object
                .keys()
                .filter(|k| !matches!(k.as_str(), "lat" | "lon" | "name"))
                .collect();
            if let Some(name) = unknown.first() {
                return Err(FieldError::new(
                    field,
                    format!(
                        "{field} has an unknown field {}; a place takes lat, lon and name",
                        quote(name)
                    ),
                ));
            }
            let coordinate = |key: &str, limit: f64| {
                object
                    .get(key)
                    .and_then(Value::as_f64)
                    .filter(|v| v.is_finite() && v.abs() <= limit)
            };
            let (Some(lat), Some(lon)) = (coordinate("lat", 90.0), coordinate("lon", 180.0)) else {
                return Err(FieldError::new(
                    field,
                    format!(
                        "{field} needs lat (-90 to 90) and lon (-180 to 180) as numbers; accepted: {accepted}"
                    ),
                ));
            };
            let name = match object.get("name") {
                None | Some(Value::Null) => None,
                Some(Value::String(name)) => clean_name(field, name)?.into(),
                Some(other) => {
                    return Err(FieldError::new(
                        field,
                        format!("{field}.name must be a string; got {}", describe(other)),
                    ));
                }
            };
            Ok(PlaceInput::At { lat, lon, name })
        }
        other => Err(FieldError::new(
            field,
            format!("{field} must be {accepted}; got {}", describe(other)),
        )),
    }
}

fn clean_name(field: &str, raw: &str) -> Result<String, FieldError> {
    crate::text::visible_name(raw).ok_or_else(|| {
        FieldError::new(
            field,
            format!(
                "{field} must name a place in 1 to {PLACE_NAME_MAX_CHARS} characters; got {}",
                strip_controls(raw).trim().chars().count()
            ),
        )
    })
}

/// A place given as text: `"47.56,7.59"` is coordinates, anything else a name.
pub fn parse_place_text(field: &str, text: &str) -> Result<PlaceInput, FieldError> {
    let name = clean_name(field, text)?;
    if let Some((a, b)) = name.split_once(',')
        && let (Ok(lat), Ok(lon)) = (a.trim().parse::<f64>(), b.trim().parse::<f64>())
    {
        if lat.is_finite() && lon.is_finite() && lat.abs() <= 90.0 && lon.abs() <= 180.0 {
            return Ok(PlaceInput::At {
                lat,
                lon,
                name: None,
            });
        }
        return Err(FieldError::new(
            field,
            format!(
                "{field} reads as coordinates out of range ({}): lat must be -90 to 90, lon -180 to 180",
                quote(&name)
            ),
        ));
    }
    Ok(PlaceInput::Named(name))
}

/// Reads a plan object `{from, via?, to, profile?}` under `field` (`plan`), every error
/// collected and named by its path (`plan.via[2]`).
pub fn parse_plan(field: &str, value: &Value) -> Result<PlanInput, Vec<FieldError>> {
    let Value::Object(object) = value else {
        return Err(vec![FieldError::new(
            field,
            format!(
                "{field} must be an object {{\"from\": PLACE, \"via\": [PLACE…], \"to\": PLACE, \"profile\": \"touring\"}}; got {}",
                describe(value)
            ),
        )]);
    };
    parse_plan_fields(field, object)
}

/// Reads the plan's fields from `object` (a `plan` object, or an MCP call's own arguments
/// with `prefix` empty).
pub fn parse_plan_fields(
    prefix: &str,
    object: &Map<String, Value>,
) -> Result<PlanInput, Vec<FieldError>> {
    let path = |name: &str| {
        if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}.{name}")
        }
    };
    let mut errors = Vec::new();
    if !prefix.is_empty()
        && let Some(unknown) = object.keys().find(|k| !PLAN_FIELDS.contains(&k.as_str()))
    {
        errors.push(FieldError::new(
            path(unknown),
            format!(
                "unknown field {} in {prefix}; accepted: {}",
                quote(unknown),
                PLAN_FIELDS.join(", ")
            ),
        ));
    }
    let mut place = |name: &str| match object.get(name) {
        None | Some(Value::Null) => {
            errors.push(FieldError::new(
                path(name),
                format!(
                    "{} is required: where the route {}",
                    path(name),
                    if name == "from" { "starts" } else { "ends" }
                ),
            ));
            None
        }
        Some(value) => parse_place(&path(name), value)
            .map_err(|e| errors.push(e))
            .ok(),
    };
    let from = place("from");
    let to = place("to");
    let mut via = Vec::new();
    match object.get("via") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) if items.len() <= MAX_VIA => {
            for (i, item) in items.iter().enumerate() {
                match parse_place(&format!("{}[{i}]", path("via")), item) {
                    Ok(place) => via.push(place),
                    Err(e) => errors.push(e),
                }
            }
        }
        Some(Value::Array(items)) => errors.push(FieldError::new(
            path("via"),
            format!(
                "{} takes at most {MAX_VIA} places; got {}",
                path("via"),
                items.len()
            ),
        )),
        Some(other) => errors.push(FieldError::new(
            path("via"),
            format!(
                "{} must be a list of places; got {}",
                path("via"),
                describe(other)
            ),
        )),
    }
    let profile =
        parse_profile(&path("profile"), object.get("profile")).map_err(|e| errors.push(e));
    match (from, to, profile) {
        (Some(from), Some(to), Ok(profile)) if errors.is_empty() => Ok(PlanInput {
            from,
            via,
            to,
            profile,
        }),
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn places_read_as_coordinates_names_or_objects() {
        assert_eq!(
            parse_place("from", &json!("Basel")),
            Ok(PlaceInput::Named("Basel".into()))
        );
        assert_eq!(
            parse_place("from", &json!(" 47.56, 7.59 ")),
            Ok(PlaceInput::At {
                lat: 47.56,
                lon: 7.59,
                name: None
            })
        );
        assert_eq!(
            parse_place("to", &json!({"lat": 48.2, "lon": 16.37, "name": "Wien"})),
            Ok(PlaceInput::At {
                lat: 48.2,
                lon: 16.37,
                name: Some("Wien".into())
            })
        );
        assert!(parse_place("to", &json!({"lat": 98.0, "lon": 1.0})).is_err());
        assert!(parse_place("to", &json!("91,7")).is_err());
        assert!(parse_place("to", &json!({"lat": 1.0, "lon": 1.0, "alt": 3})).is_err());
        assert!(parse_place("to", &json!(12)).is_err());
        assert!(parse_place("to", &json!("  ")).is_err());
    }

    #[test]
    fn a_plan_names_every_wrong_field_by_its_path() {
        let errors = parse_plan(
            "plan",
            &json!({"from": 3, "via": ["Zürich", {"lat": "x"}], "profile": "tandem", "extra": 1}),
        )
        .expect_err("refused");
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert!(fields.contains(&"plan.from"), "{fields:?}");
        assert!(fields.contains(&"plan.to"), "{fields:?}");
        assert!(fields.contains(&"plan.via[1]"), "{fields:?}");
        assert!(fields.contains(&"plan.profile"), "{fields:?}");
        assert!(fields.contains(&"plan.extra"), "{fields:?}");
        let profile = errors
            .iter()
            .find(|e| e.field == "plan.profile")
            .expect("profile");
        assert!(profile.message.contains("touring, road, gravel, mountain"));
    }

    #[test]
    fn a_plan_has_a_default_profile_and_at_most_twenty_via_places() {
        let plan = parse_plan("plan", &json!({"from": "Basel", "to": "Wien"})).expect("plan");
        assert_eq!(plan.profile, RideProfile::Touring);
        assert!(plan.via.is_empty());
        let many: Vec<Value> = (0..=MAX_VIA).map(|i| json!(format!("P{i}"))).collect();
        let errors = parse_plan("plan", &json!({"from": "A", "to": "B", "via": many}))
            .expect_err("too many");
        assert_eq!(errors[0].field, "plan.via");
    }

    #[test]
    fn a_plan_describes_itself() {
        let place = |name: Option<&str>, lat: f64| PlanPlace {
            name: name.map(str::to_owned),
            lat,
            lon: 7.0,
        };
        let plan = RoutePlan {
            from: place(Some("Basel"), 47.5),
            via: vec![place(None, 47.25)],
            to: place(Some("Wien"), 48.2),
            profile: RideProfile::Gravel,
        };
        assert_eq!(
            plan.describe(),
            "Basel → Wien (via 47.2500, 7.0000; gravel)"
        );
        assert_eq!(plan.places().count(), 3);
    }
}
