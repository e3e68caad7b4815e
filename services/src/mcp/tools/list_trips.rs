//! `list_trips`: list trips. Its declaration (name, hints, scope, arguments, help, output
//! schema) and its handler, in one place; the catalogue lists it.

use etappe_app::trips::{DEFAULT_ITEMS_PER_PAGE, MAX_ITEMS_PER_PAGE, MAX_PAGE};
use etappe_events::{Page, TripFilter};
use serde_json::{Value, json};

use crate::mcp::arguments::arg;
use crate::mcp::call::{Answer, Call, count, refusal};
use crate::mcp::catalogue::{Hints, ToolSpec};
use crate::mcp::schema::{Kind, outputs};

pub(crate) const SPEC: ToolSpec = ToolSpec {
    name: "list_trips",
    title: "List trips",
    description: "Your trips, newest first.",
    hints: Hints::READ,
    output: outputs::trip_list,
    args: &[
        arg(
            "page",
            Kind::Integer {
                min: 1,
                max: MAX_PAGE as i64,
            },
            "",
        ),
        arg(
            "itemsPerPage",
            Kind::Integer {
                min: 1,
                max: MAX_ITEMS_PER_PAGE as i64,
            },
            "",
        ),
        arg("title", Kind::Text { min: 0, max: 0 }, "Title contains"),
    ],
    help: "Answers {totalItems, member: [{id, title, startDate, endDate, status, isLocked, stageCount, totalDistance}]}.",
    run: |call| Box::pin(handle(call)),
};

async fn handle(call: &Call<'_>) -> Answer {
    let a = call.args;
    let page = count(a, "page", 1, MAX_PAGE)?;
    let per_page = count(
        a,
        "itemsPerPage",
        DEFAULT_ITEMS_PER_PAGE,
        MAX_ITEMS_PER_PAGE,
    )?;
    let filter = TripFilter {
        title: a.get("title").and_then(Value::as_str).map(str::to_owned),
        start_date: None,
        end_date: None,
    };
    let list = call
        .state
        .trips()
        .list(&call.caller.principal, &filter, Page { page, per_page })
        .await
        .map_err(refusal(None))?;
    Ok(json!({"totalItems": list.total_items, "member": list.items}))
}
