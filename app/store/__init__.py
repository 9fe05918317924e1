"""What is kept: the SQLite history (writer, fault recovery, rollups, queries) and recordings.

Engine layer: may import core, vendors, attribution and the other engine packages (collect, verdict); never web."""
