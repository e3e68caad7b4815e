//! The authorization server and the resource server, refusal by refusal, on both backends:
//! discovery documents and the `/mcp` challenge; PKCE missing, `plain` or with a wrong
//! verifier; a code used twice (its tokens die with it), by another client, or for an
//! unregistered redirect; tokens expired, for another audience, revoked; a refresh token
//! replayed (the grant dies); a read-only agent calling a write tool (403
//! `insufficient_scope`); an agent token on REST; client registration's rules; client
//! metadata documents that name another id, redirect, sit on a private address or are too
//! large, or come over https from a CA not trusted; the rate limit of the token endpoint;
//! an unapproved client's errors shown on a page of ours (no open redirector); HSTS under
//! an https public URL.
//!
//! Codes are issued here through the application service (`validate` then `approve`, what
//! the consent page's POST does); the consent page itself, with a session, is exercised in
//! `oauth_consent` below and by the Python SDK's client (`oauth_python.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use etappe_app::authorization::{AuthorizeFailure, AuthorizeParams, s256};
use etappe_app::identity::Scope;
use etappe_tests::{Backend, TestApp};
use serde_json::{Value, json};

const REDIRECT: &str = "http://127.0.0.1:7777/callback";

macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(etappe_tests::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(etappe_tests::Backend::Postgres).await;
                }
            )*
        }
    };
}

both_backends!(
    discovery_documents_name_the_issuer_and_resource_exactly,
    pkce_is_required_and_only_s256,
    a_wrong_verifier_or_another_clients_code_is_refused,
    a_code_used_twice_revokes_what_it_issued,
    unregistered_redirects_and_foreign_resources_are_refused,
    tokens_expire_and_refresh_rotates,
    a_replayed_refresh_token_revokes_the_grant,
    a_token_for_another_audience_is_refused,
    revocation_ends_the_grant_at_once,
    a_read_only_agent_gets_403_insufficient_scope_for_a_write_tool,
    agent_tokens_are_refused_on_rest_and_tokens_still_work_on_mcp,
    registration_accepts_what_hosts_use_and_refuses_the_rest,
    client_metadata_documents_are_fetched_checked_and_cached,
    the_person_lists_and_revokes_agents,
    consent_needs_a_session_and_its_csrf_token,
    bad_requests_get_an_error_page_not_a_redirect,
    a_session_cookie_is_not_a_credential_on_mcp,
    the_agents_page_lists_and_revokes,
    an_unapproved_client_gets_every_error_on_a_page_of_ours,
    an_unknown_client_at_the_token_endpoint_is_invalid_client,
    a_code_exchange_repeats_the_redirect_uri_its_request_named,
);

async fn spawn(backend: Backend) -> Option<TestApp> {
    spawn_with(backend, |_| {}).await
}

async fn spawn_with(
    backend: Backend,
    tweak: impl FnOnce(&mut etappe_services::config::Config),
) -> Option<TestApp> {
    TestApp::spawn_with(backend, tweak).await
}

/// A PKCE verifier and its S256 challenge.
fn pkce() -> (String, String) {
    let verifier = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let challenge = s256(&verifier);
    (verifier, challenge)
}

/// Registers a client (DCR) with `redirect`; answers its id.
async fn register(app: &TestApp, redirect: &str) -> String {
    let answer = app
        .client
        .post(format!("{}/oauth/register", app.base))
        .json(&json!({"client_name": "Test agent", "redirect_uris": [redirect]}))
        .send()
        .await
        .expect("register");
    assert_eq!(answer.status(), 201);
    let body: Value = answer.json().await.expect("json");
    assert_eq!(body["token_endpoint_auth_method"], "none");
    body["client_id"].as_str().expect("client_id").to_owned()
}

fn params(client_id: &str, challenge: &str) -> AuthorizeParams {
    AuthorizeParams {
        response_type: Some("code".into()),
        client_id: Some(client_id.into()),
        redirect_uri: Some(REDIRECT.into()),
        state: Some("st-1".into()),
        code_challenge: Some(challenge.into()),
        code_challenge_method: Some("S256".into()),
        scope: None,
        resource: None,
    }
}

/// A new person who approves `params`: answers the redirect the consent sends the browser to.
async fn approve(app: &TestApp, params: &AuthorizeParams) -> url::Url {
    let user = app
        .state
        .identity()
        .ensure_user(&format!("rider-{}@example.org", uuid::Uuid::now_v7()))
        .await
        .expect("user");
    let request = app
        .state
        .authorization()
        .validate(params, &app.base)
        .await
        .expect("a valid request");
    let to = app
        .state
        .authorization()
        .approve(user, &request, &app.base)
        .await
        .expect("approved");
    url::Url::parse(&to).expect("redirect")
}

fn query(url: &url::Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A code for a new client and person, with the verifier.
async fn code(app: &TestApp, scope: Option<&str>) -> (String, String, String) {
    let client = register(app, REDIRECT).await;
    let (verifier, challenge) = pkce();
    let mut p = params(&client, &challenge);
    p.scope = scope.map(str::to_owned);
    let back = approve(app, &p).await;
    assert_eq!(query(&back, "state").as_deref(), Some("st-1"));
    assert_eq!(query(&back, "iss").as_deref(), Some(app.base.as_str()));
    (client, query(&back, "code").expect("code"), verifier)
}

/// `POST /oauth/token` with `form`: status and body.
async fn token(app: &TestApp, form_pairs: &[(&str, &str)]) -> (u16, Value) {
    let answer = app
        .client
        .post(format!("{}/oauth/token", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(form_pairs))
        .send()
        .await
        .expect("token");
    let status = answer.status().as_u16();
    assert_eq!(
        answer
            .headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    (status, answer.json().await.expect("json"))
}

async fn exchange(app: &TestApp, client: &str, code: &str, verifier: &str) -> (u16, Value) {
    token(
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier),
        ],
    )
    .await
}

async fn tokens(app: &TestApp, scope: Option<&str>) -> (String, Value) {
    let (client, code, verifier) = code(app, scope).await;
    let (status, body) = exchange(app, &client, &code, &verifier).await;
    assert_eq!(status, 200, "{body}");
    (client, body)
}

/// A `tools/call` on `/mcp` with `token`, to the host `base`: status, headers, body.
async fn call_at(
    app: &TestApp,
    base: &str,
    token: &str,
    tool: &str,
    args: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let answer = app
        .client
        .post(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": args}})
                .to_string(),
        )
        .send()
        .await
        .expect("mcp");
    let status = answer.status().as_u16();
    let headers = answer.headers().clone();
    let body = answer.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

async fn call(
    app: &TestApp,
    token: &str,
    tool: &str,
    args: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    call_at(app, &app.base, token, tool, args).await
}

fn challenge(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

async fn discovery_documents_name_the_issuer_and_resource_exactly(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    // The root would describe the origin (RFC 9728 §3.3), which is not a protected resource.
    let root = app
        .client
        .get(format!("{}/.well-known/oauth-protected-resource", app.base))
        .send()
        .await
        .expect("root prm");
    assert_eq!(root.status(), 404);
    for path in ["/.well-known/oauth-protected-resource/mcp"] {
        let answer = app
            .client
            .get(format!("{}{path}", app.base))
            .send()
            .await
            .expect("prm");
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.headers()["access-control-allow-origin"], "*");
        let prm: Value = answer.json().await.expect("json");
        assert_eq!(prm["resource"], format!("{}/mcp", app.base));
        assert_eq!(prm["authorization_servers"], json!([app.base]));
        assert_eq!(
            prm["scopes_supported"],
            json!(["trips:read", "trips:write"])
        );
    }
    let answer = app
        .client
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            app.base
        ))
        .send()
        .await
        .expect("as");
    assert_eq!(answer.headers()["access-control-allow-origin"], "*");
    let meta: Value = answer.json().await.expect("json");
    assert_eq!(meta["issuer"], app.base.as_str());
    assert!(!app.base.ends_with('/'));
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        meta["token_endpoint_auth_methods_supported"],
        json!(["none"])
    );
    assert_eq!(meta["client_id_metadata_document_supported"], true);
    assert_eq!(meta["authorization_response_iss_parameter_supported"], true);
    assert_eq!(meta["response_types_supported"], json!(["code"]));
    assert_eq!(
        meta["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
    for key in [
        "authorization_endpoint",
        "token_endpoint",
        "registration_endpoint",
        "revocation_endpoint",
    ] {
        assert!(
            meta[key].as_str().is_some_and(|u| u.starts_with(&app.base)),
            "{key}"
        );
    }
    // A preflight from a browser-based client is answered.
    let preflight = app
        .client
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/oauth/token", app.base),
        )
        .header("origin", "https://inspector.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .expect("preflight");
    assert!(preflight.status().is_success());
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    // The challenge of /mcp names the metadata by its absolute URL, and every scope.
    let (status, headers, _) = call(&app, "", "list_trips", json!({})).await;
    assert_eq!(status, 401);
    assert_eq!(
        challenge(&headers),
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"trips:read trips:write\"",
            app.base
        )
    );
}

