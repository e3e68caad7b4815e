//! The shapes of the application's answers (the views, the day service's and the places'
//! answers, the agents a person authorized), as components of the document: `<Answer>Schema`
//! describes `etappe_app`'s `<Answer>`. The application crate stays free of the document's
//! crate: each answer's shape is written here, field by field, with the one `shape!` every
//! component is declared with, and the document closes every object, so a field an answer
//! gains without its shape here fails the tests that validate real answers against it.

use serde_json::Value;

use super::build::{
    boolean, component, count, date, date_time, doc, lat_lon, list, nullable, nullable_doc, number,
    object, opt, req, text, uuid, words,
};
use super::domain::{
    computation_status_map, nights_mode, share_of_day, source_type, trip_status, unavailable_map,
};
use super::shape;

/// `[a, b]` pairs of numbers.
fn pairs() -> Value {
    list(list(number()))
}

fn version(min: u64) -> Value {
    doc(count(min), "The structural version; also the ETag.")
}

shape!(
    pub StageSummarySchema = "Stage",
    object(
        "One day as readers see it (no geometry: that is `/route`'s).",
        vec![
            req("stageId", doc(uuid(), "Stable within a pacing generation.")),
            req("dayNumber", count(1)),
            opt("date", nullable(date())),
            req("distance", doc(number(), "Kilometres.")),
            opt(
                "elevation",
                nullable_doc(
                    number(),
                    "Metres of climbing; null when unknown (the route has no heights here and no elevation source filled them: never 0 for \"unknown\").",
                ),
            ),
            opt(
                "elevationLoss",
                nullable_doc(number(), "Metres of descent; null when unknown."),
            ),
            req("startPoint", component("Point")),
            req("endPoint", component("Point")),
            opt(
                "startLabel",
                nullable_doc(text(), "Nearest locality (GeoNames data)."),
            ),
            opt("endLabel", nullable(text())),
            opt("label", nullable(text())),
            req("isRestDay", boolean()),
            req("alerts", list(component("Alert"))),
            req(
                "accommodations",
                doc(
                    list(component("Accommodation")),
                    "Places to sleep found near the day's end by the last scan (third-party data).",
                ),
            ),
            opt(
                "selectedAccommodation",
                nullable_doc(
                    component("Accommodation"),
                    "The place chosen for the night after this day.",
                ),
            ),
            opt(
                "detour",
                nullable_doc(
                    component("Detour"),
                    "Set when the day was re-routed through a waypoint.",
                ),
            ),
            opt(
                "detourFailure",
                nullable_doc(
                    text(),
                    "Why the last detour asked for this day could not be computed.",
                ),
            ),
            opt(
                "weather",
                nullable_doc(
                    component("DayWeather"),
                    "The day's weather along its ride; null until the weather was computed.",
                ),
            ),
            opt(
                "found",
                nullable_doc(
                    list(component("FoundAlong")),
                    "Food, water, bike shops and railway stations along the day, in order, from OpenStreetMap; null until read (`points_of_interest`), empty when none.",
                ),
            ),
            opt(
                "night",
                nullable_doc(
                    component("NightNote"),
                    "With nights at accommodation: why the night after this day is where it is (the pacer's target, the window, the beds passed over); null otherwise, or once the rider moved the day's end or chose its place.",
                ),
            ),
            opt(
                "ridingHours",
                nullable_doc(
                    number(),
                    "Hours in the saddle, as the sunset rule reckons them (distance ÷ average speed); null on a rest day.",
                ),
            ),
            opt(
                "arrival",
                nullable_doc(
                    text(),
                    "Local arrival, \"HH:MM\" (with \"(+1)\" after midnight): the departure hour plus the riding hours; null on a rest day.",
                ),
            ),
            opt(
                "unpavedShare",
                share_of_day(
                    "The share of the day on rough surface (0–1), as `surface_rough` counts it; null until OpenStreetMap was read for the day.",
                ),
            ),
            opt(
                "busyShare",
                share_of_day(
                    "The share of the day on busy road (0–1: main and secondary roads without cycle infrastructure, as the traffic rules count them); null until OpenStreetMap was read.",
                ),
            ),
        ],
    )
);

