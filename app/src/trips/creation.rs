//! Creating trips: from a link, an upload or a copy; idempotent under a key, counted against
//! the user's budget.

use std::collections::BTreeMap;

use etappe_domain::ids::{TripId, derived_id};
use etappe_domain::projection::TripView;
use etappe_domain::trip::input::{NullMeans, parse_settings, refuse_unknown};
use etappe_domain::trip::source::{SourceType, SourceUrl};
use etappe_domain::trip::{FieldError, InputError, TripCommand, TripEvent, decide};
use etappe_events::{DecidedOn, EventIds};
use serde_json::{Map, Value};

use crate::access::require;
use crate::identity::Scope;
use crate::views::{TripSummary, today};

use super::{
    AppError, Caller, TripService, canonical_digest, command_metadata, create_fields, update_fields,
};

/// The answer to a creation.
#[derive(Clone, Debug)]
pub struct Created {
    pub trip: TripSummary,
    /// True when an earlier request with the same idempotency key created it.
    pub replayed: bool,
}

/// A request made idempotent by a key: the new trip's id and its events' ids derive from
/// `scope`; `digest` tells a retry from another request under the same key.
struct Keyed {
    scope: String,
    digest: String,
}

impl Keyed {
    fn trip_id(&self) -> TripId {
        TripId(derived_id(&format!("trip:{}", self.scope)))
    }
}

impl TripService {
    /// Creates a trip from a source link and settings. With an idempotency key, the same key
    /// and body answer the same trip, and the same key with another body is refused.
    pub async fn create(
        &self,
        caller: &Caller,
        input: &Map<String, Value>,
        idempotency_key: Option<&str>,
    ) -> Result<Created, AppError> {
        require(&caller.principal, Scope::TripsWrite)?;
        refuse_unknown(input, &create_fields())?;
        let mut errors = Vec::new();
        let plan = input.get("plan").filter(|v| !v.is_null());
        let source = match (input.get("sourceUrl"), plan) {
            (Some(_), Some(_)) => {
                errors.push(FieldError::new(
                    "plan",
                    "give either sourceUrl (a route link) or plan (places to route), not both",
                ));
                None
            }
            (None, Some(plan)) => match self.resolve_plan_field(plan).await {
                Ok(plan) => Some(SourceUrl::planned(plan)),
                Err(AppError::Input(InputError::Invalid(e))) => {
                    errors.extend(e);
                    None
                }
                Err(other) => return Err(other),
            },
            (Some(Value::String(url)), None) => {
                match SourceUrl::parse(url, &self.allowed_source_hosts) {
                    Ok(source) => Some(source),
                    Err(e) => {
                        errors.push(e);
                        None
                    }
                }
            }
            (Some(other), None) => {
                errors.push(FieldError::new(
                    "sourceUrl",
                    format!(
                        "sourceUrl must be a link (a string); got {}",
                        etappe_domain::trip::input::describe(other)
                    ),
                ));
                None
            }
            (None, None) => {
                errors.push(FieldError::new(
                    "sourceUrl",
                    "sourceUrl or plan is required: an https link to a Komoot tour or collection, a Strava route, a RideWithGPS route or a GPX file, or a plan {\"from\": \"Basel\", \"to\": \"Wien\"} to route",
                ));
                None
            }
        };
        let settings = match parse_settings(input, NullMeans::Absent) {
            Ok(patch) => Some(patch),
            Err(InputError::Invalid(e)) => {
                errors.extend(e);
                None
            }
            Err(other) => return Err(other.into()),
        };
        let (Some(source), Some(settings), true) = (source, settings, errors.is_empty()) else {
            return Err(InputError::Invalid(errors).into());
        };
        self.refuse_nights_without_beds(&settings).await?;
        self.admit_creation(&caller.principal).await?;

        let keyed = idempotency_key.map(|key| Keyed {
            scope: format!("create_trip:{}:{key}", caller.principal.user_id),
            digest: canonical_digest(&[&Value::Object(input.clone())]),
        });
        let trip_id = keyed.as_ref().map_or_else(TripId::new, Keyed::trip_id);
        let command = TripCommand::Create {
            trip_id,
            owner_id: caller.principal.user_id,
            source,
            settings,
        };
        self.create_trip(caller, trip_id, command, keyed.as_ref())
            .await
    }