async fn pkce_is_required_and_only_s256(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let client = register(&app, REDIRECT).await;
    let (_, challenge) = pkce();
    let page = |p: AuthorizeParams| {
        let app = &app;
        async move {
            match app.state.authorization().validate(&p, &app.base).await {
                Err(AuthorizeFailure::Page(e)) => e.to_string(),
                other => panic!("expected an error page, got {other:?}"),
            }
        }
    };
    let mut missing = params(&client, &challenge);
    missing.code_challenge = None;
    missing.code_challenge_method = None;
    assert!(page(missing).await.contains("code_challenge"));
    let mut plain = params(&client, &challenge);
    plain.code_challenge_method = Some("plain".into());
    assert!(page(plain).await.contains("plain"));
    let mut absent_method = params(&client, &challenge);
    absent_method.code_challenge_method = None;
    assert!(page(absent_method).await.contains("plain"));
    // A code issued without a verifier cannot be exchanged either.
    let (client, code, _) = code(&app, None).await;
    let (status, body) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("redirect_uri", REDIRECT),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request")),
        "{body}"
    );
    assert!(
        body["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("code_verifier")
    );
}

async fn a_wrong_verifier_or_another_clients_code_is_refused(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (client, code, verifier) = code(&app, None).await;
    let (_, other_verifier) = pkce();
    let (status, body) = exchange(&app, &client, &code, &format!("{other_verifier}x")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    let other_client = register(&app, REDIRECT).await;
    let (status, body) = exchange(&app, &other_client, &code, &verifier).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    assert!(
        body["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("another client")
    );
    // Neither refusal spent the code: the rightful client still redeems it.
    let (status, body) = exchange(&app, &client, &code, &verifier).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["access_token"]
            .as_str()
            .is_some_and(|t| t.starts_with("eta_"))
    );
    assert!(
        body["refresh_token"]
            .as_str()
            .is_some_and(|t| t.starts_with("etr_"))
    );
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 900);
    assert_eq!(body["scope"], "trips:read trips:write");
}

async fn a_code_used_twice_revokes_what_it_issued(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (client, code, verifier) = code(&app, None).await;
    let (status, first) = exchange(&app, &client, &code, &verifier).await;
    assert_eq!(status, 200);
    let access = first["access_token"].as_str().expect("access");
    let (status, _, _) = call(&app, access, "list_trips", json!({})).await;
    assert_eq!(status, 200);
    let (status, again) = exchange(&app, &client, &code, &verifier).await;
    assert_eq!(
        (status, again["error"].as_str()),
        (400, Some("invalid_grant")),
        "{again}"
    );
    let (status, headers, _) = call(&app, access, "list_trips", json!({})).await;
    assert_eq!(
        status, 401,
        "the first exchange's access token dies with the code"
    );
    assert!(challenge(&headers).contains("invalid_token"));
    let (status, body) = token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", first["refresh_token"].as_str().expect("r")),
            ("client_id", &client),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

async fn unregistered_redirects_and_foreign_resources_are_refused(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let client = register(&app, REDIRECT).await;
    let (_, challenge) = pkce();
    let mut p = params(&client, &challenge);
    p.redirect_uri = Some("http://127.0.0.1:7777/elsewhere".into());
    assert!(matches!(
        app.state.authorization().validate(&p, &app.base).await,
        Err(AuthorizeFailure::Page(_))
    ));
    p.redirect_uri = Some("https://attacker.example/callback".into());
    assert!(matches!(
        app.state.authorization().validate(&p, &app.base).await,
        Err(AuthorizeFailure::Page(_))
    ));
    // A loopback redirect may change its port (RFC 8252 §7.3).
    p.redirect_uri = Some("http://127.0.0.1:40123/callback".into());
    assert!(
        app.state
            .authorization()
            .validate(&p, &app.base)
            .await
            .is_ok()
    );
    // An unknown client is a page too.
    let unknown = params("dcr_0000", &challenge);
    assert!(matches!(
        app.state
            .authorization()
            .validate(&unknown, &app.base)
            .await,
        Err(AuthorizeFailure::Page(_))
    ));
    // A resource that is not /mcp: a page for no one in particular and for a person who
    // has not approved the client; back to the client as invalid_target once they have.
    let mut foreign = params(&client, &challenge);
    foreign.resource = Some("https://other.example/mcp".into());
    assert!(matches!(
        app.state.authorization().validate(&foreign, &app.base).await,
        Err(AuthorizeFailure::Page(e)) if e.code() == "invalid_target"
    ));
    let person = app
        .state
        .identity()
        .ensure_user(&format!("rider-{}@example.org", uuid::Uuid::now_v7()))
        .await
        .expect("user");
    assert!(matches!(
        app.state
            .authorization()
            .validate_as(&foreign, &app.base, Some(person))
            .await,
        Err(AuthorizeFailure::Page(_))
    ));
    let request = app
        .state
        .authorization()
        .validate(&params(&client, &challenge), &app.base)
        .await
        .expect("valid");
    app.state
        .authorization()
        .approve(person, &request, &app.base)
        .await
        .expect("approved");
    match app
        .state
        .authorization()
        .validate_as(&foreign, &app.base, Some(person))
        .await
    {
        Err(AuthorizeFailure::Redirect { url, error }) => {
            assert_eq!(error.code(), "invalid_target");
            let url = url::Url::parse(&url).expect("url");
            assert_eq!(query(&url, "error").as_deref(), Some("invalid_target"));
            assert_eq!(query(&url, "state").as_deref(), Some("st-1"));
        }
        other => panic!("{other:?}"),
    }
    // Defaults: no scope is both, no resource is /mcp.
    let valid = app
        .state
        .authorization()
        .validate(&params(&client, &challenge), &app.base)
        .await
        .expect("valid");
    assert_eq!(valid.scopes, Scope::ALL.to_vec());
    assert_eq!(valid.resource, format!("{}/mcp", app.base));
    assert!(valid.loopback_only);
}

async fn tokens_expire_and_refresh_rotates(backend: Backend) {
    let Some(app) = spawn_with(backend, |c| c.oauth.access_ttl_secs = 1).await else {
        return;
    };
    let (client, first) = tokens(&app, None).await;
    let access = first["access_token"].as_str().expect("access");
    assert_eq!(call(&app, access, "list_trips", json!({})).await.0, 200);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (status, headers, body) = call(&app, access, "list_trips", json!({})).await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge(&headers).contains("invalid_token"));
    assert!(
        body["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("expired")
    );
    let (status, second) = token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", first["refresh_token"].as_str().expect("r")),
            ("client_id", &client),
        ],
    )
    .await;
    assert_eq!(status, 200, "{second}");
    assert_ne!(second["refresh_token"], first["refresh_token"], "rotated");
    let access = second["access_token"].as_str().expect("access");
    assert_eq!(call(&app, access, "list_trips", json!({})).await.0, 200);
    // A narrower scope may be asked on refresh; a wider one may not.
    let (status, narrower) = token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            (
                "refresh_token",
                second["refresh_token"].as_str().expect("r"),
            ),
            ("client_id", &client),
            ("scope", "trips:read"),
        ],
    )
    .await;
    assert_eq!(
        (status, narrower["scope"].as_str()),
        (200, Some("trips:read")),
        "{narrower}"
    );
}

