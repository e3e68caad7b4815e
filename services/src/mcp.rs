//! The agent surface: MCP over Streamable HTTP at `/mcp`, stateless (no server session, so
//! any replica answers), for clients that `initialize` (2025-06-18, 2025-11-25) and for the
//! 2026-07-28 era (rmcp answers `server/discover` and checks the per-request metadata).
//!
//! Tools come from the one catalogue (`catalogue`), which names each tool's handler, and each
//! calls the same application service as its REST twin (`tools`). The guards every call goes
//! through, in order: a malformed message (a JSON-RPC error, [`jsonrpc_gate`]), unknown tool (a
//! JSON-RPC error), unknown arguments (named, with the accepted list), scope, rate limits;
//! then the service's own (ownership, lock, version) and, for what cannot be undone, the
//! confirmation (`confirm`). Every refusal has one shape (`refusal`).

mod arguments;
pub mod call;
pub mod catalogue;
mod confirm;
pub mod cors;
mod elicit;
mod files;
pub mod guard;
pub mod jsonrpc_gate;
pub mod refusal;
pub mod schema;
pub mod tools;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use self::catalogue::{CATALOGUE, ToolSpec};
pub use self::guard::Guards;
use self::refusal::ToolError;
use etappe_app::App;
use etappe_app::identity::Principal;

/// The protocol revisions served, oldest first.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// The URI of the catalogue resource.
pub const TOOLS_URI: &str = "etappe://tools";

/// The MCP service: cloned per request by the stateless transport, so it is a few `Arc`s.
#[derive(Clone, Debug)]
pub struct Etappe {
    state: App,
    guards: Arc<Guards>,
    tools: Arc<Vec<Tool>>,
}

/// A tool's definition, from its catalogue entry.
fn tool_of(spec: &ToolSpec) -> Tool {
    // What a successful answer holds: the fields an agent passes on (ids, version,
    // partial, nextAction, confirmationToken), typed; refusals carry `schema::error_schema`.
    let output: Map<String, Value> = match (spec.output)() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    Tool::new(
        spec.name,
        spec.description,
        Arc::new(catalogue::input_schema(spec)),
    )
    .with_raw_output_schema(Arc::new(output))
    .with_annotations(
        ToolAnnotations::new()
            .read_only(spec.hints.read_only)
            .destructive(spec.hints.destructive)
            .idempotent(spec.hints.idempotent)
            .open_world(spec.hints.open_world),
    )
}

/// The tool definitions, in catalogue order.
pub fn tool_definitions() -> Vec<Tool> {
    CATALOGUE.iter().map(tool_of).collect()
}

impl Etappe {
    fn new(state: App) -> Self {
        let guards = Arc::new(Guards::new(
            Arc::clone(state.budgets()),
            state.work().redis.clone(),
            &state.work().settings.queue_prefix,
        ));
        Self {
            state,
            guards,
            tools: Arc::new(tool_definitions()),
        }
    }
}

/// Unknown argument names, refused by name with the accepted list; inside an object argument
/// (a tool's `settings`), unknown fields likewise, with the tool that takes the field when
/// another one does. The published schema is the list, so the two cannot disagree.
fn unknown_arguments(spec: &ToolSpec, args: &Map<String, Value>) -> Option<String> {
    let unknown: Vec<String> = args
        .keys()
        .filter(|k| !spec.args.iter().any(|a| a.name == k.as_str()))
        .map(|k| etappe_domain::text::quote(k))
        .collect();
    if unknown.is_empty() {
        return unknown_fields(spec, args);
    }
    let accepted = if spec.args.is_empty() {
        "none (call it with {})".to_owned()
    } else {
        spec.args
            .iter()
            .map(|a| a.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "Unknown argument {} for {}. Accepted: {accepted}. See etappe_help {{\"topic\":\"{}\"}}.",
        unknown.join(", "),
        spec.name,
        spec.name
    ))
}

