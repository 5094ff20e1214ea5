"""gunicorn's configuration for the portal, in the demo (deploy/demo.sh) and in production
(ostara-portal.service): answers without a ``Server`` header, which would name gunicorn to
anyone who asks (nginx hides its own version in production; this hides gunicorn behind it and
on the loopback port a probe uses). Bind address, workers and timeout stay on the command line.

gunicorn has no setting for it: its responses start with a fixed list of headers, and a
``Server`` header from the application is dropped as hop-by-hop. So the list is filtered here,
in the master before it forks the workers.
"""

from __future__ import annotations

from gunicorn.http import wsgi

_default_headers = wsgi.Response.default_headers


def _without_server(self) -> list[str]:
    return [line for line in _default_headers(self) if not line.startswith("Server:")]


wsgi.Response.default_headers = _without_server
