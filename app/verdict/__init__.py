"""What a snapshot means: the verdict (ranked causes in sentences), alert rules with hold, hysteresis and
cooldown, "while you were away" from past verdicts, and notifications of alerts.

Engine layer: may import core, vendors, attribution and the other engine packages (collect, store); never web."""