async fn a_replayed_refresh_token_revokes_the_grant(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (client, first) = tokens(&app, None).await;
    let old = first["refresh_token"].as_str().expect("r").to_owned();
    let refresh = |t: String| {
        let app = &app;
        let client = client.clone();
        async move {
            token(
                app,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &t),
                    ("client_id", &client),
                ],
            )
            .await
        }
    };
    let (status, second) = refresh(old.clone()).await;
    assert_eq!(status, 200);
    let (status, replay) = refresh(old).await;
    assert_eq!(
        (status, replay["error"].as_str()),
        (400, Some("invalid_grant")),
        "{replay}"
    );
    // The whole grant is gone: the new refresh token and the new access token too.
    let (status, _) = refresh(second["refresh_token"].as_str().expect("r").to_owned()).await;
    assert_eq!(status, 400);
    assert_eq!(
        call(
            &app,
            second["access_token"].as_str().expect("a"),
            "list_trips",
            json!({})
        )
        .await
        .0,
        401
    );
    // Another client's refresh token is refused.
    let (_, other) = tokens(&app, None).await;
    let (status, body) = refresh(other["refresh_token"].as_str().expect("r").to_owned()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

async fn a_token_for_another_audience_is_refused(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (client, first, verifier) = code(&app, None).await;
    let record = app
        .state
        .authorization()
        .store()
        .code(&hex_digest(&first))
        .await
        .expect("code")
        .expect("stored");
    let (status, _) = exchange(&app, &client, &first, &verifier).await;
    assert_eq!(status, 200);
    // A live token of the same grant, issued for another resource (as another server on
    // the same database would): refused here.
    let foreign = format!("eta_{}", "ab".repeat(32));
    app.state
        .authorization()
        .store()
        .put_token(&etappe_app::identity::oauth::NewToken {
            digest: &hex_digest(&foreign),
            kind: "access",
            grant_id: record.grant_id,
            client_id: &client,
            user_id: record.user_id,
            scopes: "trips:read trips:write",
            audience: "https://other.example/mcp",
            expires_at: chrono::Utc::now() + chrono::Duration::minutes(5),
        })
        .await
        .expect("token");
    let (status, headers, body) = call(&app, &foreign, "list_trips", json!({})).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        body["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("another resource")
    );
    assert!(challenge(&headers).contains("error=\"invalid_token\""));
    // At authorization, a foreign resource is invalid_target (see above), and at the token
    // endpoint too.
    let (client, second, verifier) = code(&app, None).await;
    let (status, body) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &second),
            ("client_id", &client),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
            ("resource", "https://other.example/mcp"),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_target")),
        "{body}"
    );
}

