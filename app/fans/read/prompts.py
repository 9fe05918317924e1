"""A shell's prompt before a command, as people paste it: the one place its shapes are written. bash's ("$ ", "# ",
"root@host:~# ", "pi@raspberrypi:~ $ ", Fedora's and Arch's "[user@host ~]$ "), zsh's ("host% ", "user@host ~ % ",
oh-my-zsh's "➜  ~ ", the arrow and the folder), fish's ("user@host ~> ", "~> "), a numbered history
("[1020] host:~ $ "), PowerShell's ("PS C:\\> ")."""

from __future__ import annotations

PROMPT = (r"(?:[\w.-]+@[\w.-]+:\S*\s?[$#]|\[\d+\]\s+[\w.-]+:\S*\s?[$#]|\[[\w.-]+@[\w.-]+[^\]\n]*\][$#]|"
          r"[\w.-]+@[\w.-]+\s+\S+\s?[%>$#]|[A-Za-z][\w.-]*%|~[\w/.-]*>|[$#❯]|➜\s+\S+|PS [^>]*>)")
# a prompt, or a folder a shell shows before its # or $ ("/sys/class/hwmon/hwmon1# "), the start of a command line
ANY_PROMPT = r"(?:" + PROMPT + r"|\S*\s?[$#❯>])"
# the start of a line that may begin with a prompt, before the command a reader looks for ("cat /sys/...")
BEFORE_COMMAND = r"^(?:" + ANY_PROMPT + r"\s*)?"
