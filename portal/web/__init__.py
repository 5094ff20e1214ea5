"""How the portal meets a request, for every app alike: the API's body parsing, pagination and
error schema, query-string numbers, numbers and sizes as a person reads them, Cache-Control,
the Content-Security-Policy, per-user throttling, the main navigation and the answers its
processes share for a few seconds."""
