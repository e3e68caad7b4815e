//! How the published OpenAPI document describes an error answer: `application/problem+json`
//! with the `Problem` schema, one reusable response type per status (with `Retry-After` on a
//! 429). Every HTTP transport's part of the document names its errors through this one place.

use std::collections::BTreeMap;

use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, RefOr};

use super::PROBLEM_JSON;

/// The responses of one error status: a problem document, with `Retry-After` on a 429.
pub fn responses(status: u16, description: &str) -> BTreeMap<String, RefOr<Response>> {
    let mut response = ResponseBuilder::new().description(description).content(
        PROBLEM_JSON,
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("Problem")))
            .build(),
    );
    if status == 429 {
        response = response.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(Some(crate::openapi::schema(
                    serde_json::json!({"type": "integer", "minimum": 0}),
                )))
                .description(Some("Seconds until the budget has room again"))
                .build(),
        );
    }
    BTreeMap::from([(status.to_string(), response.build().into())])
}

/// One type per error status, named in an operation's `responses(...)`: `problems! { [pub(super)]
/// NotFound = 404, "No such thing"; }`.
macro_rules! problems {
    ([$vis:vis] $($name:ident = $status:literal, $description:literal;)*) => {$(
        #[doc = $description]
        $vis struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> std::collections::BTreeMap<
                String,
                utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
            > {
                $crate::problem::documented::responses($status, $description)
            }
        }
    )*};
}

pub(crate) use problems;
