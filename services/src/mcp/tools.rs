//! Each tool: a thin wrapper over the application service its REST twin calls. Arguments are
//! read with the same parsers; answers carry `version` and `nextAction`; refusals are messages
//! an agent can act on (one place maps service errors to them: [`refusal`]).

use chrono::Utc;
use etappe_events::ids::TripId;
use etappe_events::store::{Page, TripFilter};
use etappe_events::text::quote;
use etappe_events::trip::Category;
use etappe_events::trip::edits::input::parse_action;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::guard::{CONFIRMATION_TTL, Guards};
use crate::app::trips::{BaseVersion, canonical_digest};
use crate::app::views::TripDetail;
use crate::app::{AppError, RequestContext};
use crate::http::AppState;
use crate::identity::Principal;

/// One call's inputs.
pub(super) struct Call<'a> {
    pub state: &'a AppState,
    pub guards: &'a Guards,
    pub principal: &'a Principal,
    pub client: &'a str,
    pub args: &'a Map<String, Value>,
    /// The HTTP request's headers (the Host that share links are built on).
    pub headers: &'a axum::http::HeaderMap,
}

type Answer = Result<Value, Value>;

/// The one mapping of service errors to tool refusals an agent can act on.
#[allow(clippy::needless_pass_by_value)] // taken by value so `.map_err(|e| refusal(e, ..))` reads simply
fn refusal(error: AppError, trip: Option<&str>) -> Value {
    let trip = trip.map(quote).unwrap_or_default();
    let message = match &error {
        AppError::NotFound => format!("Trip {trip} not found. Call list_trips for your trip ids."),
        AppError::StageNotFound => {
            format!("No day with this stageId in trip {trip}. Read the stage ids from get_trip.")
        }
        AppError::StaleVersion { expected, current } => format!(
            "Trip {trip} has moved on: you edited version {expected}, the current one is {current}. Reload it and reapply your change."
        ),
        AppError::Locked => format!(
            "Trip {trip} is locked: its start date is today or past. Days, settings and analysis can no longer change; delete and share still work."
        ),
        AppError::NotReady => {
            format!("Trip {trip} has no days yet. Call get_trip until partial is false.")
        }
        AppError::Input(input) => format!("{input}. See etappe_help."),
        AppError::Upstream(failure) => {
            return json!({
                "error": failure.to_string(),
                "upstream": failure.upstream,
                "failure": failure.failure,
                "retryable": failure.retryable,
            });
        }
        other => other.to_string(),
    };
    json!({"error": message})
}

fn context() -> RequestContext {
    RequestContext {
        correlation_id: Some(Uuid::now_v7()),
        traceparent: crate::telemetry::current_traceparent(),
    }
}

fn string<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, Value> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| json!({"error": format!("{name} is required (a string). See etappe_help.")}))
}

fn trip_id(args: &Map<String, Value>, name: &str) -> Result<(TripId, String), Value> {
    let raw = string(args, name)?;
    match raw.parse::<TripId>() {
        Ok(id) => Ok((id, raw.to_owned())),
        // A malformed id is a missing trip, like any other.
        Err(_) => Err(refusal(AppError::NotFound, Some(raw))),
    }
}

fn stage_id(args: &Map<String, Value>, trip: &str) -> Result<Uuid, Value> {
    let raw = string(args, "stageId")?;
    Uuid::parse_str(raw).map_err(|_| refusal(AppError::StageNotFound, Some(trip)))
}

/// `version`: required, a number; `*` and anything else refused.
fn version(args: &Map<String, Value>) -> Result<u64, Value> {
    match args.get("version") {
        Some(v) if v.is_u64() => Ok(v.as_u64().unwrap_or_default()),
        Some(Value::String(s)) if s.trim() == "*" => Err(
            json!({"error": "version \"*\" is not accepted: pass the number read from get_trip, so a change made meanwhile is not overwritten."}),
        ),
        Some(other) => Err(
            json!({"error": format!("version must be the whole number read from get_trip; got {}.", etappe_events::trip::input::describe(other))}),
        ),
        None => Err(
            json!({"error": "This tool requires a \"version\" argument: the trip's version from get_trip."}),
        ),
    }
}

