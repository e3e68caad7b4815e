//! Reading a stage edit from a caller's JSON object (a REST body or MCP arguments), with
//! errors that name the field and what it accepts. One parser for both doors.

use serde_json::{Map, Value};
use uuid::Uuid;

use super::{Boundary, LabelChange, StageAction, StageEdit};
use crate::text::strip_controls;
use crate::trip::FieldError;
use crate::trip::input::{InputError, describe, refuse_unknown};
use crate::trip::stage::{Accommodation, Point};

/// The names each action accepts (besides the trip, the stage and the version, which the
/// transport reads itself).
pub fn accepted_fields(action: StageAction) -> &'static [&'static str] {
    match action {
        StageAction::Add | StageAction::Update => &["distance", "endPoint", "label"],
        StageAction::Move => &["toIndex"],
        StageAction::Delete
        | StageAction::MergeNext
        | StageAction::RestDay
        | StageAction::ClearAccommodation => &[],
        StageAction::ChooseAccommodation => &["lat", "lon"],
    }
}

/// The actions `edit_stages` dispatches, in the order they are documented.
pub const EDIT_ACTIONS: [StageAction; 6] = [
    StageAction::Add,
    StageAction::Update,
    StageAction::Move,
    StageAction::Delete,
    StageAction::MergeNext,
    StageAction::RestDay,
];

/// One of [`EDIT_ACTIONS`], by wire name.
pub fn parse_action(value: &str) -> Option<StageAction> {
    EDIT_ACTIONS.into_iter().find(|a| a.as_str() == value)
}

/// Parses the edit `action` of `stage_id` from `input`; `new_stage_id` is the id a new day
/// gets (add, rest day).
pub fn parse_stage_edit(
    action: StageAction,
    stage_id: Uuid,
    new_stage_id: Uuid,
    input: &Map<String, Value>,
) -> Result<StageEdit, InputError> {
    refuse_unknown(input, accepted_fields(action))?;
    let fail = |e: FieldError| InputError::Invalid(vec![e]);
    Ok(match action {
        StageAction::Add => {
            // Where to split is the caller's to say: a split nobody placed (half way, with
            // the label on the second half) surprised agents, so it is refused, naming both.
            let Some(split) = parse_boundary(input).map_err(fail)? else {
                return Err(fail(FieldError::new(
                    "distance",
                    "add needs where to split the day: distance (km from the day's start) or endPoint {lat, lon}; the new day follows, with label if given",
                )));
            };
            StageEdit::Add {
                stage_id,
                new_stage_id,
                split: Some(split),
                label: parse_label(input).map_err(fail)?,
            }
        }
        StageAction::Update => {
            let end = parse_boundary(input).map_err(fail)?;
            let label = parse_label(input).map_err(fail)?;
            if end.is_none() && label == LabelChange::Keep {
                return Err(fail(FieldError::new(
                    "body",
                    "an update needs distance or endPoint (to move the day's end) and/or label",
                )));
            }
            StageEdit::Update {
                stage_id,
                end,
                label,
            }
        }
        StageAction::Move => {
            let to_index = match input.get("toIndex") {
                Some(v) => crate::trip::input::whole_number(v).ok_or_else(|| {
                    fail(FieldError::new(
                        "toIndex",
                        format!(
                            "toIndex must be a whole number from 0 (the first day); got {}",
                            describe(v)
                        ),
                    ))
                })?,
                None => {
                    return Err(fail(FieldError::new(
                        "toIndex",
                        "toIndex is required: the 0-based position the day moves to",
                    )));
                }
            };
            StageEdit::Move {
                stage_id,
                to_index: usize::try_from(to_index).unwrap_or(usize::MAX),
            }
        }
        StageAction::Delete => StageEdit::Delete { stage_id },
        StageAction::MergeNext => StageEdit::MergeNext { stage_id },
        StageAction::RestDay => StageEdit::RestDay {
            stage_id,
            new_stage_id,
        },
        StageAction::ClearAccommodation => StageEdit::ClearAccommodation { stage_id },
        StageAction::ChooseAccommodation => {
            return Err(fail(FieldError::new(
                "action",
                "an accommodation is chosen with choose_accommodation",
            )));
        }
    })
}

