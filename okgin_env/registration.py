"""Registration with Gymnasium and PettingZoo (run on ``import okgin_env``).

* ``gymnasium.make("okgin/OklahomaGin-v0", opponent="random", **options)``: ``SingleAgentEnv``.
* ``pettingzoo.make("aec", "okgin/OklahomaGin-v0", **options)``: the wrapped AEC env
  (PettingZoo >= 1.27 has a registry; older versions are skipped).
"""

from __future__ import annotations

ENV_ID = "okgin/OklahomaGin-v0"


def register_envs() -> None:
    """Register ``ENV_ID`` once in each registry that exists (idempotent)."""
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="okgin_env.single_agent:SingleAgentEnv")
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # PettingZoo before 1.27: no registry
        return
    if ENV_ID not in aec_registry:
        register("aec", ENV_ID, entry_point="okgin_env.aec:env")


register_envs()
