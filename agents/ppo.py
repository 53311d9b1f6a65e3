"""The PPO actor-critic network, its masked categorical policy, checkpoints and ``PPOAgent``.

``train.py`` trains an :class:`ActorCritic`; everything that must agree between training and
play lives here, once:

* the masked categorical: illegal actions get logit ``MASKED_LOGIT`` (probability exactly 0),
  the entropy is taken over legal actions only;
* the checkpoint format (a ``torch.save`` dict, loadable with ``weights_only=True``):

  ==================  ==============================================================
  format, version     ``"okgin-ppo"``, ``CHECKPOINT_VERSION``
  obs_version         ``okgin_env.game.observation.OBS_VERSION`` the network was trained on
  features_version    ``FEATURES_VERSION`` of the meld/outs inputs it read (absent: 1)
  obs_size            ``OBS_SIZE``; num_actions ``NUM_ACTIONS``
  model_config        keyword arguments of :class:`ActorCritic`
  model               the network's ``state_dict``
  rules               ``Rules.to_dict()`` of the training games
  args                the training config (``train.Args`` as a dict)
  global_step         env steps (decisions) played so far; iteration: updates done
  optimizer           Adam state (training checkpoints only)
  train_state         RNG states, game state, opponent pool (training checkpoints only)
  ==================  ==============================================================

* :func:`load_ppo_agent`, which ``agents.make("ppo:PATH")`` calls.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from okgin_env.features.learner import (  # noqa: F401
    FEATURES,
    FEATURES_VERSION,
    MELD_FEATURES,
    OUTS_FEATURES,
    input_size,
    learner_input,
    meld_features,
    outs_features,
)
from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.observation import OBS_SIZE, OBS_VERSION

from .base import Bot

CHECKPOINT_FORMAT = "okgin-ppo"
CHECKPOINT_VERSION = 1
# FEATURES_VERSION (imported above) is okgin_env.features.learner': the version of what ``network_input``
# computes beyond the observation (``meld_features``, and ``outs_features`` with its frozen
# ``FEATURES_PARAMS``). A network only makes sense on the inputs it was trained on: that module bumps
# it whenever either changes what it returns, and checkpoints of older versions are refused on load.
# Checkpoints written before it existed lack the entry and read as version 1 (the features of
# 2026-11-30, which version 1 still computes).
MASKED_LOGIT = -1e9  #: logit of an illegal action: exp() underflows to exactly 0
ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}


# ---------------------------------------------------------------- masked categorical
def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions (``mask`` False) set to ``MASKED_LOGIT``."""
    return logits.masked_fill(~mask, MASKED_LOGIT)


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of the masked categorical, (B, A); illegal entries are ~-1e9."""
    return torch.log_softmax(masked_logits(logits, mask), dim=-1)


def masked_entropy(log_probs: torch.Tensor) -> torch.Tensor:
    """Entropy over the legal actions only, (B,): an illegal action has p = 0 exactly and a
    finite log p (``MASKED_LOGIT``), so its term p log p is 0 (and so is its gradient).
    p is softmax(log p), which equals exp(log p) for normalised rows: torch's elementwise exp
    takes a slow path (about 15x) on the ~-1e9 entries, softmax does not."""
    return -(torch.softmax(log_probs, dim=-1) * log_probs).sum(-1)


def sample_masked(log_probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row: argmax p / E with E ~ Exp(1) (the Gumbel-max trick without logs);
    illegal actions (p = 0) are never drawn."""
    e = torch.empty_like(log_probs).exponential_(generator=generator).clamp_(min=1e-20)
    return torch.argmax(torch.softmax(log_probs, dim=-1) / e, dim=-1)  # softmax: see masked_entropy


# ------------------------------------------------------------------ input features
# What the network reads beyond the observation lives in okgin_env.features.learner, so that the envs can
# hand any learner the same inputs (features="meld"/"outs"). network_input is that module's
# learner_input: (B, OBS_SIZE) observations -> (B, input_size(features)) float32.
network_input = learner_input


# -------------------------------------------------------------------------- network
def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