/// The first object argument of `spec` holding a field its schema does not list.
fn unknown_fields(spec: &ToolSpec, args: &Map<String, Value>) -> Option<String> {
    spec.args.iter().find_map(|arg| {
        let (Some(fields), Some(Value::Object(given))) = (arg.kind.fields(), args.get(arg.name))
        else {
            return None;
        };
        let unknown = given
            .keys()
            .find(|k| !fields.iter().any(|f| f.name == k.as_str()))?;
        let accepted: Vec<&str> = fields.iter().map(|f| f.name).collect();
        let elsewhere = CATALOGUE
            .iter()
            .filter(|other| other.name != spec.name)
            .find(|other| {
                other.args.iter().any(|a| {
                    a.name == arg.name
                        && a.kind
                            .fields()
                            .is_some_and(|f| f.iter().any(|f| f.name == unknown.as_str()))
                })
            })
            .map(|other| format!(" {unknown} is set with {}.", other.name))
            .unwrap_or_default();
        Some(format!(
            "Unknown field {} in {} for {}. Accepted in {}: {}.{elsewhere}",
            etappe_domain::text::quote(unknown),
            arg.name,
            spec.name,
            arg.name,
            accepted.join(", "),
        ))
    })
}

impl ServerHandler for Etappe {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("etappe", env!("CARGO_PKG_VERSION")))
        .with_instructions(catalogue::instructions())
    }

    /// 2025-06-18 and later: 2025-03-26 required JSON-RPC batches, which 2025-06-18 removed
    /// and this server refuses (see [`jsonrpc_gate`]), so it does not claim the older revisions. An
    /// `initialize` asking for one is answered with the newest handshake revision.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(SUPPORTED_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // The same list for everyone, whatever the upstreams' health.
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone())
            .with_ttl_ms(300_000)
            .with_cache_scope(CacheScope::Public))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(spec) = catalogue::spec(&request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown tool {}. Call tools/list or etappe_help.",
                    etappe_domain::text::quote(&request.name)
                ),
                None,
            ));
        };
        let mut args = request.arguments.clone().unwrap_or_default();
        if let Some(message) = unknown_arguments(spec, &args) {
            return Ok(ToolError::Refused(message).into_response());
        }
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let Some(principal) = parts.and_then(|p| p.extensions.get::<Principal>()).cloned() else {
            return Err(McpError::internal_error("no authenticated caller", None));
        };
        if !principal.has(spec.hints.scope()) {
            return Ok(ToolError::Refused(format!(
                "{} needs the {} scope, which this token lacks. Create a token with it.",
                spec.name,
                spec.hints.scope().as_str()
            ))
            .into_response());
        }
        // The client is the credential it calls with: a header it chooses could not be one,
        // or changing it would reset its budget.
        let Some(client) = parts
            .and_then(|p| p.extensions.get::<ClientCredential>())
            .map(|c| c.0.clone())
        else {
            return Err(McpError::internal_error("no authenticated caller", None));
        };
        if let Err(message) = self
            .guards
            .admit(&principal, &client, spec.hints.mutates())
            .await
        {
            return Ok(ToolError::Refused(message).into_response());
        }
        // A retry carrying the person's answer to a confirmation form (see `elicit`).
        let confirms = spec.args.iter().any(|a| a.name == "confirmationToken");
        if confirms {
            match elicit::answer(
                request.request_state.as_deref(),
                request.input_responses.as_ref(),
            ) {
                Some(elicit::Answer::Confirmed(token)) => {
                    args.insert("confirmationToken".into(), Value::String(token));
                }
                Some(elicit::Answer::Refused(token)) => {
                    // Spent, so that the same form cannot be answered twice.
                    self.guards.redeem(&token, "").await;
                    return Ok(ToolError::Refused(
                        "The person declined: nothing was changed. Ask them before trying again."
                            .to_owned(),
                    )
                    .into_response());
                }
                None => {}
            }
        }
        let no_headers = axum::http::HeaderMap::new();
        let caller = etappe_app::Caller {
            principal,
            context: parts
                .and_then(|p| p.extensions.get::<etappe_app::RequestContext>())
                .cloned()
                .unwrap_or_default(),
        };
        let call = call::Call {
            state: &self.state,
            guards: &self.guards,
            caller: &caller,
            client: &client,
            args: &args,
            headers: parts.map_or(&no_headers, |p| &p.headers),
        };
        let outcome = (spec.run)(&call).await;
        if let Ok(challenge) = &outcome
            && confirms
            && elicit::client_can_elicit(&context)
            && let Some(form) = elicit::confirmation_form(challenge)
        {
            return Ok(CallToolResponse::InputRequired(form));
        }
        if spec.hints.mutates() && outcome.is_ok() {
            self.guards.settle(&caller.principal, &client).await;
        }
        Ok(match outcome {
            Ok(value) => CallToolResult::structured(value).into(),
            Err(error) => error.into_response(),
        })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(TOOLS_URI, "tools")
                .with_title("Etappe tool catalogue")
                .with_description("Every tool with its scope, hints, arguments and semantics.")
                .with_mime_type("application/json"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            files::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if files::is_day_file(&request.uri) {
            let parts = context.extensions.get::<axum::http::request::Parts>();
            let Some(principal) = parts.and_then(|p| p.extensions.get::<Principal>()) else {
                return Err(McpError::internal_error("no authenticated caller", None));
            };
            return files::read(&self.state, principal, &request.uri)
                .await
                .map(Into::into);
        }
        if request.uri != TOOLS_URI {
            // SEP-2164: the error names the URI it did not find.
            return Err(McpError::resource_not_found(
                format!(
                    "No resource {}; see resources/list.",
                    etappe_domain::text::quote(&request.uri)
                ),
                Some(
                    json!({"uri": etappe_domain::text::strip_controls(&request.uri)
                    .chars()
                    .take(2048)
                    .collect::<String>()}),
                ),
            ));
        }
        let tools: Vec<Value> = CATALOGUE
            .iter()
            .map(|spec| {
                let mut entry = json!(spec);
                entry["outputSchema"] = (spec.output)();
                entry
            })
            .collect();
        let body = json!({
            "instructions": catalogue::instructions(),
            "tools": tools,
            "errorSchema": schema::error_schema(),
        });
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(body.to_string(), TOOLS_URI).with_mime_type("application/json"),
        ])
        .into())
    }
}