fn parse_boundary(input: &Map<String, Value>) -> Result<Option<Boundary>, FieldError> {
    match (input.get("distance"), input.get("endPoint")) {
        (Some(_), Some(_)) => Err(FieldError::new(
            "distance",
            "give distance or endPoint, not both",
        )),
        (Some(d), None) => match d.as_f64().filter(|v| v.is_finite()) {
            Some(km) if km > 0.0 => Ok(Some(Boundary::AtKm(km))),
            _ => Err(FieldError::new(
                "distance",
                format!(
                    "distance must be a positive number of km from the day's start; got {}",
                    describe(d)
                ),
            )),
        },
        (None, Some(p)) => parse_point("endPoint", p).map(|p| Some(Boundary::Near(p))),
        (None, None) => Ok(None),
    }
}

/// Parses `{lat, lon}` (an `ele` is accepted and ignored: the route's own is used).
pub fn parse_point(name: &str, value: &Value) -> Result<Point, FieldError> {
    let shape = || {
        FieldError::new(
            name,
            format!(
                "{name} must be an object {{\"lat\": -90…90, \"lon\": -180…180}}; got {}",
                describe(value)
            ),
        )
    };
    let Value::Object(object) = value else {
        return Err(shape());
    };
    if object
        .keys()
        .any(|k| !["lat", "lon", "ele"].contains(&k.as_str()))
    {
        return Err(shape());
    }
    let lat = object.get("lat").and_then(Value::as_f64);
    let lon = object.get("lon").and_then(Value::as_f64);
    match (lat, lon) {
        (Some(lat), Some(lon)) if coordinates_valid(lat, lon) => Ok(Point {
            lat,
            lon,
            ele: None,
        }),
        _ => Err(shape()),
    }
}

/// Whether a latitude and longitude are on the globe.
pub fn coordinates_valid(lat: f64, lon: f64) -> bool {
    (-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lon)
}

fn parse_label(input: &Map<String, Value>) -> Result<LabelChange, FieldError> {
    match input.get("label") {
        None => Ok(LabelChange::Keep),
        Some(Value::Null) => Ok(LabelChange::Clear),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(LabelChange::Clear),
        Some(Value::String(s)) => Ok(LabelChange::Set(s.clone())),
        Some(other) => Err(FieldError::new(
            "label",
            format!(
                "label must be a string of at most {} characters, or null to clear it; got {}",
                super::LABEL_MAX_CHARS,
                describe(other)
            ),
        )),
    }
}

