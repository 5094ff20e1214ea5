"""gunicorn's configuration for the portal, in the demo (deploy/demo.sh) and in production
(ostara-portal.service): answers without a ``Server`` header, which would name gunicorn to
anyone who asks (nginx hides its own version in production; this hides gunicorn behind it and
on the loopback port a probe uses). Bind address, workers and timeout stay on the command line.

gunicorn has no setting for it: its responses start with a fixed list of headers, and a
``Server`` header from the application is dropped as hop-by-hop. So the list is filtered here,
in the master before it forks the workers.

Each worker also resolves the portal's URLs before it takes its first request: Django imports
the views lazily, on the first request a worker serves, and after a restart that first page (or
a load balancer's ``/healthz``) would wait for every view module to load, once per worker. What
is loaded then is frozen (``workers.heap``): a page's full collection no longer walks it.
"""

from __future__ import annotations

from gunicorn.http import wsgi

_default_headers = wsgi.Response.default_headers


def _without_server(self) -> list[str]:
    return [line for line in _default_headers(self) if not line.startswith("Server:")]


wsgi.Response.default_headers = _without_server


def post_worker_init(worker) -> None:
    """gunicorn's hook, run in each worker once the application is loaded."""
    from django.urls import get_resolver

    from workers import heap

    get_resolver().url_patterns  # noqa: B018 (imports every view module)
    heap.settle()  # what it imported is out of the cyclic collector's sight