shape!(
    pub DetourSummarySchema = "Detour",
    object(
        "A re-routed day, as readers see it.",
        vec![
            req("waypoint", component("Point")),
            req(
                "addedDistance",
                doc(
                    serde_json::json!({"type": "number", "format": "double", "minimum": 0}),
                    "Kilometres the detour added to the day (never negative: the spur keeps the day's own roads and only adds the way to the point and back).",
                ),
            ),
            req(
                "estimated",
                doc(
                    boolean(),
                    "True when no router was reachable: a straight out-and-back, not a road.",
                ),
            ),
            req("router", text()),
            req(
                "skippedDistanceM",
                doc(
                    serde_json::json!({"type": "number", "format": "double", "minimum": 0}),
                    "Metres of the day's own track the spur skips (it may come back a little further on when that is shorter); 0 for an out-and-back.",
                ),
            ),
        ],
    )
);

shape!(
    pub ElevationSummarySchema = "Elevation",
    object(
        "Where a route's heights come from (`detail.elevation`).",
        vec![
            req(
                "known",
                doc(
                    boolean(),
                    "True when every point has a height, so every day's climbing is known.",
                ),
            ),
            req(
                "sources",
                doc(
                    list(text()),
                    "Which sources gave the heights: `recorded` (the route's own), `srtm`, `open-meteo`.",
                ),
            ),
            req("missingPoints", doc(count(0), "Points without a height.")),
            opt(
                "missingReason",
                nullable_doc(text(), "Why heights are missing and how to get them."),
            ),
            req(
                "pacedWithoutClimbing",
                doc(
                    boolean(),
                    "True when the days were cut by distance alone, the climbing being unknown.",
                ),
            ),
        ],
    )
);

shape!(
    pub PlanPlaceSummarySchema = "PlanPlace", {
    let [lat, lon] = lat_lon();
    object(
        "A place of a plan.",
        vec![
            opt(
                "name",
                nullable_doc(
                    text(),
                    "The place's name as the geocoder matched it (third-party data), when it was named.",
                ),
            ),
            lat,
            lon,
        ],
    )
});

shape!(
    pub PlanSummarySchema = "Plan",
    object(
        "What a planned trip was planned from (`detail.plan`).",
        vec![
            req("from", component("PlanPlace")),
            req("via", list(component("PlanPlace"))),
            req("to", component("PlanPlace")),
            req(
                "profile",
                doc(text(), "`touring`, `road`, `gravel` or `mountain`."),
            ),
        ],
    )
);

shape!(
    pub TripSummarySchema = "TripSummary",
    object(
        "`GET /trips/{id}` and the answer to a creation: where the trip stands.",
        vec![
            req("id", uuid()),
            req("version", version(1)),
            req(
                "partial",
                doc(
                    boolean(),
                    "True until the days exist: `stages: []` then means \"not computed yet\", not \"no days\".",
                ),
            ),
            req("isLocked", boolean()),
            req("computationStatus", computation_status_map()),
            req("unavailable", unavailable_map()),
        ],
    )
);

