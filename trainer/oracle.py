"""Privileged inputs of the trainer's critic (``oracle_critic``): what the player to move cannot see.

An asymmetric actor-critic: the policy acts on the observation alone, while the value function,
used only to compute advantages during training, also reads the hidden state. A hand's outcome
hangs mostly on the opponent's hand and the order of the stock; a critic that sees them explains
more of the return (0.38 of its variance against 0.27 in our runs, docs/training.md), so
advantages are less noisy (as in PerfectDou's "perfect-training, imperfect-execution" for Dou
Dizhu). Nothing here is ever given to an agent.
"""

from __future__ import annotations

import numpy as np

from okgin_env.game.cards import NUM_CARDS
from okgin_env.game.core import GameState
from okgin_env.game.melds import best_melds, hand_deadwood
from okgin_env.game.observation import DEADWOOD_SCALE

#: the opponent's hand (52), its melded cards (52) and deadwood (1), each card's depth in the stock (52)
PRIVILEGED_SIZE = 3 * NUM_CARDS + 1


def privileged_inputs(state: GameState, games: np.ndarray, players: np.ndarray) -> np.ndarray:
    """(B, PRIVILEGED_SIZE) float32 for player ``players[i]`` in game ``games[i]``:

    * opponent hand (52): 1 for each card the other player holds;
    * opponent melds (52): 1 for each of those cards in a meld of its least-deadwood arrangement,
      and its deadwood / DEADWOOD_SCALE (1): the outcome of a knock hangs on these, and a small
      MLP is slow to work them out from the hand;
    * stock (52): for a card in the stock, 1 - depth / 52 (the next card to be drawn reads 1,
      the one after it 1 - 1/52, ...); 0 for a card not in the stock.
    """
    games = np.asarray(games, np.int64)
    players = np.asarray(players, np.int64)
    out = np.zeros((len(games), PRIVILEGED_SIZE), np.float32)
    opp = state.hands[games, 1 - players]
    out[:, :NUM_CARDS] = opp
    out[:, NUM_CARDS:2 * NUM_CARDS] = best_melds(opp) >= 0
    out[:, 2 * NUM_CARDS] = hand_deadwood(opp) / DEADWOOD_SCALE
    depth = np.arange(NUM_CARDS)[None, :] - state.stock_next[games].astype(np.int64)[:, None]
    stock = np.where(depth >= 0, 1.0 - depth / NUM_CARDS, 0.0).astype(np.float32)
    np.put_along_axis(out[:, 2 * NUM_CARDS + 1:], state.deck[games].astype(np.int64), stock, axis=1)
    return out
