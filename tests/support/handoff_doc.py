"""The ```sh blocks of docs/handoff.md, which its tests run as written."""

import re
from pathlib import Path

DOC = Path(__file__).parent.parent.parent / "docs" / "handoff.md"


def block(name: str) -> str:
    """The text of the doc's ```sh NAME block."""
    return re.search(rf"^```sh {name}\n(.*?)^```$", DOC.read_text(), re.M | re.S)[1]