async fn revocation_ends_the_grant_at_once(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (client, body) = tokens(&app, None).await;
    let access = body["access_token"].as_str().expect("a");
    assert_eq!(call(&app, access, "list_trips", json!({})).await.0, 200);
    let answer = app
        .client
        .post(format!("{}/oauth/revoke", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("token", body["refresh_token"].as_str().expect("r")),
            ("client_id", &client),
        ]))
        .send()
        .await
        .expect("revoke");
    assert_eq!(answer.status(), 200);
    assert_eq!(call(&app, access, "list_trips", json!({})).await.0, 401);
    // An unknown token is answered the same (RFC 7009 §2.2).
    let answer = app
        .client
        .post(format!("{}/oauth/revoke", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", "eta_unknown")]))
        .send()
        .await
        .expect("revoke");
    assert_eq!(answer.status(), 200);
}

async fn a_read_only_agent_gets_403_insufficient_scope_for_a_write_tool(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (_, body) = tokens(&app, Some("trips:read")).await;
    let access = body["access_token"].as_str().expect("a");
    assert_eq!(call(&app, access, "list_trips", json!({})).await.0, 200);
    let (status, headers, body) = call(
        &app,
        access,
        "create_trip",
        json!({"sourceUrl": etappe_tests::UNFETCHED_GPX, "title": "x"}),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"], "insufficient_scope");
    let c = challenge(&headers);
    assert!(c.contains("error=\"insufficient_scope\""), "{c}");
    assert!(c.contains("scope=\"trips:read trips:write\""), "{c}");
    assert!(
        c.contains(&format!(
            "resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            app.base
        )),
        "{c}"
    );
}

async fn agent_tokens_are_refused_on_rest_and_tokens_still_work_on_mcp(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (_, body) = tokens(&app, None).await;
    let access = body["access_token"].as_str().expect("a");
    let answer = app
        .client
        .get(format!("{}/trips", app.base))
        .bearer_auth(access)
        .send()
        .await
        .expect("rest");
    assert_eq!(answer.status(), 401);
    let problem: Value = answer.json().await.expect("problem");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("personal access token"),
        "{problem}"
    );
    // A personal access token keeps working on both.
    let pat = app.user().await;
    assert_eq!(call(&app, &pat, "list_trips", json!({})).await.0, 200);
    let answer = app
        .client
        .get(format!("{}/trips", app.base))
        .bearer_auth(&pat)
        .send()
        .await
        .expect("rest");
    assert_eq!(answer.status(), 200);
}

async fn registration_accepts_what_hosts_use_and_refuses_the_rest(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let post = |body: Value| {
        let app = &app;
        async move {
            let answer = app
                .client
                .post(format!("{}/oauth/register", app.base))
                .json(&body)
                .send()
                .await
                .expect("register");
            let status = answer.status().as_u16();
            assert_eq!(answer.headers()["access-control-allow-origin"], "*");
            (status, answer.json::<Value>().await.expect("json"))
        }
    };
    for uris in [
        json!(["https://claude.ai/api/mcp/auth_callback"]),
        json!([
            "http://localhost:6274/oauth/callback",
            "http://127.0.0.1:6276/oauth/callback"
        ]),
        json!(["cursor://anysphere.cursor-mcp/oauth/callback"]),
    ] {
        let (status, body) =
            post(json!({"redirect_uris": uris, "client_name": "<b>Host</b>"})).await;
        assert_eq!(status, 201, "{body}");
        assert_eq!(body["redirect_uris"], uris);
    }
    // A native application registers its private-use scheme; Cursor's own registration
    // (three URIs, no application_type) is taken as native; a web one as web.
    for (metadata, kind) in [
        (
            json!({"redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback"], "application_type": "native"}),
            "native",
        ),
        (
            json!({"client_name": "Cursor", "token_endpoint_auth_method": "none", "redirect_uris": [
                "cursor://anysphere.cursor-mcp/oauth/callback",
                "https://www.cursor.com/agents/mcp/oauth/callback",
                "http://localhost:8787/callback"
            ]}),
            "native",
        ),
        (
            json!({"redirect_uris": ["http://127.0.0.1:33418", "https://vscode.dev/redirect"]}),
            "web",
        ),
    ] {
        let (status, body) = post(metadata.clone()).await;
        assert_eq!(status, 201, "{metadata} → {body}");
        assert_eq!(body["application_type"], kind, "{body}");
    }
    for (body, error) in [
        (
            json!({"redirect_uris": ["http://evil.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (json!({"client_name": "no uris"}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": ["javascript:alert(1)"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]}),
            "invalid_client_metadata",
        ),
        (json!(["not an object"]), "invalid_client_metadata"),
        (
            json!({"redirect_uris": ["https://user@claude.ai/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["http://user:pw@127.0.0.1:7777/callback"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["http:/127.0.0.1:7777/callback"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://*.example.org/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback"], "application_type": "web"}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": [REDIRECT], "application_type": "desktop"}),
            "invalid_client_metadata",
        ),
    ] {
        let (status, answer) = post(body.clone()).await;
        assert_eq!(
            (status, answer["error"].as_str()),
            (400, Some(error)),
            "{body} → {answer}"
        );
    }
}

/// A local server of client metadata documents: `/good`, `/other-id`, `/redirect`,
/// `/large`; counts the requests.
async fn document_server() -> (String, Arc<AtomicUsize>) {
    use axum::routing::get;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    let b = base.clone();
    let router = axum::Router::new()
        .route(
            "/good",
            get({
                let b = b.clone();
                move || async move {
                    (
                        [("cache-control", "max-age=600")],
                        axum::Json(json!({"client_id": format!("{b}/good"), "client_name": "Document client", "redirect_uris": [REDIRECT]})),
                    )
                }
            }),
        )
        .route(
            "/other-id",
            get(|| async { axum::Json(json!({"client_id": "https://someone.else/doc", "client_name": "x", "redirect_uris": [REDIRECT]})) }),
        )
        .route(
            "/redirect",
            get({
                let b = b.clone();
                move || async move { (axum::http::StatusCode::FOUND, [("location", format!("{b}/good"))]) }
            }),
        )
        .route(
            "/web-scheme",
            get({
                let b = b.clone();
                move || async move {
                    axum::Json(json!({"client_id": format!("{b}/web-scheme"), "application_type": "web", "redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback"]}))
                }
            }),
        )
        .route(
            "/credentials",
            get({
                let b = b.clone();
                move || async move {
                    axum::Json(json!({"client_id": format!("{b}/credentials"), "redirect_uris": ["http://user@127.0.0.1:7777/callback"]}))
                }
            }),
        )
        .route(
            "/native",
            get({
                let b = b.clone();
                move || async move {
                    axum::Json(json!({"client_id": format!("{b}/native"), "application_type": "native", "redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback"]}))
                }
            }),
        )
        .route(
            "/large",
            get({
                move || async move {
                    axum::Json(json!({"client_id": format!("{b}/large"), "client_name": "x".repeat(6000), "redirect_uris": [REDIRECT]}))
                }
            }),
        )
        .layer(axum::middleware::from_fn(move |r: axum::extract::Request, n: axum::middleware::Next| {
            let counted = Arc::clone(&counted);
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                n.run(r).await
            }
        }));
    tokio::spawn(async move { axum::serve(listener, router).await });
    (base, hits)
}

async fn client_metadata_documents_are_fetched_checked_and_cached(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (docs, hits) = document_server().await;
    let (_, challenge) = pkce();
    let auth = &app.state.authorization();
    let good = params(&format!("{docs}/good"), &challenge);
    let valid = auth
        .validate(&good, &app.base)
        .await
        .expect("a good document");
    assert_eq!(valid.client.client_name, "Document client");
    assert_eq!(valid.client.kind, "cimd");
    assert!(auth.validate(&good, &app.base).await.is_ok());
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the second request read the cache"
    );
    let base = app.base.clone();
    let challenge = &challenge;
    let base = &base;
    let refused = |id: String| async move {
        match auth.validate(&params(&id, challenge), base).await {
            Err(AuthorizeFailure::Page(e)) => e.to_string(),
            other => panic!("{id}: {other:?}"),
        }
    };
    assert!(
        refused(format!("{docs}/other-id"))
            .await
            .contains("another client_id")
    );
    assert!(
        refused(format!("{docs}/redirect"))
            .await
            .contains("redirect")
    );
    assert!(
        refused(format!("{docs}/large"))
            .await
            .contains("larger than")
    );
    assert!(
        refused(format!("{docs}/web-scheme"))
            .await
            .contains("application_type")
    );
    assert!(
        refused(format!("{docs}/credentials"))
            .await
            .contains("credentials")
    );
    // A document that declares a native application may name its private-use scheme.
    let mut native = params(&format!("{docs}/native"), challenge);
    native.redirect_uri = Some("cursor://anysphere.cursor-mcp/oauth/callback".into());
    assert!(auth.validate(&native, base).await.is_ok());
    assert!(
        refused("https://10.0.0.1/client.json".into())
            .await
            .contains("private address")
    );
    assert!(
        refused("https://192.168.1.1/client.json".into())
            .await
            .contains("private address")
    );
    // Failures are not cached: the next request asks again.
    let before = hits.load(Ordering::SeqCst);
    let _ = refused(format!("{docs}/other-id")).await;
    assert_eq!(hits.load(Ordering::SeqCst), before + 1);
}