/// The arguments without the named control arguments, for binding and service input.
fn without(args: &Map<String, Value>, names: &[&str]) -> Map<String, Value> {
    args.iter()
        .filter(|(k, _)| !names.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn written(detail: &TripDetail, result: &str, next: &str) -> Value {
    json!({"result": result, "version": detail.version, "partial": detail.partial, "nextAction": next})
}

/// Runs tool `name`.
pub(super) async fn dispatch(name: &str, call: &Call<'_>) -> Answer {
    match name {
        "etappe_help" => super::catalogue::help(call.args.get("topic").and_then(Value::as_str))
            .map_err(|e| json!({"error": e})),
        "list_trips" => list_trips(call).await,
        "get_trip" => get_trip(call).await,
        "get_stage" => get_stage(call).await,
        "search_places" => search_places(call).await,
        "create_trip" => create_trip(call).await,
        "update_trip_settings" => update_trip_settings(call).await,
        "edit_stages" => edit_stages(call).await,
        "add_waypoint" => add_waypoint(call).await,
        "choose_accommodation" => choose_accommodation(call).await,
        "analyze_trip" => analyze_trip(call).await,
        "share_trip" => share_trip(call).await,
        "unshare_trip" => unshare_trip(call).await,
        "delete_trip" => delete_trip(call).await,
        other => Err(json!({"error": format!("Tool {} has no handler.", quote(other))})),
    }
}

async fn list_trips(call: &Call<'_>) -> Answer {
    let a = call.args;
    let count = |name: &str, default: u32, max: u32| -> Result<u32, Value> {
        match a.get(name) {
            None => Ok(default),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(
                    || json!({"error": format!("{name} must be a whole number from 1 to {max}.")}),
                ),
        }
    };
    let page = count("page", 1, 100_000)?;
    let per_page = count("itemsPerPage", 20, 30)?;
    let filter = TripFilter {
        title: a.get("title").and_then(Value::as_str).map(str::to_owned),
        start_date: None,
        end_date: None,
    };
    let list = call
        .state
        .trips
        .list(call.principal, &filter, Page { page, per_page })
        .await
        .map_err(|e| refusal(e, None))?;
    Ok(json!({"totalItems": list.total_items, "member": list.items}))
}

async fn get_trip(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "id")?;
    let detail = call
        .state
        .trips
        .detail(call.principal, id)
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    Ok(digest(&detail))
}

/// The digest of a trip: everything an agent plans with, one short line per day.
pub fn digest(detail: &TripDetail) -> Value {
    let status: Map<String, Value> = detail
        .computation_status
        .iter()
        .filter(|(_, s)| **s != etappe_events::trip::ComputationStatus::Pending)
        .map(|(c, s)| (json!(c).as_str().unwrap_or_default().to_owned(), json!(s)))
        .collect();
    let days: Vec<Value> = detail
        .stages
        .iter()
        .map(|s| {
            let critical: Vec<&str> = s
                .alerts
                .iter()
                .filter(|a| a.severity == "critical")
                .map(|a| a.message.as_str())
                .collect();
            let mut day = json!({
                "stageId": s.stage_id,
                "day": s.day_number,
                "km": s.distance,
                "climb": s.elevation,
                "from": s.start_label,
                "to": s.end_label,
                "alerts": s.alerts.len(),
            });
            if s.is_rest_day {
                day["rest"] = json!(true);
            }
            if let Some(label) = &s.label {
                day["label"] = json!(label);
            }
            if let Some(night) = &s.selected_accommodation {
                day["night"] = json!(night.name);
            }
            if !critical.is_empty() {
                day["critical"] = json!(critical);
            }
            day
        })
        .collect();
    json!({
        "id": detail.id,
        "version": detail.version,
        "title": detail.title,
        "startDate": detail.start_date,
        "endDate": detail.end_date,
        "partial": detail.partial,
        "isLocked": detail.is_locked,
        "settings": {
            "maxDistancePerDay": detail.max_distance_per_day,
            "averageSpeed": detail.average_speed,
            "fatigueFactor": detail.fatigue_factor,
            "elevationPenalty": detail.elevation_penalty,
            "departureHour": detail.departure_hour,
            "ebikeMode": detail.ebike_mode,
        },
        "categoryStatus": status,
        "unavailable": detail.unavailable,
        "stageCount": detail.stage_count,
        "totalDistance": detail.total_distance,
        "stages": days,
        "nextAction": next_after_reading(detail),
    })
}

/// What an agent does after reading a trip: wait, stop on a failure, or go on editing.
fn next_after_reading(detail: &TripDetail) -> String {
    if let Some(reason) = detail
        .unavailable
        .get(&Category::Route)
        .filter(|_| detail.status == "failed")
    {
        format!(
            "Stop polling: the route failed ({reason}). Tell the user; once the source is fixed, analyze_trip retries it."
        )
    } else if detail.partial {
        "The days are being computed: call get_trip again in a few seconds.".to_owned()
    } else {
        format!("Pass version {} to the next write.", detail.version)
    }
}

async fn get_stage(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "tripId")?;
    let stage = stage_id(call.args, &raw)?;
    let (version, day) = call
        .state
        .trips
        .stage_detail(call.principal, id, stage)
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    let mut value = json!(day);
    value["version"] = json!(version);
    Ok(value)
}