shape!(
    pub TripDetailSchema = "TripDetail",
    object(
        "`GET /trips/{id}/detail`: the whole trip as the rider edits it.",
        vec![
            req("id", uuid()),
            req("version", version(1)),
            opt("title", nullable(text())),
            req("sourceUrl", text()),
            req("sourceType", source_type()),
            opt("startDate", nullable(date())),
            opt("endDate", nullable(date())),
            req("fatigueFactor", number()),
            req("elevationPenalty", number()),
            req("maxDistancePerDay", number()),
            req("averageSpeed", number()),
            req("departureHour", count(0)),
            req("ebikeMode", boolean()),
            req(
                "enabledAccommodationTypes",
                list(component("AccommodationType")),
            ),
            req(
                "nights",
                doc(
                    nights_mode(),
                    "Where the days end: `anywhere` (by distance and climbing), or `at_accommodation` (at a place to sleep of the enabled types near each day's planned end).",
                ),
            ),
            req(
                "days",
                nullable_doc(
                    count(1),
                    "The number of days asked without dates; null when the dates or the daily maximum decide.",
                ),
            ),
            req(
                "status",
                doc(trip_status(), "`draft` until the days exist, then `ready`."),
            ),
            req(
                "partial",
                doc(
                    boolean(),
                    "True until every computation of this version has ended (done or failed): the days first, their alerts, found places and nights after.",
                ),
            ),
            opt(
                "retryAfterMs",
                doc(count(0), "While partial: when to read again, milliseconds."),
            ),
            req("isLocked", boolean()),
            req("computationStatus", computation_status_map()),
            req("unavailable", unavailable_map()),
            req("stageCount", count(0)),
            req(
                "totalDistance",
                doc(number(), "Kilometres, rest days excluded."),
            ),
            opt(
                "totalElevation",
                nullable_doc(
                    number(),
                    "Metres of climbing of the whole route, once computed; null while unknown.",
                ),
            ),
            opt(
                "elevation",
                nullable_doc(
                    component("Elevation"),
                    "Where the route's heights come from, once the route is computed.",
                ),
            ),
            opt(
                "plan",
                nullable_doc(
                    component("Plan"),
                    "What a planned trip was planned from (`sourceType: plan`); null for a link or file.",
                ),
            ),
            opt(
                "share",
                nullable_doc(
                    component("TripShare"),
                    "The trip's open public link; null when none is open (the owner's views only: a shared trip never names its code to its visitors).",
                ),
            ),
            req("stages", list(component("Stage"))),
            req("createdAt", date_time()),
            req("updatedAt", date_time()),
            opt(
                "notice",
                doc(
                    text(),
                    "Why the days shown are not the ones last asked for (a change whose new route could not be computed: its days are kept, and this says which place failed), until the next change.",
                ),
            ),
            opt(
                "alsoChanged",
                doc(
                    list(object(
                        "Something a change did beyond what was asked.",
                        vec![
                            req(
                                "kind",
                                words([
                                    "detour_moved",
                                    "detour_removed",
                                    "night_removed",
                                    "night_rechosen",
                                ]),
                            ),
                            req(
                                "removedPersonsWork",
                                doc(
                                    boolean(),
                                    "True when it removed something a person made (a detour, a night they chose).",
                                ),
                            ),
                            req("message", text()),
                        ],
                    )),
                    "In the answer to a change of the days: what it moved or removed beyond what was asked, for the person to be told. Absent when nothing else changed, and on reads.",
                ),
            ),
        ],
    )
);

shape!(
    pub ShareSummarySchema = "TripShare",
    object(
        "The open public link of a trip, as its owner reads it in the detail.",
        vec![
            req(
                "code",
                doc(
                    serde_json::json!({"type": "string", "minLength": 11, "maxLength": 11}),
                    "The link's code (as in `/s/{code}`).",
                ),
            ),
            req(
                "url",
                doc(
                    text(),
                    "The link's path on this server, `/s/{code}` (with `.gpx` or `.fit`: the files). A path, not an address: the detail is built without the request, and the address riders reach is the one they read it on (`POST /trips/{id}/share` answers the full address).",
                ),
            ),
            req("createdAt", date_time()),
        ],
    )
);

shape!(
    pub TripListItemSchema = "TripListItem",
    object(
        "One line of `GET /trips`.",
        vec![
            req("id", uuid()),
            opt("title", nullable(text())),
            opt("startDate", nullable(date())),
            opt("endDate", nullable(date())),
            req("status", trip_status()),
            req("isLocked", boolean()),
            req("stageCount", count(0)),
            req("totalDistance", number()),
            req("createdAt", date_time()),
            req("updatedAt", date_time()),
        ],
    )
);

