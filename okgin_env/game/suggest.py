"""One wording for unknown names (options, rule keys): every valid name, and the closest one.

``unknown_names_message(["oponent"], valid, "option")`` ->
"unknown option(s) oponent (did you mean opponent?); valid options: opponent, seat, ..."
(the trainer's config errors suggest names the same way).
"""

from __future__ import annotations

import difflib
from typing import Iterable, Sequence


def unknown_names_message(unknown: Iterable[str], valid: Sequence[str], what: str = "option") -> str:
    """A one-line message for ``unknown`` names of a ``what``, each followed by the closest valid
    name when one is close (``difflib.get_close_matches``), then every ``valid`` name."""
    parts = []
    for name in sorted(map(str, unknown)):
        close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
        parts.append(name + (f" (did you mean {close[0]}?)" if close else ""))
    return f"unknown {what}(s) {', '.join(parts)}; valid options: {', '.join(valid)}"
