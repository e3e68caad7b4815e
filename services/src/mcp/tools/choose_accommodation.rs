//! `choose_accommodation`: choose where to sleep. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use etappe_app::trips::BaseVersion;

use crate::mcp::arguments::{STAGE_ID, TOKEN, TRIP_ID_AS_TRIP, VERSION, arg, as_arg};
use crate::mcp::call::{Answer, Call, StageRef, version, without, written};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::confirm::TokenConfirmation;
use crate::mcp::schema::{self, Kind, outputs};
use crate::openapi::inputs;

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "choose_accommodation",
    title: "Choose where to sleep",
    description: "Choose a day's accommodation by candidate lat/lon; none clears.",
    hints: Hints::WRITE,
    output: outputs::edited,
    args: &[
        TRIP_ID_AS_TRIP,
        STAGE_ID,
        VERSION,
        arg(
            "lat",
            Kind::Number(schema::LAT),
            "A candidate's; none clears",
        ),
        arg("lon", Kind::Number(schema::LON), ""),
        as_arg(inputs::OWN_PLACE_NAME),
        TOKEN,
    ],
    help: "lat/lon of one of get_stage's accommodations (within 50 m); or name with lat/lon: a place of your own (when the day has no candidates, or none you want). The day then ends at the route point nearest it and the next day starts there. All absent clears the choice. Answers {result, version, nextAction, alsoChanged?}; a choice that would drop something the user made answers a confirmationToken first.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let day = StageRef::read(call.args)?;
    let expected = version(call.args)?;
    let input = without(
        call.args,
        &["tripId", "stageId", "version", "confirmationToken"],
    );
    let clearing = input.is_empty();
    let confirmation = TokenConfirmation::of(call, "choose_accommodation");
    let chosen = call
        .state
        .trips()
        .choose_accommodation(
            call.caller,
            day.trip.id,
            day.stage,
            &input,
            Some(BaseVersion::Exact(expected)),
            &confirmation,
        )
        .await;
    let detail = match chosen {
        Ok(detail) => detail,
        Err(error) => {
            return confirmation
                .answer(
                    error,
                    &day.trip.raw,
                    "Choose where to sleep; this removes something the user made (see impact.change).",
                )
                .await;
        }
    };
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