shape!(
    pub TripListSchema = "TripList",
    object(
        "A page of trips.",
        vec![
            req("items", list(component("TripListItem"))),
            req("totalItems", count(0)),
            req("page", count(0)),
            req("itemsPerPage", count(0)),
        ],
    )
);

shape!(
    pub PublicTripSchema = "PublicTrip",
    object(
        "What an anonymous visitor of a share link reads: the trip without its owner's private details (no id, no source link, no settings).",
        vec![
            opt("title", nullable(text())),
            opt("startDate", nullable(date())),
            opt("endDate", nullable(date())),
            req("partial", boolean()),
            req("stageCount", count(0)),
            req("totalDistance", number()),
            opt("totalElevation", nullable(number())),
            req("stages", list(component("Stage"))),
        ],
    )
);

shape!(
    pub WaypointAcceptedSchema = "WaypointAccepted",
    object(
        "The answer to a waypoint request: accepted, computed by the workers, version unchanged.",
        vec![
            req("tripId", uuid()),
            req("stageId", uuid()),
            req(
                "version",
                doc(
                    count(0),
                    "The trip's version, which a detour does not move."
                ),
            ),
            req("partial", boolean()),
        ],
    )
);

shape!(
    pub DayLineSchema = "DayLine",
    object(
        "One day's simplified line.",
        vec![
            req("stageId", uuid()),
            req("dayNumber", count(0)),
            req("isRestDay", boolean()),
            req(
                "points",
                doc(
                    pairs(),
                    "`[lat, lon]` pairs, the whole day as one line (kept for older readers: it joins the pieces below across the route's breaks).",
                ),
            ),
            req(
                "pieces",
                doc(
                    list(pairs()),
                    "The day's line cut at the route's breaks (jumps between the source's pieces that are not ridden): one `[lat, lon]` list per ridden piece, so a map never draws a gap as road. One piece for a day without breaks, none for a rest day.",
                ),
            ),
            req(
                "profile",
                doc(
                    pairs(),
                    "The elevation profile: `[km from the day's start, metres]`, at most 400 samples of the full-resolution track (the map line above drops the points a straight climb needs), none where the source had no elevation.",
                ),
            ),
        ],
    )
);

shape!(
    pub RouteLinesSchema = "RouteLines",
    object(
        "`GET /trips/{id}/route`: the days' geometry, simplified for a map.",
        vec![
            req("version", count(0)),
            req("days", list(component("DayLine"))),
        ],
    )
);

shape!(
    pub PlaceItemSchema = "Place", {
    let [lat, lon] = lat_lon();
    object(
        "One place found.",
        vec![
            req(
                "name",
                doc(text(), "Third-party data (OpenStreetMap or GeoNames)."),
            ),
            req("displayName", text()),
            lat,
            lon,
            opt("countryCode", nullable(text())),
            opt(
                "region",
                doc(
                    text(),
                    "Where it is: the locality it lies near and its country.",
                ),
            ),
            opt("population", nullable(count(0))),
            req(
                "type",
                doc(
                    text(),
                    "village, town, city, hamlet, suburb, station, alpine_hut, camp_site, hotel, peak, locality…",
                ),
            ),
            req(
                "foundIn",
                doc(
                    words(["extract", "gazetteer", "geocoder"]),
                    "The imported OpenStreetMap extract, the embedded gazetteer or the geocoder.",
                ),
            ),
            opt(
                "distanceKm",
                doc(number(), "Its distance from `near`, when given."),
            ),
        ],
    )
});

shape!(
    pub PlaceListSchema = "PlaceList",
    object(
        "The places found.",
        vec![
            req("items", list(component("Place"))),
            req("totalItems", count(0)),
            req("source", text()),
        ],
    )
);

shape!(
    pub AgentGrantSchema = "AgentGrant",
    object(
        "An agent a person authorized, as the person sees it.",
        vec![
            req("grantId", uuid()),
            req("clientId", text()),
            req("clientName", text()),
            req("scopes", list(text())),
            req("createdAt", date_time()),
            opt("lastUsedAt", nullable(date_time())),
        ],
    )
);
