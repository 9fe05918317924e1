"""``fanwhy top``'s keys and columns, as constants: what the parser's help and the man page list (imported by them
with nothing else, so building the parser costs a one-shot answer nothing) and what app.cli.topstate acts on."""

from __future__ import annotations

# One key per sort column: (the JSON field, the column's title). The same key again turns the order around.
SORTS: dict[str, tuple[str, str]] = {
    "G": ("gpu_memory_bytes", "GPU MEM"), "S": ("sm_percent", "SM"), "P": ("cpu_percent", "CPU"),
    "M": ("rss_bytes", "MEM"), "W": ("power_w", "W"), "N": ("pid", "PID"), "U": ("user", "USER"),
    "C": ("program", "COMMAND")}
ASCENDING = frozenset({"N", "U", "C"})  # PIDs, users and commands read A to Z; amounts, the largest first
SIGNALS = {"T": "SIGTERM", "k": "SIGKILL"}
TITLE = "fanwhy top: why is my fan running, live"
KEYS = (  # (the keys, what they do): laid out by help_lines for the width there is
    ("G S P M W N U C", "sort by GPU memory, SM %, CPU %, memory, watts, PID, user, command (the same key again "
                        "turns the order around)"),
    ("/", "filter processes (command, user, container); Enter applies, Esc clears"),
    ("t", "the process tree (children under their parents)"),
    ("Up Down PgUp PgDn Home End", "select a process"),
    ("Enter", "the selected process: its GPU memory and SM history, energy, its whole command"),
    ("T  k", "send SIGTERM or SIGKILL to the selected process (asks first; your own processes only unless root; "
             "none with --readonly or --server)"),
    ("h  ?", "this help"),
    ("Esc", "close what is open, then clear the filter"),
    ("q", "quit"),
)
KEY_COLUMN = 17


def help_lines(width: int) -> list[str]:
    """The keys and what they do in lines of at most ``width`` cells: each text wrapped under its own column."""
    from ..core.cells import wrap

    lines = []
    column = min(KEY_COLUMN, width // 3)
    for keys, text in KEYS:
        if len(keys) >= column:  # a long list of keys has the line to itself
            lines.append(keys)
            keys = ""
        said = wrap(text, width - column)
        lines += [f"{keys:<{column}}{said[0]}", *(" " * column + more for more in said[1:])]
    return lines
