"""Registration with Gymnasium and PettingZoo (run on ``import okgin_env``).

* ``gymnasium.make("okgin/OklahomaGin-v0", opponent="random", **options)``: ``SingleAgentEnv``.
* ``gymnasium.make_vec("okgin/OklahomaGin-v0", num_envs=N, vectorization_mode="vector_entry_point",
  opponent="random", **options)``: ``OkginVectorEnv`` (N games on one batched core); the
  "sync"/"async" modes wrap N ``SingleAgentEnv`` instead.
* ``gymnasium.make("okgin/OklahomaGinText-v0", opponent="simple", **options)``: ``okgin_env.text.TextEnv``
  (text observations and text actions, for RL on language models).
* ``pettingzoo.make("aec", "okgin/OklahomaGin-v0", **options)``: the wrapped AEC env. PettingZoo
  is not imported just to register: the id is added when ``okgin_env.envs.aec`` is imported (any use of
  ``okgin_env.env``), or at ``import okgin_env`` if PettingZoo is already imported; call
  ``okgin_env.register_envs(pettingzoo=True)`` to force it.
"""

from __future__ import annotations

import sys

ENV_ID = "okgin/OklahomaGin-v0"
TEXT_ENV_ID = "okgin/OklahomaGinText-v0"


def register_envs(pettingzoo: bool | None = None) -> None:
    """Register ``ENV_ID`` (and Gymnasium's ``TEXT_ENV_ID``) once in each registry (idempotent).

    ``pettingzoo=None`` registers with PettingZoo only if it is already imported.
    """
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="okgin_env.envs.single_agent:SingleAgentEnv",
                           vector_entry_point="okgin_env.envs.vector:OkginVectorEnv")
    if TEXT_ENV_ID not in gymnasium.registry:
        gymnasium.register(id=TEXT_ENV_ID, entry_point="okgin_env.text.env:TextEnv")
    if pettingzoo is None:
        pettingzoo = "pettingzoo" in sys.modules
    if pettingzoo:
        try:
            from pettingzoo import aec_registry, register
        except ImportError:  # PettingZoo < 1.27 has no registry: okgin_env.env() is the way there
            return

        if ENV_ID not in aec_registry:
            register("aec", ENV_ID, entry_point="okgin_env.envs.aec:env")
