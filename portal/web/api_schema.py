"""What every operation of the API may answer besides its success, added to the OpenAPI schema
(drf-spectacular documents only the success): 401 without credentials, 403 for a role that may
not, 404 for an object that does not exist, 400 naming each refused field, 415 for a body in a
media type it does not read, and 429 past the user's rate (``portal.web.throttling``)."""

from __future__ import annotations

DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
# {"field": ["why", ...], ...}: a field's problems, or a nested serializer's by field.
FIELD_ERRORS = {"type": "object", "additionalProperties": {}}
ERRORS = {
    "401": ("not signed in", DETAIL),
    "403": ("signed in with a role that may not do this", DETAIL),
    "404": ("no such object", DETAIL),
    "400": ("refused: each key names a field, its value says why", FIELD_ERRORS),
    # A body in no media type the operation reads, or a malformed multipart one.
    "415": ("the body's media type is not one this operation reads", DETAIL),
    # Past the user's rate of requests (portal.web.throttling); Retry-After says when to ask again.
    "429": ("too many requests: ask again after Retry-After seconds", DETAIL),
}


def _answer(description: str, body: dict) -> dict:
    return {"description": description, "content": {"application/json": {"schema": body}}}


def document_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            takes_input = "requestBody" in operation or any(
                parameter.get("in") == "query" for parameter in parameters
            )
            for status, (description, body) in ERRORS.items():
                if status == "404" and not any(p.get("in") == "path" for p in parameters):
                    continue
                if status == "400" and not takes_input:
                    continue
                if status == "415" and "requestBody" not in operation:
                    continue
                responses.setdefault(status, _answer(description, body))
    return result
