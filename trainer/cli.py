"""How okgin's training commands report errors: one line, no traceback (``OKGIN_TRACEBACK=1``
shows it), exit status 1."""

from __future__ import annotations

import os
import sys
from typing import Callable


def run_cli(main: Callable[[], object], errors: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError,
                                                                                     RuntimeError),
            interrupted: str | None = None) -> None:
    """Call ``main()``; one of ``errors`` exits with ``error: <message>``, and Ctrl-C with
    ``interrupted`` when given (else Python's own handling)."""
    try:
        main()
    except errors as e:
        if os.environ.get("OKGIN_TRACEBACK"):
            raise
        sys.exit(f"error: {e}")
    except KeyboardInterrupt:
        if interrupted is None:
            raise
        sys.exit(interrupted)
