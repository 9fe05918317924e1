"""The fan wing: why a fan runs, from facts, chip knowledge as data, rules with their sources, and words last.

``facts`` are what was read (no words); ``chips`` and ``roles`` are the knowledge of what each chip or driver is and
does; ``rules`` turn facts into findings (a kind, its subjects, its evidence, a confidence, a priority); ``words``
is the one module that turns findings into English. ``read`` holds the capture parsers, which emit facts only.
The wing imports only the foundation (``app.core``); the collector's replay and the command line import it.
"""