def _mlp(sizes: list[int], activation: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [layer_init(nn.Linear(a, b)), ACTIVATIONS[activation]()]
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """MLP actor-critic: observation (B, OBS_SIZE) -> action logits (B, 107) and value (B,).

    ``shared_trunk=True`` (default, cheaper) runs one MLP body with two linear heads;
    ``False`` gives actor and critic their own body (as CleanRL's ``Agent``). With
    ``mask_input=True`` the legal-action mask is appended to the observation as 107 more
    inputs (an agent acts on both), so the network sees exactly when it may knock.
    ``privileged_size > 0`` (needs ``shared_trunk=False``) gives the critic that many more inputs
    that the policy never reads: information hidden from the player (``trainer.oracle``), known
    to the trainer only. Acting needs none of it (:meth:`policy_logits`).
    """

    def __init__(self, obs_size: int = OBS_SIZE, num_actions: int = NUM_ACTIONS,
                 hidden_sizes: list[int] | tuple[int, ...] = (256, 256), activation: str = "relu",
                 shared_trunk: bool = True, mask_input: bool = False, features: str = "raw",
                 privileged_size: int = 0) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
        if features not in FEATURES:
            raise ValueError(f"features must be one of {', '.join(FEATURES)}, got {features!r}")
        if privileged_size < 0 or (privileged_size and shared_trunk):
            raise ValueError(f"privileged_size must be 0, or > 0 with shared_trunk=False (the policy must not read "
                             f"the critic's privileged inputs); got {privileged_size} with shared_trunk={shared_trunk}")
        hidden = [int(h) for h in hidden_sizes]
        self.features = features
        self.config = dict(obs_size=int(obs_size), num_actions=int(num_actions), hidden_sizes=hidden,
                           activation=activation, shared_trunk=bool(shared_trunk), mask_input=bool(mask_input),
                           features=features)
        if privileged_size:  # absent from older checkpoints' configs, which read as 0
            self.config["privileged_size"] = int(privileged_size)
        self.mask_input = bool(mask_input)
        self.privileged_size = int(privileged_size)
        in_size = int(obs_size) - OBS_SIZE + input_size(features)
        sizes = [in_size + (int(num_actions) if mask_input else 0)] + hidden
        self.body = _mlp(sizes, activation)
        self.critic_body = None if shared_trunk else _mlp([sizes[0] + self.privileged_size] + hidden, activation)
        self.actor = layer_init(nn.Linear(sizes[-1], num_actions), std=0.01)
        self.critic = layer_init(nn.Linear(sizes[-1], 1), std=1.0)

    def _input(self, obs: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        return torch.cat([obs, mask.to(obs.dtype)], dim=-1) if self.mask_input else obs

    def forward(self, obs: torch.Tensor, mask: torch.Tensor | None = None,
                privileged: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits, value); ``mask`` is needed when the network was built with ``mask_input``,
        ``privileged`` (B, privileged_size) when it was built with ``privileged_size``."""
        x = self._input(obs, mask)
        h = self.body(x)
        if self.critic_body is None:
            hc = h
        elif self.privileged_size:
            if privileged is None:
                raise ValueError("this network's critic reads privileged inputs: pass privileged=, or use "
                                 "policy_logits() to act")
            hc = self.critic_body(torch.cat([x, privileged.to(x.dtype)], dim=-1))
        else:
            hc = self.critic_body(x)
        return self.actor(h), self.critic(hc).squeeze(-1)

    def policy_logits(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The policy's logits alone (the critic is not run): what acting needs."""
        return self.actor(self.body(self._input(obs, mask)))

    def get_value(self, obs: torch.Tensor, mask: torch.Tensor | None = None,
                  privileged: torch.Tensor | None = None) -> torch.Tensor:
        return self.forward(obs, mask, privileged)[1]

    def get_action_and_value(self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None,
                             generator: torch.Generator | None = None, entropy: bool = True,
                             privileged: torch.Tensor | None = None):
        """(action, log_prob, entropy, value) under the masked policy; samples when ``action`` is None.
        ``entropy=False`` (acting in a rollout, where it is not used) returns None for it."""
        logits, value = self.forward(obs, mask, privileged)
        log_probs = masked_log_probs(logits, mask)
        if action is None:
            action = sample_masked(log_probs, generator)
        logprob = log_probs.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        return action, logprob, masked_entropy(log_probs) if entropy else None, value

    def sample_action(self, obs: torch.Tensor, mask: torch.Tensor,
                      generator: torch.Generator | None = None) -> torch.Tensor:
        """Actions sampled from the masked policy (no critic): how frozen snapshots play."""
        return sample_masked(masked_log_probs(self.policy_logits(obs, mask), mask), generator)


# ---------------------------------------------------------------------------- agent
class PPOAgent(Bot):
    """A trained :class:`ActorCritic` behind the agents' batched ``act(obs, mask)`` surface.

    ``deterministic=True`` (default) plays the most probable legal action; ``False`` samples
    from the policy with its own seeded ``torch.Generator``.
    """

    def __init__(self, network: ActorCritic, name: str = "ppo", deterministic: bool = True,
                 seed: int | None = None, device: str | torch.device = "cpu") -> None:
        self.name = name
        self.device = torch.device(device)
        self.network = network.to(self.device).eval()
        self.deterministic = deterministic
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**63))

    @torch.no_grad()
    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        if np.ndim(observations) == 1:
            return self.act(np.asarray(observations)[None], np.asarray(action_masks)[None])[0]
        obs = torch.as_tensor(network_input(observations, self.network.features), device=self.device)
        mask = torch.as_tensor(np.asarray(action_masks, bool), device=self.device)
        log_probs = masked_log_probs(self.network.policy_logits(obs, mask), mask)
        if self.deterministic:
            actions = log_probs.argmax(-1)
        else:
            actions = sample_masked(log_probs, self.generator)
        return actions.cpu().numpy().astype(np.int64)

    @torch.no_grad()
    def action_probs(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(B, 107) policy probabilities (0 on illegal actions); for analysis and play.py hints."""
        obs = torch.as_tensor(network_input(observations, self.network.features), device=self.device)
        mask = torch.as_tensor(np.asarray(action_masks, bool), device=self.device)
        return masked_log_probs(self.network.policy_logits(obs, mask), mask).exp().cpu().numpy()

    def __repr__(self) -> str:
        return f"PPOAgent(name={self.name!r}, deterministic={self.deterministic})"


# ------------------------------------------------------------------------ checkpoints
def save_checkpoint(path: str, checkpoint: dict[str, Any]) -> None:
    """Write atomically (temp file + rename), so a killed run never leaves half a file."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    torch.save(checkpoint, tmp)
    os.replace(tmp, path)


def _unreadable_reason(path: str, e: Exception) -> str:
    """Why ``torch.load(weights_only=True)`` refused ``path``, in a few words. torch's own message
    advises retrying with ``weights_only=False``, which would run whatever code the file holds: an
    okgin checkpoint never needs it (tensors and plain containers only), so that advice is dropped."""
    text = str(e)
    found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", text)
    if found:  # a pickle of another program's objects (numpy arrays, classes)
        return (f"it holds a {found.group(1)} object, and an okgin checkpoint holds only tensors and plain "
                "values (a file of another program?)")
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        head = b""
    if head.startswith(b"PK"):  # torch's zip format, but not one this torch reads
        first = "" if "Weights only load failed" in text else (text.strip().splitlines() or [""])[0][:80]
        return f"a torch file that cannot be read ({type(e).__name__}{': ' + first if first else ''})"
    if head and b"\0" not in head:
        try:
            start = head.decode("utf-8").strip().splitlines()[0][:30] if head.strip() else ""
            return f"it is a text file (it starts with {start!r}), not a torch file"
        except UnicodeDecodeError:
            pass
    return "not a torch file (corrupt, or another format)"


def load_checkpoint(path: str, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read and validate a checkpoint; clear errors for missing, corrupt or incompatible files."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"PPO checkpoint not found: {path}")
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds for a bad file
        raise ValueError(f"{path} is not a readable okgin PPO checkpoint: {_unreadable_reason(path, e)}") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not an okgin PPO checkpoint (no format={CHECKPOINT_FORMAT!r} entry)")
    if ckpt.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"{path}: checkpoint format version {ckpt.get('version')} is not supported "
                         f"(this code reads version {CHECKPOINT_VERSION})")
    if ckpt.get("obs_version") != OBS_VERSION or ckpt.get("obs_size") != OBS_SIZE:
        raise ValueError(f"{path} was trained on observation layout version {ckpt.get('obs_version')} "
                         f"(size {ckpt.get('obs_size')}), but okgin_env.game.observation is now version "
                         f"{OBS_VERSION} (size {OBS_SIZE}); retrain the agent for the new layout")
    features_version = ckpt.get("features_version", 1)
    if features_version != FEATURES_VERSION:
        raise ValueError(f"{path} was trained on input features version {features_version}, but agents.ppo now "
                         f"computes features version {FEATURES_VERSION}; retrain the agent on the new features")
    if ckpt.get("num_actions") != NUM_ACTIONS:
        raise ValueError(f"{path} has {ckpt.get('num_actions')} actions, expected {NUM_ACTIONS}")
    for key in ("model", "model_config"):
        if key not in ckpt:
            raise ValueError(f"{path}: checkpoint lacks the {key!r} entry")
    return ckpt


def network_from_checkpoint(ckpt: dict[str, Any]) -> ActorCritic:
    net = ActorCritic(**ckpt["model_config"])
    try:
        net.load_state_dict(ckpt["model"])
    except RuntimeError as e:
        raise ValueError(f"checkpoint weights do not fit its model_config: {str(e).splitlines()[0]}") from None
    return net


def load_widened(network: ActorCritic, ckpt: dict[str, Any]) -> None:
    """Load a checkpoint's weights into ``network``, which may be larger: more input features
    (``features`` later in ``FEATURES``), a critic body of its own where the checkpoint shared one
    trunk (it starts as a copy of that trunk), privileged critic inputs, wider hidden layers (as
    many, each at least as wide); all else equal. New inputs and new hidden units get zero weights
    into what the checkpoint had, so the widened network computes exactly what the checkpoint's
    did; training then learns to use them. New units' own weights come from a fixed seed, not the
    run's, so every run widened from one checkpoint starts from the same weights (and their
    weights can be averaged, ``trainer.soup``)."""
    old_cfg, new_cfg = dict(ckpt["model_config"]), dict(network.config)
    old_features, new_features = old_cfg.pop("features", "raw"), new_cfg.pop("features")
    old_priv, new_priv = old_cfg.pop("privileged_size", 0), new_cfg.pop("privileged_size", 0)
    old_shared, new_shared = old_cfg.pop("shared_trunk"), new_cfg.pop("shared_trunk")
    old_hidden, new_hidden = old_cfg.pop("hidden_sizes"), new_cfg.pop("hidden_sizes")
    if (old_cfg != new_cfg or FEATURES.index(old_features) > FEATURES.index(new_features)
            or (new_shared and not old_shared) or (old_priv and old_priv != new_priv)
            or len(old_hidden) != len(new_hidden) or any(o > n for o, n in zip(old_hidden, new_hidden))):
        raise ValueError(f"its network {ckpt['model_config']} does not fit this config's {network.config} (only "
                         f"the features may grow, in the order {' < '.join(FEATURES)}, a shared trunk may split "
                         f"into actor and critic bodies, a critic may gain privileged inputs, and hidden layers "
                         f"may widen, not deepen)")
    state = dict(ckpt["model"])
    if old_shared and not new_shared:  # the critic's own body starts as a copy of the shared trunk
        state.update({"critic_" + k: v for k, v in ckpt["model"].items() if k.startswith("body.")})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        fresh = ActorCritic(**network.config).state_dict()
    old_in, new_in = input_size(old_features), input_size(new_features)
    for key, w in state.items():
        wide = fresh[key].to(dtype=w.dtype, device=w.device)
        rows = w.shape[0]
        if w.ndim == 1:
            wide[:rows] = w
            state[key] = wide
            continue
        wide[:rows] = 0  # nothing new feeds what the checkpoint had
        if key.endswith("body.0.weight"):  # first layers: [observation, old features, (new features), mask, (privileged)]
            rest = w.shape[1] - old_in  # the mask inputs, if any (and an old critic's privileged ones)
            wide[:rows, :old_in] = w[:, :old_in]
            wide[:rows, new_in:new_in + rest] = w[:, old_in:]
        else:
            wide[:rows, :w.shape[1]] = w
        state[key] = wide
    network.load_state_dict(state)


def load_ppo_agent(path: str, seed: int | None = None, device: str = "cpu",
                   deterministic: bool = True) -> PPOAgent:
    """The agent stored in a PPO checkpoint (training or exported); used by ``agents.make("ppo:PATH")``."""
    ckpt = load_checkpoint(path, map_location=device)
    name = f"ppo:{os.path.basename(path)}"
    return PPOAgent(network_from_checkpoint(ckpt), name=name, deterministic=deterministic, seed=seed, device=device)


TRAINING_ONLY = ("optimizer", "train_state")  #: checkpoint entries only ``--resume`` needs


def export_checkpoint(src: str, dst: str) -> None:
    """Copy a checkpoint without optimiser and training state (a small file to ship)."""
    ckpt = load_checkpoint(src)
    small = {k: v for k, v in ckpt.items() if k not in TRAINING_ONLY}
    small["model"] = {k: v.clone() for k, v in small["model"].items()}
    save_checkpoint(dst, small)
