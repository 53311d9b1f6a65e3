"""A plug-in bot for the Ray ladder's test (spec arena_ray_bots:KillsItsWorker; PYTHONPATH has this folder)."""

import os
import signal

import numpy as np


class KillsItsWorker:
    """On its first move ever (no file at $OKGIN_TEST_KILL_MARKER yet) kills the process that runs its sandbox,
    a Ray task's worker, as an out-of-memory killer or a lost machine would; afterwards random legal moves."""

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observations, action_masks):
        marker = os.environ["OKGIN_TEST_KILL_MARKER"]
        if not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getppid(), signal.SIGKILL)
            os._exit(0)
        return np.array([self.rng.choice(np.flatnonzero(m)) for m in np.asarray(action_masks, bool)], np.int64)
