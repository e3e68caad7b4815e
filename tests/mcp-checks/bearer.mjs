// Preloaded (`node --import ./bearer.mjs …`) into the MCP conformance suite, which has no
// option to authenticate to the server under test: every request this process sends to the
// origin named by MCP_CHECKS_ORIGIN (Etappe's, on loopback) gets
// `Authorization: Bearer $MCP_CHECKS_TOKEN`, unless it already carries an Authorization
// header. Requests to any other origin are left alone, so the token goes nowhere else.
//
// The suite sends requests three ways, and each is hooked: node's built-in `fetch` (the SDK's
// Streamable HTTP client transport) and undici's `request` (the DNS-rebinding scenario's
// requests with forged Host and Origin headers) through a global undici dispatcher that adds
// the header; node's `http.request` (the header-validation scenarios' raw requests) through a
// wrapper that sets it on the request before anything is written. The header is the only
// change: Host, Origin, the other headers and the body pass as the suite wrote them, so
// Etappe still checks Host and Origin the way it does for any client.

import http from "node:http";
import { syncBuiltinESMExports } from "node:module";
import { Agent, setGlobalDispatcher } from "undici";

const origin = process.env.MCP_CHECKS_ORIGIN;
const token = process.env.MCP_CHECKS_TOKEN;
if (!origin || !token) {
  throw new Error("bearer.mjs needs MCP_CHECKS_ORIGIN and MCP_CHECKS_TOKEN");
}
const targetUrl = new URL(origin);
const target = targetUrl.origin;
const authorization = `Bearer ${token}`;

/** The request's headers with Authorization added (in whichever shape undici got them). */
function withAuthorization(headers) {
  if (headers == null) {
    return { authorization };
  }
  if (Array.isArray(headers)) {
    // A flat [name, value, name, value, …] list (node's fetch), or a list of pairs.
    const flat = headers.flat();
    for (let i = 0; i < flat.length; i += 2) {
      if (String(flat[i]).toLowerCase() === "authorization") {
        return headers;
      }
    }
    return [...flat, "authorization", authorization];
  }
  if (typeof headers[Symbol.iterator] === "function" && typeof headers !== "string") {
    return withAuthorization([...headers]);
  }
  if (Object.keys(headers).some((name) => name.toLowerCase() === "authorization")) {
    return headers;
  }
  return { ...headers, authorization };
}

function sameOrigin(requestOrigin) {
  try {
    return new URL(String(requestOrigin)).origin === target;
  } catch {
    return false;
  }
}

setGlobalDispatcher(
  new Agent().compose(
    (dispatch) => (options, handler) =>
      dispatch(
        sameOrigin(options.origin)
          ? { ...options, headers: withAuthorization(options.headers) }
          : options,
        handler,
      ),
  ),
);

/** Whether `http.request(…)`'s arguments name the target (host and port). */
function namesTarget(args) {
  let url;
  let options = {};
  if (typeof args[0] === "string" || args[0] instanceof URL) {
    url = new URL(args[0]);
    if (args[1] && typeof args[1] === "object") {
      options = args[1];
    }
  } else if (args[0] && typeof args[0] === "object") {
    options = args[0];
  }
  const host = options.hostname ?? options.host?.replace(/:\d+$/, "") ?? url?.hostname ?? "localhost";
  const port = String(options.port ?? (url?.port || 80));
  return host === targetUrl.hostname && port === (targetUrl.port || "80");
}

const plainRequest = http.request;
http.request = function request(...args) {
  const req = plainRequest.apply(this, args);
  if (namesTarget(args) && !req.hasHeader("authorization")) {
    req.setHeader("authorization", authorization);
  }
  return req;
};
http.get = function get(...args) {
  const req = http.request(...args);
  req.end();
  return req;
};
syncBuiltinESMExports();