async fn search_places(call: &Call<'_>) -> Answer {
    let q = string(call.args, "q")?;
    let limit = match call.args.get("limit") {
        None => crate::app::places::DEFAULT_PLACES,
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0),
    };
    let places =
        crate::app::places::search_places(call.principal, &call.state.work.upstreams, q, limit)
            .await
            .map_err(|e| refusal(e, None))?;
    Ok(json!(places))
}

/// The binding of a call: user, client, tool and canonical arguments.
fn binding(call: &Call<'_>, tool: &str, args: &Map<String, Value>) -> String {
    canonical_digest(&[
        &json!(call.principal.user_id.to_string()),
        &json!(call.client),
        &json!(tool),
        &Value::Object(args.clone()),
    ])
}

/// The `settings` object's entries (none when absent).
fn settings(args: &Map<String, Value>) -> Result<Map<String, Value>, Value> {
    match args.get("settings") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(_) => Err(
            json!({"error": "settings must be an object such as {\"maxDistancePerDay\": 60}. See etappe_help {\"topic\":\"create_trip\"}."}),
        ),
    }
}

async fn create_trip(call: &Call<'_>) -> Answer {
    let mut input = settings(call.args)?;
    if let Some(url) = call.args.get("sourceUrl") {
        input.insert("sourceUrl".into(), url.clone());
    }
    // Derived idempotency: the same user, tool and canonical arguments within one 5-minute
    // window answer the same trip, so an agent's retry never creates a duplicate.
    let window = Utc::now().timestamp() / 300;
    let deliberate = call
        .args
        .get("idempotencyKey")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let key = canonical_digest(&[
        &json!(call.principal.user_id.to_string()),
        &json!("create_trip"),
        &Value::Object(input.clone()),
        &json!(window),
        &json!(deliberate),
    ]);
    let created = call
        .state
        .trips
        .create(call.principal, &input, Some(&key[..32]), &context())
        .await
        .map_err(|e| refusal(e, None))?;
    Ok(json!({
        "id": created.trip.id,
        "partial": created.trip.partial,
        "result": if created.replayed { "This trip was already created by the same call moments ago." } else { "Trip created; its days are being computed." },
        "nextAction": format!("Call get_trip with id {}. The days appear once the route is fetched and paced, usually within seconds; until then partial is true. Tell the user you are waiting rather than polling in a tight loop.", created.trip.id),
    }))
}