async fn the_person_lists_and_revokes_agents(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (client, code, verifier) = code(&app, None).await;
    let grant_user = app
        .state
        .authorization()
        .store()
        .code(&hex_digest(&code))
        .await
        .expect("code")
        .expect("stored")
        .user_id;
    let (_, body) = exchange(&app, &client, &code, &verifier).await;
    let access = body["access_token"].as_str().expect("a");
    let agents = app
        .state
        .authorization()
        .agents(grant_user)
        .await
        .expect("agents");
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0].client_name, "Test agent");
    assert_eq!(agents[0].client_id, client);
    assert!(
        app.state
            .authorization()
            .revoke_agent(grant_user, agents[0].grant_id)
            .await
            .expect("revoke")
    );
    assert_eq!(call(&app, access, "list_trips", json!({})).await.0, 401);
    assert!(
        app.state
            .authorization()
            .agents(grant_user)
            .await
            .expect("agents")
            .is_empty()
    );
}

fn hex_digest(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

/// A form-encoded body.
fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// The authorize URL of `client` with a challenge.
fn authorize_url(app: &TestApp, client: &str, challenge: &str, extra: &[(&str, &str)]) -> String {
    let mut url = url::Url::parse(&format!("{}/oauth/authorize", app.base)).expect("url");
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", client)
            .append_pair("redirect_uri", REDIRECT)
            .append_pair("state", "st-2")
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256");
        for (k, v) in extra {
            q.append_pair(k, v);
        }
    }
    url.to_string()
}

/// The hidden fields of the consent form.
fn form_fields(html: &str) -> Vec<(String, String)> {
    html.split("<input type=\"hidden\" ")
        .skip(1)
        .map(|chunk| {
            let name = chunk
                .split("name=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or_default();
            let value = chunk
                .split("value=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or_default();
            (
                name.to_owned(),
                value
                    .replace("&amp;", "&")
                    .replace("&quot;", "\"")
                    .replace("&#39;", "'")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">"),
            )
        })
        .collect()
}

async fn decide(
    app: &TestApp,
    browser: &etappe_tests::browser::Browser,
    fields: &[(String, String)],
    decision: &str,
    origin: &str,
) -> reqwest::Response {
    let mut pairs: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    pairs.push(("decision", decision));
    etappe_tests::browser::no_redirects()
        .post(format!("{}/oauth/authorize", app.base))
        .header("cookie", &browser.cookie)
        .header("origin", origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&pairs))
        .send()
        .await
        .expect("decide")
}

