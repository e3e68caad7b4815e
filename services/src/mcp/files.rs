//! A day's files for agents, as MCP resources: `etappe://trips/{tripId}/stages/{stageId}/day.gpx`
//! (text, GPX 1.1) and `…/day.fit` (a FIT course, base64). An agent holding an OAuth token
//! cannot read REST's per-day files (REST refuses agent tokens), so the same export service
//! answers them here, under the same rule: the caller's own trip, scope trips:read. `get_stage`
//! names both addresses; the trip's whole GPX (share link + `.gpx`) holds one track per day.

use base64::Engine as _;
use etappe_domain::ids::TripId;
use rmcp::ErrorData as McpError;
use rmcp::model::{ReadResourceResult, ResourceContents, ResourceTemplate};
use serde_json::json;
use uuid::Uuid;

use etappe_app::App;
use etappe_app::exports::ExportFormat;
use etappe_app::identity::Principal;

const PREFIX: &str = "etappe://trips/";

/// The address of a day's file.
pub(super) fn day_file_uri(trip: &str, stage: &str, format: ExportFormat) -> String {
    let ext = match format {
        ExportFormat::Gpx => "gpx",
        ExportFormat::Fit => "fit",
    };
    format!("{PREFIX}{trip}/stages/{stage}/day.{ext}")
}

/// The templates `resources/templates/list` announces.
pub(super) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(
            format!("{PREFIX}{{tripId}}/stages/{{stageId}}/day.gpx"),
            "day-gpx",
        )
        .with_title("One day as GPX")
        .with_description("One day of a trip as a GPX 1.1 track (get_stage names it).")
        .with_mime_type("application/gpx+xml"),
        ResourceTemplate::new(
            format!("{PREFIX}{{tripId}}/stages/{{stageId}}/day.fit"),
            "day-fit",
        )
        .with_title("One day as FIT")
        .with_description("One day of a trip as a FIT course for a bike computer, base64.")
        .with_mime_type("application/vnd.ant.fit"),
    ]
}

/// The trip, day and format a day file's address names; `None` for any other address.
fn parse(uri: &str) -> Option<(TripId, Uuid, ExportFormat)> {
    let rest = uri.strip_prefix(PREFIX)?;
    let (trip, rest) = rest.split_once("/stages/")?;
    let (stage, file) = rest.split_once('/')?;
    let format = match file {
        "day.gpx" => ExportFormat::Gpx,
        "day.fit" => ExportFormat::Fit,
        _ => return None,
    };
    Some((trip.parse().ok()?, Uuid::parse_str(stage).ok()?, format))
}

/// Whether `uri` names a day file (read by [`read`]).
pub(super) fn is_day_file(uri: &str) -> bool {
    uri.starts_with(PREFIX)
}

/// Reads the day file `uri` names, for `principal`. A trip or day that is not the caller's,
/// or not there, is "not found", naming the address; a trip whose days are still being
/// computed says so.
pub(super) async fn read(
    state: &App,
    principal: &Principal,
    uri: &str,
) -> Result<ReadResourceResult, McpError> {
    let named = json!({"uri": etappe_domain::text::strip_controls(uri).chars().take(2048).collect::<String>()});
    let Some((trip, stage, format)) = parse(uri) else {
        return Err(McpError::resource_not_found(
            format!(
                "No resource {}: a day's file is etappe://trips/{{tripId}}/stages/{{stageId}}/day.gpx or day.fit (get_stage names both).",
                etappe_domain::text::quote(uri)
            ),
            Some(named),
        ));
    };
    let export = state
        .exports()
        .export(principal, trip, Some(stage), format)
        .await
        .map_err(|error| match error {
            etappe_app::AppError::NotFound | etappe_app::AppError::StageNotFound => {
                McpError::resource_not_found(
                    "No such trip or day for this account (list_trips, get_trip).".to_owned(),
                    Some(named.clone()),
                )
            }
            etappe_app::AppError::NotReady => McpError::invalid_params(
                "The day's route is still being computed: read again once get_trip's partial is false.".to_owned(),
                Some(named.clone()),
            ),
            etappe_app::AppError::InsufficientScope(_) => McpError::invalid_params(
                "Reading a day's file needs the trips:read scope.".to_owned(),
                Some(named.clone()),
            ),
            other => McpError::internal_error(other.to_string(), None),
        })?;
    let file = export.file;
    let contents = match format {
        ExportFormat::Gpx => {
            ResourceContents::text(String::from_utf8_lossy(&file.bytes).into_owned(), uri)
        }
        ExportFormat::Fit => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(&file.bytes),
            uri,
        ),
    }
    .with_mime_type(file.content_type);
    Ok(ReadResourceResult::new(vec![contents]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_files_address_reads_back_as_its_trip_day_and_format() {
        let trip = "0190a0b0-0000-7000-8000-000000000001";
        let stage = "0190a0b0-0000-7000-8000-000000000002";
        let uri = day_file_uri(trip, stage, ExportFormat::Fit);
        let (t, s, f) = parse(&uri).expect("an address of ours");
        assert_eq!(
            (t.to_string(), s.to_string(), f),
            (trip.to_owned(), stage.to_owned(), ExportFormat::Fit)
        );
        assert!(parse("etappe://trips/x/stages/y/day.gpx").is_none());
        assert!(parse(&uri.replace("day.fit", "day.kml")).is_none());
        assert!(parse("etappe://tools").is_none());
    }
}
