"""The mutation score per module, from `mutmut results --all true` on standard input (`make mutation`).

A mutant is killed when a test fails with it; "survived" means no test noticed the change. Timeouts count as
killed (the mutant broke the code); mutants no test reaches count as survived.
"""

from __future__ import annotations

import re
import sys
from collections import Counter


def main() -> int:
    killed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for line in sys.stdin:
        found = re.match(r"\s*(app\.[\w.]+?)\.x[_ǁ].*?__mutmut_\d+: (\w[\w ]*)", line)
        if not found:
            continue
        module, status = found.group(1), found.group(2).strip()
        total[module] += 1
        killed[module] += status in ("killed", "timeout")
    if not total:
        print("no mutant results: run `mutmut run` first", file=sys.stderr)
        return 1
    for module in sorted(total):
        share = 100 * killed[module] / total[module]
        print(f"{module:36} {killed[module]:5} of {total[module]:5} killed  {share:5.1f} %")
    all_killed, all_total = sum(killed.values()), sum(total.values())
    print(f"{'all':36} {all_killed:5} of {all_total:5} killed  {100 * all_killed / all_total:5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