/// Which client a call comes from, for its rate budget and its confirmation tokens: a short
/// digest of the credential it authenticated with (each agent gets its own token).
#[derive(Clone, Debug)]
struct ClientCredential(String);

/// The caller is an agent holding an OAuth access token (not a personal access token): its
/// scopes are judged on the parsed message before the transport, so that a missing scope is
/// a 403 the client can step up from.
#[derive(Clone, Debug)]
struct AgentToken;

/// The challenge of a 401 or 403 from `/mcp` (RFC 6750 §3, RFC 9728 §5.1): where the
/// protected-resource metadata is (absolute: some hosts ignore a relative one) and every
/// scope the tools need, in one challenge.
fn challenge(public: &str, error: Option<&str>) -> HeaderValue {
    let mut parts = Vec::new();
    if let Some(error) = error {
        parts.push(format!("error=\"{error}\""));
    }
    parts.push(format!(
        "resource_metadata=\"{public}/.well-known/oauth-protected-resource/mcp\""
    ));
    parts.push(format!(
        "scope=\"{}\"",
        etappe_app::authorization::ALL_SCOPES
    ));
    HeaderValue::from_str(&format!("Bearer {}", parts.join(", ")))
        .unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

/// Authenticates `/mcp` with a bearer token: an agent's OAuth access token for this
/// resource, or a personal access token (scripts, hosts configured by hand). A session
/// cookie is not a credential here. 401 with a challenge otherwise.
async fn bearer(State(state): State<App>, mut request: Request, next: Next) -> Response {
    let token = crate::auth::bearer_token(request.headers()).map(str::to_owned);
    let public = etappe_app::links::issuer(&state);
    let mut refusal = "send Authorization: Bearer with an OAuth access token (discovery: the resource_metadata of WWW-Authenticate) or a personal access token (etappe token create)";
    let mut agent = false;
    let caller = match token.as_deref() {
        Some(t) if t.starts_with(etappe_app::authorization::ACCESS_TOKEN_PREFIX) => {
            let resource = etappe_app::authorization::AuthorizationService::resource_of(&public);
            match state.authorization().authenticate(t, &resource).await {
                Ok(Some(Ok(found))) => {
                    agent = true;
                    Some(crate::auth::Authenticated {
                        principal: found.principal,
                        credential: etappe_app::budgets::credential_key(
                            &found.grant_id.to_string(),
                        ),
                        session: None,
                    })
                }
                Ok(Some(Err(why))) => {
                    refusal = why.describe();
                    None
                }
                Ok(None) | Err(_) => None,
            }
        }
        Some(t) => crate::auth::authenticate(state.identity(), t)
            .await
            .ok()
            .flatten(),
        None => None,
    };
    let Some(caller) = caller else {
        // Read the body before answering: a connection whose request body was left unread
        // is closed after the answer, and a client already sending its next request on it
        // (the retry after discovery) would meet a disconnect instead.
        let _ = jsonrpc_gate::read_body(request.into_body()).await;
        let error = token.is_some().then_some("invalid_token");
        let mut response = (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_token", "error_description": refusal})),
        )
            .into_response();
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge(&public, error));
        return response;
    };
    if agent {
        request.extensions_mut().insert(AgentToken);
    }
    request.extensions_mut().insert(caller.principal);
    request
        .extensions_mut()
        .insert(ClientCredential(caller.credential));
    next.run(request).await
}

