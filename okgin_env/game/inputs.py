"""Checks of what a caller hands ``VectorGame``: game selections, decks, dealers, game indices.

Each returns the value in the form the kernels take, or raises a ``ValueError`` that says what was
wrong and what is allowed.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from okgin_env.game.cards import NUM_CARDS, parse_deck


def selection(games: Sequence[int] | np.ndarray, num_games: int) -> np.ndarray:
    """(N,) bool mask of the selected games from a bool mask or an index list."""
    arr = np.asarray(games)
    if arr.dtype == bool and arr.shape == (num_games,):
        return arr
    if arr.ndim == 1 and (arr.size == 0 or arr.dtype.kind in "iu") and \
            ((arr >= 0) & (arr < num_games)).all():
        sel = np.zeros(num_games, bool)
        sel[arr.astype(np.int64)] = True
        return sel
    raise ValueError(f"games must be a ({num_games},) bool mask or indices 0-{num_games - 1}; "
                     f"got {games!r}")


def decks_of(decks: Sequence | np.ndarray, n: int) -> np.ndarray:
    """(n, 52) int8 decks from one deck or one per game (card indices or card texts)."""
    arr = np.asarray(decks, dtype=object) if not isinstance(decks, np.ndarray) else decks
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[0] not in (1, n):
        raise ValueError(f"decks must be one 52-card deck or one per game ({n}); got shape {np.shape(decks)}")
    if arr.dtype.kind in "iu":
        ok = arr.shape[1] == NUM_CARDS and arr.min() >= 0 and arr.max() < NUM_CARDS
        if ok and _permutations(arr):
            out = arr.astype(np.int8)
        else:
            out = np.stack([_parse_one(row, b) for b, row in enumerate(arr)])
    else:
        out = np.stack([_parse_one(row, b) for b, row in enumerate(arr)])
    return np.broadcast_to(out, (n, NUM_CARDS)).copy()


def _permutations(arr: np.ndarray) -> bool:
    """Whether every row of ``arr`` ((K, 52) integers in 0..51) holds each card once: every card
    seen (a quarter of the time of sorting the rows, which cost a millisecond per 1,024 decks)."""
    seen = np.zeros(arr.shape, bool)
    np.put_along_axis(seen, arr.astype(np.intp), True, axis=1)
    return bool(seen.all())


def _parse_one(row, b: int) -> np.ndarray:
    try:
        return parse_deck(list(row))
    except ValueError as e:
        raise ValueError(f"deck of game {b}: {e}") from None


def dealers_of(dealers, n: int) -> np.ndarray:
    """(n,) int8 dealers from one int or one per game."""
    arr = np.asarray(dealers)
    if arr.ndim == 0:
        arr = np.full(n, arr)
    if arr.shape != (n,) or arr.dtype.kind not in "iub" or not np.isin(arr, (0, 1)).all():
        raise ValueError(f"dealers must be 0 or 1 (an int or one per game, {n}); got {dealers!r}")
    return arr.astype(np.int8)


def game_index(games, num_games: int, distinct: bool = True) -> np.ndarray:
    """Game indices (int64) from indices or a bool mask (all games when None)."""
    if games is None:
        return np.arange(num_games)
    arr = np.asarray(games)
    if arr.dtype == bool:
        if arr.shape != (num_games,):
            raise ValueError(f"a bool games mask must have shape ({num_games},), got {arr.shape}")
        return np.flatnonzero(arr)
    arr = arr.reshape(-1) if arr.ndim == 0 else arr
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or len(arr) == 0 or (arr < 0).any() \
            or (arr >= num_games).any() or (distinct and len(np.unique(arr)) != len(arr)):
        what = "distinct game indices" if distinct else "game indices"
        shown = np.array2string(np.asarray(games), threshold=8)
        raise ValueError(f"games must be {what} 0..{num_games - 1} or a bool mask of shape "
                         f"({num_games},); got {shown}")
    return arr.astype(np.int64)
