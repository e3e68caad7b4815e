//! `search_places`: search places. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use etappe_app::places::{DEFAULT_PLACES, MAX_PLACES};
use etappe_domain::text::NAME_MAX_CHARS;
use serde_json::{Value, json};

use crate::mcp::arguments::{arg, required};
use crate::mcp::call::{Answer, Call, count, refusal, string};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::schema::{Kind, outputs};

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "search_places",
    title: "Search places",
    description: "Places by name (geocoding).",
    hints: Hints {
        open_world: true,
        ..Hints::READ
    },
    output: outputs::places,
    args: &[
        required(
            "q",
            Kind::Text {
                min: 1,
                max: NAME_MAX_CHARS as u32,
            },
            "Place name",
        ),
        arg(
            "limit",
            Kind::Integer {
                min: 1,
                max: MAX_PLACES as i64,
            },
            "",
        ),
        arg(
            "near",
            Kind::Text { min: 3, max: 60 },
            "lat,lon: nearest first",
        ),
    ],
    help: "Answers {totalItems, items: [{name, displayName, lat, lon, countryCode, region, type (village, station, alpine_hut, camp_site, hotel, peak, locality…), foundIn, distanceKm}], source}. Reads the imported OpenStreetMap extract (villages, stations, huts, campsites, hotels, peaks), then the embedded GeoNames gazetteer, then, only when neither knows the name exactly and one is configured, Nominatim (1 request/s, cached 24 h; a failure answers {upstream: geocoder, failure, retryable}). Give near (another place of the trip) to rank the nearest first. A plan's names resolve the same way, near its other places; a far or doubtful match is refused with its candidates: pass the one meant as \"lat,lon\".",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let q = string(call.args, "q")?;
    let limit = count(
        call.args,
        "limit",
        u32::try_from(DEFAULT_PLACES).unwrap_or(u32::MAX),
        u32::try_from(MAX_PLACES).unwrap_or(u32::MAX),
    )?;
    let near = match call.args.get("near") {
        None | Some(Value::Null) => None,
        Some(_) => Some(string(call.args, "near")?),
    };
    let search = etappe_app::places::PlaceSearch {
        q,
        limit: usize::try_from(limit).unwrap_or(DEFAULT_PLACES),
        near,
    };
    let places = etappe_app::places::search_places(
        &call.caller.principal,
        &call.state.work().upstreams,
        search,
    )
    .await
    .map_err(refusal(None))?;
    Ok(json!(places))
}