/// Lock, then version, then confirmation: nobody is sent to confirm what would be refused.
async fn confirm_or_challenge(
    call: &Call<'_>,
    tool: &str,
    id: TripId,
    raw: &str,
    expected: Option<u64>,
    action: &str,
) -> Result<Option<Value>, Value> {
    let detail = call
        .state
        .trips
        .detail(call.principal, id)
        .await
        .map_err(|e| refusal(e, Some(raw)))?;
    if tool == "update_trip_settings" && detail.is_locked {
        return Err(refusal(AppError::Locked, Some(raw)));
    }
    if let Some(expected) = expected
        && expected != detail.version
    {
        return Err(refusal(
            AppError::StaleVersion {
                expected,
                current: detail.version,
            },
            Some(raw),
        ));
    }
    let bound = binding(call, tool, &without(call.args, &["confirmationToken"]));
    match call.args.get("confirmationToken").and_then(Value::as_str) {
        Some(token) if call.guards.redeem(token, &bound).await => Ok(None),
        Some(_) => Err(
            json!({"error": format!("This confirmationToken is not valid for this call: it was minted for different arguments, has already been used, or has expired. Call {tool} again without a token to get a new one.")}),
        ),
        None => {
            let shared = call
                .state
                .trips
                .share_link(call.principal, id)
                .await
                .ok()
                .flatten()
                .is_some();
            Ok(Some(json!({
                "confirmationRequired": true,
                "confirmationToken": call.guards.mint(&bound).await,
                "action": action,
                "impact": {
                    "tripId": detail.id,
                    "title": detail.title,
                    "stageCount": detail.stage_count,
                    "startDate": detail.start_date,
                    "endDate": detail.end_date,
                    "hasActiveShareLink": shared,
                },
                "expiresInSeconds": CONFIRMATION_TTL.as_secs(),
                "nextAction": format!("Nothing was changed. Show the impact to the user; if they agree, call {tool} again with the same arguments and this confirmationToken."),
            })))
        }
    }
}

async fn update_trip_settings(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "id")?;
    let expected = version(call.args)?;
    if let Some(challenge) = confirm_or_challenge(
        call,
        "update_trip_settings",
        id,
        &raw,
        Some(expected),
        "Change the trip's settings (pacing and dates re-cut the days).",
    )
    .await?
    {
        return Ok(challenge);
    }
    let patch = settings(call.args)?;
    let before = expected;
    let detail = call
        .state
        .trips
        .update_settings(
            call.principal,
            id,
            &patch,
            Some(BaseVersion::Exact(expected)),
            &context(),
        )
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    Ok(if detail.version == before {
        written(
            &detail,
            "Nothing changed: the settings already had these values.",
            "The version did not move; keep using it.",
        )
    } else if !detail.partial {
        written(
            &detail,
            "Settings changed: the days stay as they are; what the change affects, if anything, is analysed again.",
            "Pass the version above to the next write; get_trip shows the analysis in categoryStatus.",
        )
    } else {
        written(
            &detail,
            "Settings changed: the days are being recomputed (new day ids; chosen accommodations are gone).",
            &format!(
                "Call get_trip with id {raw} shortly; partial is true until the new days exist."
            ),
        )
    })
}