    /// Duplicates a trip the caller owns (see `trip::duplicate` for what is copied). The key
    /// makes a retried request answer the same copy; the same key for another trip is refused.
    pub async fn duplicate(
        &self,
        caller: &Caller,
        original_id: TripId,
        idempotency_key: &str,
    ) -> Result<Created, AppError> {
        require(&caller.principal, Scope::TripsWrite)?;
        let original = self.owned_view(&caller.principal, original_id).await?;
        let keyed = Keyed {
            scope: format!(
                "duplicate_trip:{}:{idempotency_key}",
                caller.principal.user_id
            ),
            digest: canonical_digest(&[&Value::String(original_id.to_string())]),
        };
        let trip_id = keyed.trip_id();
        let mut command = TripCommand::Duplicate {
            trip_id,
            owner_id: caller.principal.user_id,
            original: Box::new(original.trip.clone()),
            today: today(),
            renamed_files: BTreeMap::new(),
        };
        // Deciding is pure: deciding once first tells which files the copy needs, so they are
        // copied before its events exist.
        let planned = decide(None, command.clone())?;
        let renamed = self.copy_files_for(trip_id, &planned).await?;
        if let TripCommand::Duplicate { renamed_files, .. } = &mut command {
            *renamed_files = renamed;
        }
        let recomputes_route = planned
            .iter()
            .any(|e| matches!(e, TripEvent::RouteRequested { .. }));
        if recomputes_route && original.trip.source.source_type == SourceType::GpxUpload {
            // The copy's route job reads its own upload: copy the file before the event.
            if let Some(file) = self
                .store
                .get_blob(&format!("upload:{original_id}"))
                .await?
            {
                self.store
                    .put_blob(&format!("upload:{trip_id}"), &file)
                    .await?;
            }
        }
        self.create_trip(caller, trip_id, command, Some(&keyed))
            .await
    }

    /// A copy owns its files: the original's track and detours (as the copy's `events` name
    /// them) are copied under the copy's keys; the answer maps each original key to its copy,
    /// for the copy's image to point at, so deleting the original (which deletes its files)
    /// leaves the copy whole.
    async fn copy_files_for(
        &self,
        copy: TripId,
        events: &[TripEvent],
    ) -> Result<BTreeMap<String, String>, AppError> {
        let mut renamed = BTreeMap::new();
        for event in events {
            let TripEvent::TripDuplicated {
                route,
                stages,
                generation,
                ..
            } = event
            else {
                continue;
            };
            let mut wanted: Vec<(&str, String)> = Vec::new();
            let mut beds = None;
            if let Some(route) = route {
                let to = etappe_track::stored::key(copy, *generation);
                beds = Some((
                    etappe_track::stored::beds_key(&route.track_key),
                    etappe_track::stored::beds_key(&to),
                ));
                wanted.push((&route.track_key, to));
            }
            // The beds a re-flow reads go with the track (they are not a file of the trip's).
            if let Some((from, to)) = beds
                && let Some(bytes) = self.store.get_blob(&from).await?
            {
                self.store.put_blob(&to, &bytes).await?;
            }
            for stage in stages {
                if let Some(detour) = &stage.detour {
                    wanted.push((
                        &detour.track_key,
                        format!("detour:{copy}:{}:copy", stage.id),
                    ));
                }
            }
            for (from, to) in wanted {
                if let Some(bytes) = self.store.get_blob(from).await? {
                    self.store.put_blob(&to, &bytes).await?;
                    renamed.insert(from.to_owned(), to);
                }
            }
        }
        Ok(renamed)
    }

    /// Creates a new trip through the one command path; with a key, the events have ids
    /// derived from it so that a retry is recognised, and a retry answers the trip the first
    /// one made.
    async fn create_trip(
        &self,
        caller: &Caller,
        trip_id: TripId,
        command: TripCommand,
        keyed: Option<&Keyed>,
    ) -> Result<Created, AppError> {
        let mut meta = command_metadata(caller);
        meta.metadata.request_digest = keyed.map(|k| k.digest.clone());
        if let Some(k) = keyed {
            meta.ids = EventIds::Derived(format!("event:{}", k.scope));
        }
        let executed = self
            .store
            .execute(trip_id, DecidedOn::NewStream, &meta, |_| command.clone())
            .await?;
        if executed.already_appended {
            let digest = meta.metadata.request_digest.as_deref();
            return self.replay(trip_id, digest, executed.view).await;
        }
        let view = executed.view.ok_or(AppError::NotFound)?;
        Ok(Created {
            trip: TripSummary::of(&view, today()),
            replayed: false,
        })
    }

