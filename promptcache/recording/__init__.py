"""Recording requests as they go on the wire: which API an HTTP request is, the provider's usage read from
the response as it streams past, and the guard / trace / statistics step both recorders share (the SDK
wrappers' HTTP client, :mod:`promptcache.recording.http_client`, and ``promptcache proxy``)."""