async fn edit_stages(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "tripId")?;
    let action_name = string(call.args, "action")?;
    let Some(action) = parse_action(action_name) else {
        return Err(
            json!({"error": format!("action {} is not one of add, update, move, delete, rest_day. See etappe_help {{\"topic\":\"edit_stages\"}}.", quote(action_name))}),
        );
    };
    let expected = version(call.args)?;
    let stage = stage_id(call.args, &raw)?;
    let input = match call.args.get("change") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(fields)) => fields.clone(),
        Some(_) => {
            return Err(
                json!({"error": "change must be an object of the action's fields: distance, endPoint, label or toIndex. See etappe_help {\"topic\":\"edit_stages\"}."}),
            );
        }
    };
    let detail = call
        .state
        .trips
        .edit_stage(
            call.principal,
            id,
            action,
            stage,
            &input,
            Some(BaseVersion::Exact(expected)),
            &context(),
        )
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    let result = match action_name {
        "add" => "Day inserted.",
        "update" => "Day changed.",
        "move" => "Day moved.",
        "delete" => "Day removed and merged with its neighbour.",
        _ => "Rest day inserted.",
    };
    Ok(written(
        &detail,
        result,
        "The affected days are being analysed again. Pass the version above to the next edit; there is no need to read the trip first.",
    ))
}

async fn add_waypoint(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "tripId")?;
    let stage = stage_id(call.args, &raw)?;
    let input = without(call.args, &["tripId", "stageId"]);
    let accepted = call
        .state
        .trips
        .add_waypoint(call.principal, id, stage, &input, &context())
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    Ok(json!({
        "result": "The day is being re-routed through the point. The trip version has not moved.",
        "version": accepted.version,
        "nextAction": format!("Call get_stage with tripId {raw} and stageId {} in a little while to read the detour.", accepted.stage_id),
    }))
}

async fn choose_accommodation(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "tripId")?;
    let stage = stage_id(call.args, &raw)?;
    let expected = version(call.args)?;
    let input = without(call.args, &["tripId", "stageId", "version"]);
    let clearing = input.is_empty();
    let detail = call
        .state
        .trips
        .choose_accommodation(
            call.principal,
            id,
            stage,
            &input,
            Some(BaseVersion::Exact(expected)),
            &context(),
        )
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    Ok(written(
        &detail,
        if clearing {
            "Accommodation cleared."
        } else {
            "Accommodation chosen: the day now ends near it and the next day starts there."
        },
        "Call get_stage for this day to see the distances after the move.",
    ))
}

async fn analyze_trip(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "id")?;
    call.state
        .trips
        .analyze(call.principal, id, &context())
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    Ok(json!({
        "result": "Analysis requested. Nothing is ready yet.",
        "nextAction": format!("Call get_trip with id {raw} in a little while, usually under a minute, and read categoryStatus."),
    }))
}

async fn share_trip(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "tripId")?;
    // The same base as REST: the configured public URL, else the Host this call came to.
    let base = crate::http::share::base_url(call.state, call.headers)
        .map_err(|e| refusal(e, Some(&raw)))?;
    let (link, _) = call
        .state
        .trips
        .share(call.principal, id, &context())
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    Ok(json!({
        "url": format!("{base}/s/{}", link.code),
        "shortCode": link.code,
        "createdAt": link.created_at,
        "result": "Anyone with this url reads the trip without a token; url + \".gpx\" or \".fit\" downloads it.",
    }))
}

async fn unshare_trip(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "tripId")?;
    if let Some(challenge) = confirm_or_challenge(
        call,
        "unshare_trip",
        id,
        &raw,
        None,
        "Revoke the public link.",
    )
    .await?
    {
        return Ok(challenge);
    }
    call.state
        .trips
        .unshare(call.principal, id, &context())
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    Ok(
        json!({"result": "The share link is revoked. The address no longer resolves, for anyone who kept it."}),
    )
}

async fn delete_trip(call: &Call<'_>) -> Answer {
    let (id, raw) = trip_id(call.args, "id")?;
    if let Some(challenge) = confirm_or_challenge(
        call,
        "delete_trip",
        id,
        &raw,
        None,
        "Delete the trip for good.",
    )
    .await?
    {
        return Ok(challenge);
    }
    call.state
        .trips
        .delete(call.principal, id, &context())
        .await
        .map_err(|e| refusal(e, Some(&raw)))?;
    Ok(
        json!({"result": "The trip is deleted, with its days, its computations and any share link. This cannot be undone."}),
    )
}