/// For agents: a `tools/call` of a tool whose scope the token lacks is a 403
/// `insufficient_scope` naming the scopes, judged on the parsed message (which [`jsonrpc_gate`]
/// has already proven is one well-formed JSON-RPC message), not on a header a client sets.
/// Tools re-check the scope themselves, so this is a courtesy to step-up, not the guard.
async fn scope_gate(State(state): State<App>, request: Request, next: Next) -> Response {
    if request.extensions().get::<AgentToken>().is_none()
        || request.method() != axum::http::Method::POST
    {
        return next.run(request).await;
    }
    let Some(principal) = request.extensions().get::<Principal>().cloned() else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let Some(bytes) = jsonrpc_gate::read_body(body).await else {
        return jsonrpc_gate::too_large().into_response();
    };
    let needed = serde_json::from_slice::<Value>(&bytes).ok().and_then(|m| {
        (m.get("method").and_then(Value::as_str) == Some("tools/call"))
            .then(|| {
                m.pointer("/params/name")
                    .and_then(Value::as_str)
                    .and_then(catalogue::spec)
            })
            .flatten()
            .map(|spec| spec.hints.scope())
    });
    if let Some(scope) = needed
        && !principal.has(scope)
    {
        let mut response = (
            StatusCode::FORBIDDEN,
            axum::Json(json!({
                "error": "insufficient_scope",
                "error_description": format!("this tool needs the {scope} scope; authorize again with it"),
            })),
        )
            .into_response();
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            challenge(
                &etappe_app::links::issuer(&state),
                Some("insufficient_scope"),
            ),
        );
        return response;
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// The `/mcp` route, authenticated, with the Host/Origin checks configured.
pub fn router(state: App) -> Router {
    let settings = &state.hosts();
    let mut hosts = vec![
        "127.0.0.1".to_owned(),
        "localhost".to_owned(),
        "[::1]".to_owned(),
    ];
    hosts.extend(settings.allowed_hosts.iter().cloned());
    // Loopback pages may call a loopback server (a local inspector); a page of any other
    // origin must be listed: that is what stops DNS rebinding.
    let mut origins = vec![
        "http://127.0.0.1:*".to_owned(),
        "http://localhost:*".to_owned(),
        "http://[::1]:*".to_owned(),
    ];
    origins.extend(settings.allowed_origins.iter().cloned());
    let browsers = Arc::new(cors::Origins::new(origins.clone()));
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    let handler = Etappe::new(state.clone());
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .route_layer(middleware::from_fn_with_state(state.clone(), scope_gate))
        .route_layer(middleware::from_fn(jsonrpc_gate::refuse_malformed))
        .route_layer(middleware::from_fn_with_state(state.clone(), bearer))
        .route_layer(middleware::from_fn_with_state(browsers, cors::cors))
        .with_state(state)
}
