"""How the API reads a request's body: only once the user may send it, and never deeper than
it needs.

- ``SessionAuthentication``: DRF's, but its CSRF check looks at Django's request, whose
  ``POST`` holds only a form's fields. On DRF's request, ``POST`` parses the whole body, so a
  browser session's body was read before the permission check: a viewer's JSON nested a
  thousand deep was a server error instead of the 403 it is due.
- ``NameField``: a name looked up as it was sent. DRF trims a ``CharField``, so "oss01\n" was
  read as oss01 and acted on; a name with a space or control character at either end, or a
  control character inside, is refused naming the field.
- ``DepthLimitedJSONParser``: DRF's JSON parser, but arrays and objects nested deeper than
  ``MAX_JSON_DEPTH`` are a 400 before Python's parser meets them (a thousand levels made it
  raise RecursionError). No body the API takes nests more than a few levels.
"""

from __future__ import annotations

import io
import re

from django.conf import settings
from drf_spectacular.authentication import SessionScheme
from rest_framework import authentication, serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from provisioning import names

MAX_JSON_DEPTH = 64

# A JSON string (its brackets are text), or one bracket.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def nested_deeper_than(text: str, limit: int) -> bool:
    """Whether ``text``'s arrays and objects nest more than ``limit`` levels (read without
    building anything, and stopping at the first level too deep)."""
    depth = 0
    for token in _STRING_OR_BRACKET.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return True
        elif bracket in "]}":
            depth -= 1
    return False


class SessionAuthentication(authentication.SessionAuthentication):
    def enforce_csrf(self, request):
        # A JSON body's token comes in the X-CSRFToken header; a form's fields Django reads
        # itself, and DRF's parsers then take them from there.
        super().enforce_csrf(request._request)


class ApiSessionScheme(SessionScheme):
    """The OpenAPI schema names it the session cookie, as before (defined here, so it is
    registered)."""

    target_class = SessionAuthentication


class NameField(serializers.CharField):
    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> str:
        name = super().to_internal_value(data)
        if name != name.strip() or names.first_control_character(name):
            raise serializers.ValidationError(
                "a name has no spaces or newlines at its ends and no control characters"
            )
        return name


class DepthLimitedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        body = stream.read()
        try:
            text = body.decode(encoding)
        except (UnicodeDecodeError, LookupError) as error:
            raise ParseError(f"JSON parse error - {error}") from None
        if nested_deeper_than(text, MAX_JSON_DEPTH):
            raise ParseError(
                f"JSON parse error - arrays and objects nested more than {MAX_JSON_DEPTH} deep"
            )
        return super().parse(io.BytesIO(body), media_type, parser_context)