/// Reads a place to sleep entered by hand: `name` and `lat`/`lon` (required), `priceTotal`
/// (€) and `url` (optional).
pub fn parse_manual_accommodation(input: &Map<String, Value>) -> Result<Accommodation, InputError> {
    refuse_unknown(input, &["name", "lat", "lon", "priceTotal", "url"])?;
    let mut errors = Vec::new();
    let name = match input
        .get("name")
        .and_then(Value::as_str)
        .and_then(crate::text::visible_name)
    {
        Some(name) => Some(name),
        None => {
            errors.push(FieldError::new(
                "name",
                format!(
                    "name is required: the place's name, 1 to {} characters",
                    crate::text::NAME_MAX_CHARS
                ),
            ));
            None
        }
    };
    let lat = input.get("lat").and_then(Value::as_f64);
    let lon = input.get("lon").and_then(Value::as_f64);
    if !matches!((lat, lon), (Some(a), Some(o)) if coordinates_valid(a, o)) {
        errors.push(FieldError::new(
            "lat",
            "lat (-90…90) and lon (-180…180) are required: where the place is",
        ));
    }
    let price = match input.get("priceTotal") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64().filter(|p| (0.0..=10_000.0).contains(p)) {
            Some(p) => Some(p),
            None => {
                errors.push(FieldError::new(
                    "priceTotal",
                    format!(
                        "priceTotal must be a number of euros from 0 to 10000; got {}",
                        describe(v)
                    ),
                ));
                None
            }
        },
    };
    let url = match input.get("url") {
        None | Some(Value::Null) => None,
        Some(Value::String(s))
            if (s.starts_with("https://") || s.starts_with("http://"))
                && s.len() <= crate::text::LINK_MAX_BYTES =>
        {
            Some(strip_controls(s))
        }
        Some(other) => {
            errors.push(FieldError::new(
                "url",
                format!("url must be an http(s) link; got {}", describe(other)),
            ));
            None
        }
    };
    match (errors.is_empty(), lat, lon) {
        (true, Some(lat), Some(lon)) => Ok(Accommodation {
            name,
            kind: "other".into(),
            lat,
            lon,
            distance_to_end_m: None,
            price_min_eur: price,
            price_max_eur: price,
            exact_price: price.is_some(),
            url,
            phone: None,
            address: None,
            source: "manual".into(),
            chosen_by: None,
        }),
        _ => Err(InputError::Invalid(errors)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn parse(action: StageAction, v: Value) -> Result<StageEdit, InputError> {
        parse_stage_edit(action, Uuid::from_u128(1), Uuid::from_u128(2), &object(v))
    }

    #[test]
    fn each_action_refuses_what_it_does_not_accept_by_name() {
        let refused = parse(StageAction::Delete, json!({"toIndex": 1}));
        assert!(
            matches!(refused, Err(InputError::UnknownFields { unknown, .. }) if unknown == vec!["toIndex"])
        );
        let refused = parse(StageAction::Move, json!({"distance": 3}));
        assert!(
            matches!(refused, Err(InputError::UnknownFields { accepted, .. }) if accepted == vec!["toIndex"])
        );
    }

    #[test]
    fn adding_a_day_needs_where_to_split_it() {
        let refused = parse(StageAction::Add, json!({"label": "Brenner"}));
        let Err(InputError::Invalid(errors)) = refused else {
            panic!("refused: {refused:?}")
        };
        assert_eq!(errors[0].field, "distance");
        assert!(errors[0].message.contains("distance") && errors[0].message.contains("endPoint"));
        assert!(parse(StageAction::Add, json!({"distance": 20})).is_ok());
    }

    #[test]
    fn a_boundary_is_a_distance_or_a_point_never_both() {
        assert_eq!(
            parse(StageAction::Update, json!({"distance": 12.5})),
            Ok(StageEdit::Update {
                stage_id: Uuid::from_u128(1),
                end: Some(Boundary::AtKm(12.5)),
                label: LabelChange::Keep
            })
        );
        for bad in [
            json!({"distance": 1, "endPoint": {"lat": 1, "lon": 2}}),
            json!({"distance": -1}),
            json!({"distance": "5"}),
            json!({"endPoint": {"lat": 91, "lon": 0}}),
            json!({"endPoint": {"lat": 1, "lon": 0, "x": 1}}),
            json!({"endPoint": [1, 2]}),
            json!({}),
        ] {
            let refused = parse(StageAction::Update, bad.clone());
            assert!(matches!(refused, Err(InputError::Invalid(_))), "{bad}");
        }
    }

    #[test]
    fn move_needs_a_whole_index() {
        assert!(matches!(
            parse(StageAction::Move, json!({"toIndex": 2})),
            Ok(StageEdit::Move { to_index: 2, .. })
        ));
        for bad in [
            json!({}),
            json!({"toIndex": -1}),
            json!({"toIndex": 1.5}),
            json!({"toIndex": "1"}),
        ] {
            let refused = parse(StageAction::Move, bad.clone());
            assert!(
                matches!(&refused, Err(InputError::Invalid(e)) if e[0].field == "toIndex"),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_null_or_blank_label_clears_it() {
        for clear in [json!({"label": null}), json!({"label": "  "})] {
            assert!(matches!(
                parse(StageAction::Update, clear),
                Ok(StageEdit::Update {
                    label: LabelChange::Clear,
                    ..
                })
            ));
        }
        assert!(matches!(
            parse(StageAction::Update, json!({"label": 3})),
            Err(InputError::Invalid(_))
        ));
    }

    #[test]
    fn a_place_entered_by_hand_needs_a_name_and_coordinates() {
        let place = parse_manual_accommodation(&object(
            json!({"name": "Chez\u{0000} Anne", "lat": 45.1, "lon": 6.2, "priceTotal": 64}),
        ))
        .expect("accepted");
        assert_eq!(place.name.as_deref(), Some("Chez Anne"));
        assert!(place.exact_price);
        let refused = parse_manual_accommodation(&object(json!({"lat": 95})));
        assert!(matches!(refused, Err(InputError::Invalid(e)) if e.len() == 2));
    }

    #[test]
    fn the_action_names_are_those_of_edit_stages() {
        let names: Vec<&str> = EDIT_ACTIONS.iter().map(|a| a.as_str()).collect();
        assert_eq!(
            names,
            ["add", "update", "move", "delete", "merge_next", "rest_day"]
        );
        assert_eq!(parse_action("rest_day"), Some(StageAction::RestDay));
        assert_eq!(parse_action("choose_accommodation"), None);
    }
}