async fn consent_needs_a_session_and_its_csrf_token(backend: Backend) {
    use etappe_tests::browser::{log_in, no_redirects};
    let Some(app) = spawn(backend).await else {
        return;
    };
    let answer = app
        .client
        .post(format!("{}/oauth/register", app.base))
        .json(
            &json!({"client_name": "<script>alert(1)</script> Agent", "redirect_uris": [REDIRECT]}),
        )
        .send()
        .await
        .expect("register");
    let client = answer.json::<Value>().await.expect("json")["client_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let (verifier, challenge) = pkce();
    let url = authorize_url(&app, &client, &challenge, &[]);
    // No session: to the login page, and back here after it.
    let anonymous = no_redirects().get(&url).send().await.expect("authorize");
    assert_eq!(anonymous.status(), 302);
    let location = anonymous.headers()["location"]
        .to_str()
        .expect("location")
        .to_owned();
    assert!(
        location.starts_with("/login?next=%2Foauth%2Fauthorize%3F"),
        "{location}"
    );
    let browser = log_in(&app, &format!("rider-{}@example.org", uuid::Uuid::now_v7())).await;
    let page = no_redirects()
        .get(&url)
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("consent");
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(
        csp.contains("frame-ancestors 'none'") && !csp.contains("script-src"),
        "{csp}"
    );
    // The form posts here, and its answer may lead to the client's redirect origin only.
    assert!(
        csp.contains("form-action 'self' http://127.0.0.1:7777;"),
        "{csp}"
    );
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let html = page.text().await.expect("html");
    assert!(
        !html.contains("<script"),
        "the client's name is text: {html}"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; Agent"));
    assert!(html.contains(&client));
    assert!(html.contains("127.0.0.1"));
    assert!(html.contains("localhost"), "the loopback warning");
    assert!(html.contains("trips:read") && html.contains("trips:write"));
    let fields = form_fields(&html);
    assert!(
        fields
            .iter()
            .any(|(k, v)| k == "csrf" && *v == browser.csrf),
        "{fields:?}"
    );
    // Without the session's token, or from another origin: refused, nothing issued.
    let without: Vec<_> = fields
        .iter()
        .filter(|(k, _)| k != "csrf")
        .cloned()
        .collect();
    assert_eq!(
        decide(&app, &browser, &without, "approve", &app.base)
            .await
            .status(),
        403
    );
    let mut forged = without.clone();
    forged.push(("csrf".into(), "forged".into()));
    assert_eq!(
        decide(&app, &browser, &forged, "approve", &app.base)
            .await
            .status(),
        403
    );
    assert_eq!(
        decide(&app, &browser, &fields, "approve", "https://evil.example")
            .await
            .status(),
        403
    );
    // Denied: back to the client with access_denied, state and iss; a POST's answer is a
    // 303 (RFC 9700 §4.12: a 307 would repeat the form, CSRF token included, at the client).
    let denied = decide(&app, &browser, &fields, "deny", &app.base).await;
    assert_eq!(denied.status(), 303);
    let to =
        url::Url::parse(denied.headers()["location"].to_str().expect("location")).expect("url");
    assert_eq!(query(&to, "error").as_deref(), Some("access_denied"));
    assert_eq!(query(&to, "state").as_deref(), Some("st-2"));
    assert_eq!(query(&to, "iss").as_deref(), Some(app.base.as_str()));
    assert!(query(&to, "code").is_none());
    // Approved: a code, the state and the issuer.
    let approved = decide(&app, &browser, &fields, "approve", &app.base).await;
    assert_eq!(approved.status(), 303);
    let to =
        url::Url::parse(approved.headers()["location"].to_str().expect("location")).expect("url");
    assert!(to.as_str().starts_with(REDIRECT));
    assert_eq!(query(&to, "state").as_deref(), Some("st-2"));
    assert_eq!(query(&to, "iss").as_deref(), Some(app.base.as_str()));
    let code = query(&to, "code").expect("code");
    let (status, body) = exchange(&app, &client, &code, &verifier).await;
    assert_eq!(status, 200, "{body}");
    // The person sees the agent, and the grant in the audit trail.
    let agents: Value = no_redirects()
        .get(format!("{}/users/me/agents", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("agents")
        .json()
        .await
        .expect("json");
    let items = agents["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{agents}");
    assert_eq!(items[0]["clientId"], client.as_str());
    let me: Value = no_redirects()
        .get(format!("{}/users/me", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    assert_eq!(me["agents"].as_array().map(Vec::len), Some(1), "{me}");
    let audit: Value = no_redirects()
        .get(format!("{}/users/me/audit", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("audit")
        .json()
        .await
        .expect("json");
    assert!(audit.to_string().contains("agent_authorized"), "{audit}");
    // Revoked from the list (a cookie write: Origin and X-CSRF-Token), the token dies.
    let grant = items[0]["grantId"].as_str().expect("grant");
    let path = format!("{}/users/me/agents/{grant}", app.base);
    let refused = no_redirects()
        .delete(&path)
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("delete");
    assert_eq!(
        refused.status(),
        403,
        "a cookie write without the CSRF token"
    );
    let revoked = no_redirects()
        .delete(&path)
        .header("cookie", &browser.cookie)
        .header("origin", &app.base)
        .header("x-csrf-token", &browser.csrf)
        .send()
        .await
        .expect("delete");
    assert_eq!(revoked.status(), 204);
    assert_eq!(
        call(
            &app,
            body["access_token"].as_str().expect("a"),
            "list_trips",
            json!({})
        )
        .await
        .0,
        401
    );
    let again = no_redirects()
        .delete(&path)
        .header("cookie", &browser.cookie)
        .header("origin", &app.base)
        .header("x-csrf-token", &browser.csrf)
        .send()
        .await
        .expect("delete");
    assert_eq!(again.status(), 404);
}

async fn bad_requests_get_an_error_page_not_a_redirect(backend: Backend) {
    use etappe_tests::browser::{log_in, no_redirects};
    let Some(app) = spawn(backend).await else {
        return;
    };
    let client = register(&app, REDIRECT).await;
    let browser = log_in(&app, &format!("rider-{}@example.org", uuid::Uuid::now_v7())).await;
    let (_, challenge) = pkce();
    let get = |url: String| {
        let cookie = browser.cookie.clone();
        async move {
            no_redirects()
                .get(url)
                .header("cookie", cookie)
                .send()
                .await
                .expect("authorize")
        }
    };
    let plain = authorize_url(&app, &client, &challenge, &[])
        .replace("code_challenge_method=S256", "code_challenge_method=plain");
    let no_pkce = authorize_url(&app, &client, &challenge, &[])
        .replace(&format!("code_challenge={challenge}"), "x=1");
    let unknown = authorize_url(&app, "dcr_unknown", &challenge, &[]);
    let elsewhere =
        authorize_url(&app, &client, &challenge, &[]).replace("7777%2Fcallback", "7777%2Fother");
    for (url, words) in [
        (plain, "plain"),
        (no_pkce, "code_challenge"),
        (unknown, "client_id"),
        (elsewhere, "redirect_uri"),
    ] {
        let answer = get(url.clone()).await;
        assert_eq!(answer.status(), 400, "{url}");
        assert!(answer.headers().get("location").is_none(), "{url}");
        assert_eq!(answer.headers()["x-frame-options"], "DENY");
        let html = answer.text().await.expect("page");
        assert!(html.contains(words), "{url}: {html}");
    }
    // A foreign resource of a client the person has not approved: a page too (the
    // redirect is registered, but anyone may register one).
    let foreign_url = authorize_url(
        &app,
        &client,
        &challenge,
        &[("resource", "https://other.example/mcp")],
    );
    let foreign = get(foreign_url.clone()).await;
    assert_eq!(foreign.status(), 400);
    assert!(foreign.headers().get("location").is_none());
    assert!(
        foreign
            .text()
            .await
            .expect("page")
            .contains("invalid_target")
    );
    // Once the person approved the client, its errors go back to it as invalid_target.
    let consent = get(authorize_url(&app, &client, &challenge, &[])).await;
    assert_eq!(consent.status(), 200);
    let fields = form_fields(&consent.text().await.expect("html"));
    let approved = decide(&app, &browser, &fields, "approve", &app.base).await;
    assert_eq!(approved.status(), 303);
    let foreign = get(foreign_url).await;
    assert_eq!(foreign.status(), 302);
    assert!(
        foreign.headers()["location"]
            .to_str()
            .expect("l")
            .contains("error=invalid_target")
    );
}

async fn a_session_cookie_is_not_a_credential_on_mcp(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let browser =
        etappe_tests::browser::log_in(&app, &format!("rider-{}@example.org", uuid::Uuid::now_v7()))
            .await;
    let answer = app
        .client
        .post(format!("{}/mcp", app.base))
        .header("cookie", &browser.cookie)
        .header("x-csrf-token", &browser.csrf)
        .header("origin", &app.base)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("mcp");
    assert_eq!(answer.status(), 401);
    assert!(challenge(answer.headers()).contains("resource_metadata="));
    // The same cookie does work on REST.
    let rest = app
        .client
        .get(format!("{}/trips", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("rest");
    assert_eq!(rest.status(), 200);
}

/// Two API replicas on PostgreSQL and Redis, one public URL: a code issued on one is
/// redeemed on the other, tokens hold on both, a refresh replayed on the other replica
/// revokes the grant everywhere, and the token endpoint's rate limit is one budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_codes_tokens_grants_and_rate_limits() {
    let Some(servers) = etappe_tests::Servers::from_env() else {
        return;
    };
    let _servers = etappe_tests::servers_shared().await;
    // The public URL both replicas answer as (a loopback address: nothing is fetched from it).
    let public = "http://127.0.0.1:9";
    let spawn = || {
        TestApp::spawn_with(Backend::Postgres, |c| {
            servers.configure(c);
            c.public_url = Some(public.into());
            c.oauth.tokens_per_minute = 12;
        })
    };
    let a = spawn().await.expect("replica a");
    let b = spawn().await.expect("replica b");
    let client = register(&a, REDIRECT).await;
    let (verifier, challenge) = pkce();
    let user = a
        .state
        .identity()
        .ensure_user(&format!("rider-{}@example.org", uuid::Uuid::now_v7()))
        .await
        .expect("user");
    let request = a
        .state
        .authorization()
        .validate(&params(&client, &challenge), public)
        .await
        .expect("valid on a");
    let to = url::Url::parse(
        &a.state
            .authorization()
            .approve(user, &request, public)
            .await
            .expect("approved"),
    )
    .expect("url");
    assert_eq!(query(&to, "iss").as_deref(), Some(public));
    let code = query(&to, "code").expect("code");
    // Redeemed on b.
    let (status, first) = exchange(&b, &client, &code, &verifier).await;
    assert_eq!(status, 200, "{first}");
    let access = first["access_token"].as_str().expect("a");
    assert_eq!(call(&a, access, "list_trips", json!({})).await.0, 200);
    assert_eq!(call(&b, access, "list_trips", json!({})).await.0, 200);
    // The code is spent for a too.
    let (status, _) = exchange(&a, &client, &code, &verifier).await;
    assert_eq!(status, 400);
    assert_eq!(
        call(&b, access, "list_trips", json!({})).await.0,
        401,
        "the reuse revoked what it issued, everywhere"
    );
    // A fresh grant: refreshed on a, the old refresh token replayed on b revokes it.
    let (verifier, challenge) = pkce();
    let request = a
        .state
        .authorization()
        .validate(&params(&client, &challenge), public)
        .await
        .expect("valid");
    let to = url::Url::parse(
        &a.state
            .authorization()
            .approve(user, &request, public)
            .await
            .expect("approved"),
    )
    .expect("url");
    let (status, tokens) =
        exchange(&b, &client, &query(&to, "code").expect("code"), &verifier).await;
    assert_eq!(status, 200);
    let old = tokens["refresh_token"].as_str().expect("r");
    let (status, second) = token(
        &a,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", old),
            ("client_id", &client),
        ],
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = token(
        &b,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", old),
            ("client_id", &client),
        ],
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        call(
            &a,
            second["access_token"].as_str().expect("a"),
            "list_trips",
            json!({})
        )
        .await
        .0,
        401
    );
    // 12 token requests a minute from this address, counted on both replicas together: 5
    // were made; 7 more, alternating, fill the budget, and the next is 429 on either.
    for i in 0..7 {
        let replica = if i % 2 == 0 { &a } else { &b };
        let (status, _) = token(
            replica,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", "etr_x"),
                ("client_id", &client),
            ],
        )
        .await;
        assert_eq!(status, 400, "request {i}");
    }
    for replica in [&a, &b] {
        let answer = replica
            .client
            .post(format!("{}/oauth/token", replica.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", "etr_x"),
                ("client_id", &client),
            ]))
            .send()
            .await
            .expect("token");
        assert_eq!(answer.status(), 429);
        assert!(answer.headers().get("retry-after").is_some());
        let body: Value = answer.json().await.expect("json");
        assert_eq!(body["error"], "rate_limited");
    }
}

async fn the_agents_page_lists_and_revokes(backend: Backend) {
    use etappe_tests::browser::{log_in, no_redirects};
    let Some(app) = spawn(backend).await else {
        return;
    };
    let anonymous = no_redirects()
        .get(format!("{}/agents", app.base))
        .send()
        .await
        .expect("page");
    assert_eq!(anonymous.status(), 302);
    let browser = log_in(&app, &format!("rider-{}@example.org", uuid::Uuid::now_v7())).await;
    let me: Value = no_redirects()
        .get(format!("{}/users/me", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    // The person's own grant, made through the service (the consent test covers the page).
    let client = register(&app, REDIRECT).await;
    let (verifier, challenge) = pkce();
    // The signed-in person (the address is theirs: this finds their account).
    let user = app
        .state
        .identity()
        .ensure_user(me["email"].as_str().expect("email"))
        .await
        .expect("user");
    let request = app
        .state
        .authorization()
        .validate(&params(&client, &challenge), &app.base)
        .await
        .expect("valid");
    let to = url::Url::parse(
        &app.state
            .authorization()
            .approve(user, &request, &app.base)
            .await
            .expect("ok"),
    )
    .expect("url");
    let (status, tokens) =
        exchange(&app, &client, &query(&to, "code").expect("code"), &verifier).await;
    assert_eq!(status, 200);
    let page = no_redirects()
        .get(format!("{}/agents", app.base))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(csp.contains("form-action 'self';"), "{csp}");
    let html = page.text().await.expect("html");
    assert!(
        html.contains("Test agent") && html.contains(&client),
        "{html}"
    );
    let action = html
        .split("action=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("a revoke form")
        .to_owned();
    let post = |body: String| {
        let cookie = browser.cookie.clone();
        let url = format!("{}{action}", app.base);
        let origin = app.base.clone();
        async move {
            no_redirects()
                .post(url)
                .header("cookie", cookie)
                .header("origin", origin)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body)
                .send()
                .await
                .expect("revoke")
                .status()
        }
    };
    assert_eq!(post("csrf=forged".into()).await, 403);
    assert_eq!(
        call(
            &app,
            tokens["access_token"].as_str().expect("a"),
            "list_trips",
            json!({})
        )
        .await
        .0,
        200
    );
    assert_eq!(post(form(&[("csrf", &browser.csrf)])).await, 303);
    assert_eq!(
        call(
            &app,
            tokens["access_token"].as_str().expect("a"),
            "list_trips",
            json!({})
        )
        .await
        .0,
        401
    );
    // Deleting the account ends every agent's grant with it (the grants cascade from the
    // user, the tokens from the grants).
    let (verifier, challenge) = pkce();
    let request = app
        .state
        .authorization()
        .validate(&params(&client, &challenge), &app.base)
        .await
        .expect("valid");
    let to = url::Url::parse(
        &app.state
            .authorization()
            .approve(user, &request, &app.base)
            .await
            .expect("ok"),
    )
    .expect("url");
    let (_, tokens) = exchange(&app, &client, &query(&to, "code").expect("code"), &verifier).await;
    let access = tokens["access_token"].as_str().expect("a");
    assert_eq!(call(&app, access, "list_trips", json!({})).await.0, 200);
    let deleted = no_redirects()
        .delete(format!("{}/users/me", app.base))
        .header("cookie", &browser.cookie)
        .header("origin", &app.base)
        .header("x-csrf-token", &browser.csrf)
        .json(&json!({"confirm": me["email"]}))
        .send()
        .await
        .expect("delete");
    assert_eq!(deleted.status(), 200);
    assert_eq!(call(&app, access, "list_trips", json!({})).await.0, 401);
    let (status, _) = token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            (
                "refresh_token",
                tokens["refresh_token"].as_str().expect("r"),
            ),
            ("client_id", &client),
        ],
    )
    .await;
    assert_eq!(status, 400);
}

/// A metadata document over https on loopback is fetched with every certificate check on:
/// refused while its CA is unknown (or another CA is trusted), fetched once the test hook
/// `fetch_hooks.extra_root_certificates` trusts that very CA. The hook is the only way in;
/// no setting reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_document_is_fetched_only_when_its_ca_is_trusted() {
    use etappe_tests::tls_documents::{TestCertificates, TlsDocumentServer};
    let (certs, stranger) = tokio::task::spawn_blocking(|| {
        (TestCertificates::generate(), TestCertificates::generate())
    })
    .await
    .expect("the certificate maker");
    let certs = certs.expect("a throwaway CA from the openssl CLI");
    let stranger = stranger.expect("another throwaway CA");
    let document = json!({
        "client_id": "{origin}/client.json",
        "client_name": "Document over https",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    })
    .to_string();
    let server =
        TlsDocumentServer::start(&certs, vec![("/client.json", "application/json", document)])
            .await
            .expect("the https document server");
    let url = format!("{}/client.json", server.origin);

    for trusted in [None, Some(stranger.ca_der.clone())] {
        let Some(app) = spawn_with(Backend::Sqlite, |c| {
            c.work.fetch_hooks.extra_root_certificates = trusted.into_iter().collect();
        })
        .await
        else {
            return;
        };
        let refused = app
            .state
            .authorization()
            .fetch_document(&url)
            .await
            .expect_err("a certificate from an untrusted CA");
        assert!(
            refused.to_string().contains("could not be fetched"),
            "{refused}"
        );
    }
    assert_eq!(
        server.hits("/client.json"),
        0,
        "no request past the handshake"
    );

    let ca = certs.ca_der.clone();
    let Some(app) = spawn_with(Backend::Sqlite, |c| {
        c.work.fetch_hooks.extra_root_certificates = vec![ca];
    })
    .await
    else {
        return;
    };
    let client = app
        .state
        .authorization()
        .fetch_document(&url)
        .await
        .expect("the document, over https from the trusted CA");
    assert_eq!(client.client_name, "Document over https");
    assert_eq!(client.kind, "cimd");
    assert_eq!(server.hits("/client.json"), 1);
}

/// A client registered a minute ago (anyone may register one) is not trusted with a
/// redirect before the person approved it: an unknown scope, `response_type=token` and a
/// foreign resource are each a page of ours, with no `Location` to the client.
async fn an_unapproved_client_gets_every_error_on_a_page_of_ours(backend: Backend) {
    use etappe_tests::browser::{log_in, no_redirects};
    let Some(app) = spawn(backend).await else {
        return;
    };
    let landing = "https://evil.example/landing";
    let client = register(&app, landing).await;
    let browser = log_in(&app, &format!("rider-{}@example.org", uuid::Uuid::now_v7())).await;
    let (_, challenge) = pkce();
    let url = |extra: &[(&str, &str)]| {
        authorize_url(&app, &client, &challenge, extra).replace(
            &url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>(),
            &url::form_urlencoded::byte_serialize(landing.as_bytes()).collect::<String>(),
        )
    };
    for (url, code) in [
        (url(&[("scope", "nonexistent")]), "invalid_scope"),
        (
            url(&[]).replace("response_type=code", "response_type=token"),
            "unsupported_response_type",
        ),
        (
            url(&[("resource", "https://other.example/mcp")]),
            "invalid_target",
        ),
    ] {
        assert!(url.contains("evil.example"), "{url}");
        let answer = no_redirects()
            .get(&url)
            .header("cookie", &browser.cookie)
            .send()
            .await
            .expect("authorize");
        assert_eq!(answer.status(), 400, "{url}");
        assert!(answer.headers().get("location").is_none(), "{url}");
        assert!(
            answer.headers()["content-type"]
                .to_str()
                .expect("type")
                .starts_with("text/html")
        );
        let html = answer.text().await.expect("page");
        assert!(html.contains(code), "{url}: {html}");
        assert!(html.contains("href=\"/\""), "a link back: {html}");
        assert!(!html.contains("evil.example"), "{html}");
    }
    // The consent form's POST is held to the same rule: a bad scope there is a page too.
    let consent = no_redirects()
        .get(url(&[]))
        .header("cookie", &browser.cookie)
        .send()
        .await
        .expect("consent");
    assert_eq!(consent.status(), 200);
    let mut fields = form_fields(&consent.text().await.expect("html"));
    fields.retain(|(k, _)| k != "scope");
    fields.push(("scope".into(), "nonexistent".into()));
    let answer = decide(&app, &browser, &fields, "approve", &app.base).await;
    assert_eq!(answer.status(), 400);
    assert!(answer.headers().get("location").is_none());
}

/// RFC 6749 §5.2: a token request naming no registered client is `invalid_client` (400 for
/// a public client, 401 with a challenge when it tried the `Authorization` header), for a
/// code and a refresh alike, and the code it carried stays good for its client.
async fn an_unknown_client_at_the_token_endpoint_is_invalid_client(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (client, code, verifier) = code(&app, None).await;
    let (status, body) = exchange(&app, "dcr_nobody", &code, &verifier).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_client")),
        "{body}"
    );
    let answer = app
        .client
        .post(format!("{}/oauth/token", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .basic_auth("dcr_nobody", Some("secret"))
        .body(form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", "dcr_nobody"),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
        ]))
        .send()
        .await
        .expect("token");
    assert_eq!(answer.status(), 401);
    assert!(
        answer.headers()["www-authenticate"]
            .to_str()
            .expect("challenge")
            .starts_with("Basic ")
    );
    assert_eq!(
        answer.json::<Value>().await.expect("json")["error"],
        "invalid_client"
    );
    let (status, tokens) = exchange(&app, &client, &code, &verifier).await;
    assert_eq!(status, 200, "{tokens}");
    let (status, body) = token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            (
                "refresh_token",
                tokens["refresh_token"].as_str().expect("r"),
            ),
            ("client_id", "dcr_nobody"),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_client")),
        "{body}"
    );
}

/// RFC 6749 §4.1.3: when the authorization request named `redirect_uri`, the exchange must
/// repeat it; when it named none (one URI registered), the exchange may omit it.
async fn a_code_exchange_repeats_the_redirect_uri_its_request_named(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (client, code, verifier) = code(&app, None).await;
    let without = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("client_id", client.as_str()),
        ("code_verifier", verifier.as_str()),
    ];
    let (status, body) = token(&app, &without).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    assert!(
        body["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("redirect_uri"),
        "{body}"
    );
    // The refusal spent nothing: repeated, the exchange holds.
    let (status, body) = exchange(&app, &client, &code, &verifier).await;
    assert_eq!(status, 200, "{body}");
    // A request that named no redirect_uri: its exchange may omit it, or name the one URI.
    for named in [false, true] {
        let client = register(&app, REDIRECT).await;
        let (verifier, challenge) = pkce();
        let mut p = params(&client, &challenge);
        p.redirect_uri = None;
        let back = approve(&app, &p).await;
        assert!(back.as_str().starts_with(REDIRECT), "{back}");
        let code = query(&back, "code").expect("code");
        let mut pairs = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("client_id", client.as_str()),
            ("code_verifier", verifier.as_str()),
        ];
        if named {
            pairs.push(("redirect_uri", REDIRECT));
        }
        let (status, body) = token(&app, &pairs).await;
        assert_eq!(status, 200, "named {named}: {body}");
    }
}

/// Under an https public URL every answer, of every transport (and a 404), carries HSTS;
/// under an http one (a local run) none does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hsts_is_sent_on_every_answer_under_an_https_public_url() {
    let app = spawn_with(Backend::Sqlite, |c| {
        c.public_url = Some("https://etappe.example".into());
    })
    .await
    .expect("sqlite");
    for path in [
        "/livez",
        "/login",
        "/.well-known/oauth-authorization-server",
        "/trips",
        "/no-such-page",
    ] {
        let answer = app
            .client
            .get(format!("{}{path}", app.base))
            .send()
            .await
            .expect("answer");
        assert_eq!(
            answer
                .headers()
                .get("strict-transport-security")
                .and_then(|v| v.to_str().ok()),
            Some("max-age=31536000"),
            "{path}: {}",
            answer.status()
        );
    }
    let local = spawn(Backend::Sqlite).await.expect("sqlite");
    let answer = local
        .client
        .get(format!("{}/livez", local.base))
        .send()
        .await
        .expect("answer");
    assert!(answer.headers().get("strict-transport-security").is_none());
}
