"""Views of one snapshot or of the history, and their defences: REST, Socket.IO, /metrics, OpenAPI, the page's
route, the token, the gate (Host, Origin, rate limits, sessions), bodies read before Flask, response headers.

Web layer: may import core and the engine packages (collect, verdict, store); never a vendor or /proc."""
