"""The fan corpus (tests/fixtures/fans/corpus/): real machines' captures, each block with its source, the story and,
where known, the answer a correct tool gives. Split into blocks as its README says."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "fans" / "corpus"
MORE = CORPUS.parent / "corpus-more"  # machines the rules were not written from: keys "more-<file>-NN"


@dataclass(frozen=True)
class Block:
    key: str  # "servers-bmc-01": the file and the block's place in it
    title: str
    source: str
    answer: str | None
    established: str | None  # "from thread" or "inferred"
    capture: str  # the capture, without the compiler's #~ separators


def blocks(folder: Path = CORPUS, prefix: str = "") -> list[Block]:
    found = []
    for path in sorted(folder.glob("*.txt")):
        lines = path.read_text().splitlines()
        starts = [i for i, line in enumerate(lines[:-1]) if line.startswith("=== ") and
                  lines[i + 1].startswith("# source:")]
        for n, start in enumerate(starts):
            body = lines[start:starts[n + 1] if n + 1 < len(starts) else len(lines)]
            meta = {}
            i = 1
            while i < len(body) and re.match(r"# (source|story|answer):", body[i]):
                key, _, value = body[i][2:].partition(":")
                meta[key] = value.strip()
                i += 1
            answer = meta.get("answer")
            established = None
            if answer:
                tag = re.search(r"\[(from thread|inferred)\]\s*$", answer)
                established = tag.group(1) if tag else None
                answer = answer[: tag.start()].strip() if tag else answer
            capture = "\n".join(line for line in body[i:] if not line.startswith("#~")) + "\n"
            found.append(Block(f"{prefix}{path.stem}-{n + 1:02d}", body[0][4:], meta.get("source", ""), answer,
                               established,
                               capture))
    return found


def every_block() -> list[Block]:
    """The corpus's 48 machines and the 24 more, one list."""
    return [*blocks(), *blocks(MORE, "more-")]
