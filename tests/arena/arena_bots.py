"""Plug-in bots that misbehave, for the ladder's tests (specs arena_bots:Hang, ...; PYTHONPATH has this folder)."""

import os
import time

import numpy as np


class Hang:
    """Never answers."""

    def __init__(self, seed=None):
        pass

    def act(self, observations, action_masks):
        time.sleep(3600)


class Crash:
    """Its process dies on its first move."""

    def __init__(self, seed=None):
        pass

    def act(self, observations, action_masks):
        print("about to crash")  # a bot's print must not disturb the protocol
        os._exit(3)


class Illegal:
    """Always answers action 0 (discard the ace of spades), legal or not."""

    def __init__(self, seed=None):
        pass

    def act(self, observations, action_masks):
        return np.zeros(len(action_masks), np.int64)


class Hog:
    """Asks for 8 GB on its first move."""

    def __init__(self, seed=None):
        pass

    def act(self, observations, action_masks):
        np.ones((1 << 30,), np.float64)
        return np.zeros(len(action_masks), np.int64)


class Flaky:
    """Random legal moves, but hangs on about one move in 300 (the long ladder run's plug-in)."""

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observations, action_masks):
        if self.rng.random() < 1 / 300:
            time.sleep(3600)
        return np.array([self.rng.choice(np.flatnonzero(m)) for m in np.asarray(action_masks, bool)], np.int64)
