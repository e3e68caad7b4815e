"""Schemathesis hooks for tests/tests/e2e/rest/openapi.rs.

A schema states the shape of a request; some refusals depend on what no JSON Schema can
state: the trip's state (its days are not computed yet, the version moved on, it is locked)
or a rule between two fields (endDate after startDate). Those answers are correct, so a
schema-valid request refused for one of them is not a looseness of the document. Each is
named by the problem's stable `code` (and, for invalid values, by the message of the rule),
never by status alone, so any other refusal still fails the run.
"""

import json
import os

import schemathesis

# Set to a file name to record what was dropped, one JSON line each (for a human to read).
LOG = os.environ.get("ETAPPE_SCHEMATHESIS_DROPPED")

# Problem codes that name the trip's state, not the request's shape; and the credential's
# kind: creating a token or deleting the account needs a browser session, which the run's
# personal access token is not.
STATE = {"not_ready", "stale_version", "locked", "session_required"}

# Problem codes that name the server's configuration: the run's server has no routing
# engine, so a trip planned from places is refused at once, naming what to configure.
CONFIGURATION = {"not_configured"}

# Invalid values that break a rule between fields, or one about the trip's days as they are
# (how long a day is, how many there are, whether it is a rest day).
RULES = (
    "must be after startDate",
    "km (the kilometres from the day's start where it should end)",
    "(0-based position among the",
    "a rest day has no",
    "this day is too short to split",
    "accommodation candidates: scan first",
    "no candidate of this day within",
    "plan is only for trips planned from places",
)


def _problem(response):
    try:
        return json.loads(response.content)
    except (ValueError, AttributeError):
        return None


def _dropped(case, response, problem):
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            line = {"operation": case.operation.label, "status": response.status_code,
                    "code": problem.get("code"), "detail": problem.get("detail")}
            log.write(json.dumps(line) + "\n")
    return False


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if getattr(failure, "code", None) != "ST202":
        return True
    problem = _problem(response)
    if not isinstance(problem, dict):
        return True
    if problem.get("code") in STATE or problem.get("code") in CONFIGURATION:
        return _dropped(case, response, problem)
    errors = problem.get("errors") or []
    if problem.get("code") == "invalid_value" and errors and all(
        any(rule in (e.get("message") or "") for rule in RULES) for e in errors
    ):
        return _dropped(case, response, problem)
    return True