    /// Answers a creation (or duplication) repeated with the same idempotency key; `current`
    /// is the trip's view now.
    async fn replay(
        &self,
        trip_id: TripId,
        digest: Option<&str>,
        current: Option<TripView>,
    ) -> Result<Created, AppError> {
        let first = self.store.read_stream(&trip_id.stream_id()).await?;
        let original = first
            .first()
            .and_then(|e| e.metadata.request_digest.as_deref());
        if original != digest {
            return Err(AppError::Conflict(
                "this Idempotency-Key was already used for a different request; use a new key for a new trip".into(),
            ));
        }
        match current {
            Some(view) => Ok(Created {
                trip: TripSummary::of(&view, today()),
                replayed: true,
            }),
            None => Err(AppError::Conflict(
                "the trip created with this Idempotency-Key has since been deleted; use a new key"
                    .into(),
            )),
        }
    }

    /// Creates a trip from an uploaded GPX file: the file is stored, then the trip takes the
    /// same path as a link (the workers parse and pace it). `settings` takes the same names
    /// as a creation, without `sourceUrl`.
    pub async fn create_from_upload(
        &self,
        caller: &Caller,
        file_name: &str,
        bytes: &[u8],
        settings: &Map<String, Value>,
    ) -> Result<Created, AppError> {
        require(&caller.principal, Scope::TripsWrite)?;
        refuse_unknown(settings, &update_fields())?;
        let patch = parse_settings(settings, NullMeans::Absent)?;
        self.refuse_nights_without_beds(&patch).await?;
        if bytes.is_empty() {
            return Err(InputError::Invalid(vec![FieldError::new(
                "file",
                "file is empty: send a GPX file",
            )])
            .into());
        }
        // A file that is not a route is refused now, naming what it is, rather than accepted
        // and failed later: the caller is still here to read the reason.
        if let Err(error) = etappe_route::parse_gpx(bytes) {
            return Err(InputError::Invalid(vec![FieldError::new(
                "file",
                format!(
                    "file is not a usable GPX route ({}; found {}): send a GPX 1.0 or 1.1 file with a track or a route",
                    error.for_rider(etappe_route::RouteOrigin::File),
                    what_the_file_is(bytes)
                ),
            )])
            .into());
        }
        self.admit_creation(&caller.principal).await?;
        let quota = self.budgets.settings.upload_quota_bytes();
        let used = self.store.upload_bytes_of(caller.principal.user_id).await?;
        if used.saturating_add(bytes.len() as u64) > quota {
            return Err(AppError::QuotaExceeded(format!(
                "this upload ({} MB) would take your uploaded files to {} MB, over the {} MB kept per user; delete trips you no longer need",
                bytes.len().div_ceil(1024 * 1024),
                (used + bytes.len() as u64).div_ceil(1024 * 1024),
                quota / (1024 * 1024)
            )));
        }
        let trip_id = TripId::new();
        let name: String = etappe_domain::text::strip_controls(file_name)
            .chars()
            .take(200)
            .collect();
        let source = SourceUrl::uploaded(&name);
        let command = TripCommand::Create {
            trip_id,
            owner_id: caller.principal.user_id,
            source,
            settings: patch,
        };
        // Deciding is pure: a refusal comes before the file is stored, not after.
        decide(None, command.clone())?;
        // The file first: the route job must find it when the event is dispatched.
        self.store
            .put_blob(&format!("upload:{trip_id}"), bytes)
            .await?;
        self.create_trip(caller, trip_id, command, None).await
    }
}

/// What an uploaded file looks like, for a refusal that names it.
fn what_the_file_is(bytes: &[u8]) -> String {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF)
        .unwrap_or(0);
    let head = &bytes[start..bytes.len().min(start + 512)];
    if bytes.len() > 12 && &bytes[8..12] == b".FIT" {
        return "a FIT file".into();
    }
    if head.starts_with(b"PK") {
        return "a ZIP archive".into();
    }
    if head.starts_with(b"{") || head.starts_with(b"[") {
        return "JSON".into();
    }
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    if text.starts_with("<!doctype html") || text.starts_with("<html") {
        return "an HTML page".into();
    }
    if text.starts_with('<') {
        // The first element that is not a declaration or a comment.
        let root = text
            .split('<')
            .skip(1)
            .find(|t| !t.starts_with('?') && !t.starts_with('!'))
            .map(|t| {
                t.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '_' | '-'))
                    .collect::<String>()
            })
            .filter(|t| !t.is_empty());
        return match root {
            Some(root) => format!("an XML document whose root is <{root}>"),
            None => "an XML document".into(),
        };
    }
    if head
        .iter()
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        "plain text".into()
    } else {
        "binary data".into()
    }
}
