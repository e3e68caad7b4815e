//! The OpenAPI document's shared pieces, neutral ground for every transport: the raw-schema
//! placeholder and its splice, the shapes of the domain's values and of `app`'s answers
//! (written here, so `app` carries no transport type). The other transports' parts of the
//! document are gathered in `openapi_parts`, which imports them; nothing here does, so the
//! transports' shapes can use these pieces without a cycle.

pub mod build;
pub mod domain;
pub mod inputs;
pub mod views;

use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::{RefOr, Schema};

/// Where a placeholder made by [`schema`] carries its schema.
const RAW: &str = "x-etappe-schema";

/// A JSON Schema written with `json!` (so the domain's constants are interpolated, and any
/// 2020-12 keyword can be used: `not`, `anyOf`, `pattern`…), as a utoipa schema: a
/// placeholder carrying it, replaced by [`splice`] once the document is generated.
pub fn schema(value: Value) -> RefOr<Schema> {
    let carried = utoipa::openapi::extensions::ExtensionsBuilder::new()
        .add(RAW, value)
        .build();
    RefOr::T(Schema::Object(
        utoipa::openapi::ObjectBuilder::new()
            .extensions(Some(carried))
            .build(),
    ))
}

/// Declares `$marker` as the component `$name` of the document, shaped by `$shape` (a
/// `serde_json::Value`, usually made with [`build`]'s builders): a unit type standing for a
/// shape no Rust type carries, so no struct copy of it is ever left unused.
macro_rules! shape {
    ($(#[$meta:meta])* $vis:vis $marker:ident = $name:literal, $shape:expr) => {
        $(#[$meta])*
        #[derive(Debug)]
        $vis struct $marker;

        impl utoipa::PartialSchema for $marker {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
                $crate::openapi::schema($shape)
            }
        }

        impl utoipa::ToSchema for $marker {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($name)
            }
        }
    };
}
pub(crate) use shape;

/// Replaces every placeholder made by [`schema`] in a generated document with its schema.
pub fn splice(document: &mut Value) {
    match document {
        Value::Object(map) => {
            if let Some(raw) = map.remove(RAW) {
                *document = raw;
                splice(document);
                return;
            }
            map.values_mut().for_each(splice);
        }
        Value::Array(items) => items.iter_mut().for_each(splice),
        _ => {}
    }
}

/// The wire names of `values`, as their serde form (a value that does not serialize to a
/// name is left out, and the tests that validate real answers then fail on it).
pub fn wire_names<T: Serialize>(values: &[T]) -> Vec<Value> {
    values
        .iter()
        .filter_map(|v| serde_json::to_value(v).ok())
        .collect()
}
