"""Stable-Baselines3 ``VecEnv`` over the batched vector env (``okgin_env.envs.vector.OkginVectorEnv``).

>>> from okgin_env.envs.sb3 import OkginSB3VecEnv
>>> from sb3_contrib import MaskablePPO
>>> env = OkginSB3VecEnv(num_envs=64, opponent="random", deadwood_shaping=0.5)
>>> model = MaskablePPO("MlpPolicy", env).learn(100_000)

SB3 conventions: ``step_wait`` returns (obs, float32 rewards, dones, a list of N info dicts);
a finished game is reset at once (its returned observation is the new episode's), its info
holding ``terminal_observation``, ``TimeLimit.truncated`` and, where hands ended,
``net_points`` (the learner's points minus the opponent's, unscaled); ``illegal_action`` is set
where an illegal action ended the episode. ``action_masks()`` (and ``env_method("action_masks")``,
which sb3-contrib's ``MaskablePPO`` calls) gives the (N, 107) legal actions; a dict
``terminal_observation``'s mask allows only ``actions.TERMINAL_ACTION`` (never all False).
Actions outside 0-106 raise ``ValueError`` (from the vector env) whatever ``illegal_action`` says.

All N games live in one env, so ``env_method``/``set_attr`` act on the vector env once, whatever
``indices`` says (``env_method("set_opponent", "simple")`` swaps the opponent of every game), and
``get_attr`` gives its value once per index; ``seed(s)`` and ``set_options`` take effect at the
next ``reset()``, which uses the first game's seed and options (a reset always spans all games).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

try:
    from stable_baselines3.common.vec_env import VecEnv
    from stable_baselines3.common.vec_env.base_vec_env import (
        VecEnvIndices,
        VecEnvStepReturn,
    )
except ImportError as e:  # an optional extra
    raise ImportError("okgin_env.envs.sb3 needs stable-baselines3 (and sb3-contrib for MaskablePPO): "
                      "pip install -e \".[sb3]\" in the okgin checkout") from e

from okgin_env.envs.vector import OkginVectorEnv


class OkginSB3VecEnv(VecEnv):
    """``env``: an ``OkginVectorEnv`` (or built here from ``num_envs`` and its keyword arguments)."""

    def __init__(self, env: OkginVectorEnv | None = None, num_envs: int = 1, **kwargs: Any) -> None:
        if env is None:
            env = OkginVectorEnv(num_envs, **kwargs)
        elif kwargs or num_envs != 1:
            raise ValueError("give either env=OkginVectorEnv(...) or num_envs and env options, not both")
        if not isinstance(env.unwrapped, OkginVectorEnv):
            raise ValueError(f"env must be an OkginVectorEnv, got {type(env).__name__}")
        self.env = env
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> Any:
        options = self._options[0] or None
        obs, info = self.env.reset(seed=self._seeds[0], options=options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{"seat": int(s)} for s in info["seat"]]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async()")
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():  # SB3 keeps one dict per game: fill only the ended ones
            final_obs, final = info["final_obs"], info["final_info"]
            has_points = final.get("_net_points")
            for i in np.flatnonzero(dones):
                d = infos[i]
                d["terminal_observation"] = final_obs[i]
                d["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                if has_points is not None and has_points[i]:
                    d["net_points"] = float(final["net_points"][i])
                if final["illegal_action"][i]:
                    d["illegal_action"] = True
        return obs, reward.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(N, 107) bool legal actions of the learner in every game."""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    # ------------------------------------------------- attributes and methods
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":  # one row per game
            masks = self.env.action_masks()
            return [masks[i] for i in idx]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        # the games are not gymnasium.Env instances, so no gymnasium.Wrapper wraps them
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]
