"""Policy improvement from rollouts of the real game: label, fit an advantage network, fold it in.

    python -m experiments.improve label --policy checkpoints/okgin_ppo.pt --hands 20480 --seed 201 \\
        --out runs/improve/l201
    python -m experiments.improve fit --policy checkpoints/okgin_ppo.pt --top 3 --out runs/improve/adv.pt \\
        runs/improve/l201 runs/improve/l202
    python -m experiments.improve combine --policy checkpoints/okgin_ppo.pt --advantage runs/improve/adv.pt \\
        --temperature 4 --out runs/improve/improved.pt

``label`` plays the policy (greedy) against the expert and, at every decision of the policy with
more than one legal action, copies the game's real state (``VectorGame.get_state``) once per legal
action, plays that action and then the policy and the expert to the end of the hand. Both players
are deterministic and the stock order is part of the state, so each copy's result (the policy's
points minus the expert's) is exact: Q(state, a) of the policy. The trainer may read the real
state, as the oracle critic does; the labels are only ever fitted on what the player observed.

``fit`` trains an advantage network A(observation, a), the actor's architecture and inputs,
started from the policy's actor body, by least squares on Q(state, a) - Q(state, policy's choice).
Over the states a player cannot tell apart it learns their mean, under the real distribution of
the hidden cards (the games actually played, not a uniform guess), which is the advantage of
deviating once from the policy: a policy that follows it, where it is learnt well, improves on
the policy (policy iteration). It holds out a tenth of the labelled chunks and prints, for each temperature, what
deviating where the network says so is worth there, measured with the exact labels.

``combine`` writes one checkpoint whose logits are the policy's plus A / temperature: the two
networks side by side in one network twice as wide (block-diagonal hidden layers, the heads
summed), so it plays as an ordinary ``ppo:`` agent on the observation alone. The critic is the
policy's, widened with zero weights. Round 9 of docs/experiments.md (and README.md beside this
file) has what one step gave the shipped agent: about +0.03 points per hand, within the noise.
Research code, not installed: run it from the checkout's root.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from collections.abc import Sequence

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads sleep (see train.py); before numba/torch load

import numpy as np  # noqa: E402
import torch  # noqa: E402

from okgin import evaluate  # noqa: E402
from okgin_env.agent_specs import Agent  # noqa: E402
from okgin_agents.expert import ExpertAgent  # noqa: E402
from okgin_agents.ppo import (  # noqa: E402
    TRAINING_ONLY,
    ActorCritic,
    load_checkpoint,
    load_ppo_agent,
    load_widened,
    network_from_checkpoint,
    network_input,
    save_checkpoint,
)
from okgin_agents.search import play_out  # noqa: E402
from okgin_env.game.actions import NUM_ACTIONS  # noqa: E402
from okgin_env.game.core import GameState, VectorGame  # noqa: E402
from okgin_env.game.rules import Rules  # noqa: E402

from experiments.distill.distill import cpu_threads, file_sha256  # noqa: E402

CHUNK_SEED = 1_000  #: chunk c of seed s plays the deals of seed s * CHUNK_SEED + c
#: entries of the policy's checkpoint that do not describe the new network (a training
#: checkpoint's optimiser and games in flight would make it look resumable; soup_of names its parts)
_NOT_CARRIED = ("soup_of", *TRAINING_ONLY)
FIELDS = ("obs", "mask", "choice", "row", "action", "value")


# ------------------------------------------------------------------ labelling
def rollout_values(state: GameState, first: np.ndarray, seat: np.ndarray, policy: Agent, opponent: Agent,
                   rules: Rules) -> np.ndarray:
    """For each game of ``state``: play ``first``, then ``policy`` for player ``seat`` and
    ``opponent`` for the other to the end of the hand; the policy's points minus the opponent's."""
    def moves(out, alive, finished, ply):
        return evaluate._act(policy, opponent, out, seat[alive], ~finished)

    return seat_margin(play_out(state, first, moves, rules), seat)


def seat_margin(points: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """(n, 2) points of both players -> (n,) player ``seat``'s minus the other's."""
    rows = np.arange(len(seat))
    return points[rows, seat] - points[rows, 1 - seat]


def label_rows(game: VectorGame, rows: np.ndarray, mask: np.ndarray, seat: np.ndarray, policy: Agent,
               opponent: Agent) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every legal action of ``rows`` of ``game`` (their masks in ``mask``; ``seat``: the policy's
    player in every game) rolled out from the real state: (index into rows, action, value) of
    each (row, action) pair."""
    r, a = np.nonzero(mask)
    state = game.get_state(rows[r])
    return r, a, rollout_values(state, a, seat[rows[r]], policy, opponent, game.rules)


def label_chunk(policy: Agent, hands: int, seed: int, rules: Rules | None = None) -> dict[str, np.ndarray]:
    """Play ``hands`` hands of the policy against the expert (deals of ``seed``, the policy's seat
    alternating) and label every decision of the policy that has more than one legal action.

    Fields: ``obs``, ``mask``, ``choice`` (the policy's move) and ``hand`` per decision; ``row``
    (its decision), ``action`` and ``value`` per rollout; ``points`` per hand as it was played
    (which the rollout of each decision's own choice reproduces exactly)."""
    rules = Rules() if rules is None else rules
    expert = ExpertAgent()
    decks, dealers = evaluate.deal_decks(hands, seed)
    seat = (np.arange(hands) % 2).astype(np.int64)
    game = VectorGame(hands, rules, episode="hand", seed=seed)
    out = game.reset(decks=decks, dealers=dealers)
    parts: dict[str, list[np.ndarray]] = {f: [] for f in (*FIELDS, "hand")}
    points = np.zeros(hands, np.int16)  # the policy's points minus the expert's in each hand as played
    done = 0
    playing = out.current_player >= 0
    while playing.any():
        actions = evaluate._act(policy, expert, out, seat, playing)
        mine = np.flatnonzero(playing & (out.current_player == seat) & (out.legal_action_mask.sum(1) > 1))
        if len(mine):
            r, a, v = label_rows(game, mine, out.legal_action_mask[mine], seat, policy, expert)
            parts["obs"].append(out.observation[mine].astype(np.float16))
            parts["mask"].append(out.legal_action_mask[mine])
            parts["choice"].append(actions[mine].astype(np.int16))
            parts["row"].append((r + done).astype(np.int32))
            parts["action"].append(a.astype(np.int16))
            parts["value"].append(v.astype(np.int16))  # points are whole numbers
            parts["hand"].append(mine.astype(np.int32))
            done += len(mine)
        out = game.step(actions)
        over = np.flatnonzero(out.hand_over)
        if len(over):
            points[over] = seat_margin(out.result.points[over], seat[over])
        playing = (out.current_player >= 0) & ~out.hand_over
    return {**{f: np.concatenate(v) if v else np.zeros(0) for f, v in parts.items()}, "points": points}


def _chunk_path(out: str, c: int) -> str:
    return os.path.join(out, f"chunk{c:05d}.npz")


def label(policy: str, out: str, hands: int, seed: int, chunk: int = 512, log=print) -> int:
    """Label ``hands`` hands of the policy against the expert into the folder ``out``, one file per
    ``chunk`` hands (deals of seed ``seed * CHUNK_SEED + c``); chunks already there are kept, so a
    stopped run resumes. Returns the number of chunks in the folder."""
    if chunk < 1 or hands < chunk or hands % chunk:
        raise ValueError(f"hands must be a positive multiple of the chunk size {chunk}, got {hands}")
    agent = load_ppo_agent(policy, seed=seed)  # a missing or bad checkpoint fails here, before any file is touched
    meta = {"policy": os.path.abspath(policy), "policy_sha256": file_sha256(policy), "seed": seed, "chunk": chunk}
    meta_path = os.path.join(out, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            old = json.load(f)
        if old != meta:
            raise ValueError(f"{out} holds labels of {old}, not of this command's {meta}; give another --out")
    elif os.path.exists(out) and os.listdir(out):
        raise ValueError(f"{out} exists and is not an experiments.improve label folder; give another --out")
    else:
        os.makedirs(out, exist_ok=True)
        with open(meta_path, "w") as f:
            json.dump(meta, f)
    t0 = time.time()
    for c in range(hands // chunk):
        path = _chunk_path(out, c)
        if os.path.exists(path):
            continue
        data = label_chunk(agent, chunk, seed * CHUNK_SEED + c)
        tmp = f"{path}.tmp{os.getpid()}.npz"
        np.savez_compressed(tmp, **data)
        os.replace(tmp, path)
        log(f"chunk {c + 1}/{hands // chunk}: {len(data['choice'])} decisions, {len(data['value'])} "
            f"rollouts ({time.time() - t0:.0f} s)", flush=True)
    return hands // chunk


# ------------------------------------------------------------------ fitting
def load_labels(folders: Sequence[str]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """All chunks of the label folders as one set of decisions: obs (N, OBS_SIZE) float16, mask
    (N, A), choice (N,), adv (N, A) float32 labelled advantages over the choice (NaN where not
    labelled), and the (N,) chunk number of each decision over all folders."""
    obs, mask, choice, adv, chunk_of = [], [], [], [], []
    n_chunks = 0
    for folder in folders:
        paths = sorted(glob.glob(os.path.join(folder, "chunk[0-9][0-9][0-9][0-9][0-9].npz")))  # not a killed save's .tmp
        if not os.path.isfile(os.path.join(folder, "meta.json")) or not paths:
            raise ValueError(f"{folder} is not an experiments.improve label folder with chunks (run label first)")
        for path in paths:
            with np.load(path) as f:
                d = {k: f[k] for k in FIELDS}
            n = len(d["choice"])
            q = np.full((n, NUM_ACTIONS), np.nan, np.float32)
            q[d["row"], d["action"]] = d["value"]
            base = q[np.arange(n), d["choice"]]
            obs.append(d["obs"])
            mask.append(d["mask"])
            choice.append(d["choice"].astype(np.int64))
            adv.append(q - base[:, None])
            chunk_of.append(np.full(n, n_chunks))
            n_chunks += 1
    data = {"obs": np.concatenate(obs), "mask": np.concatenate(mask), "choice": np.concatenate(choice),
            "adv": np.concatenate(adv)}
    return data, np.concatenate(chunk_of)


def _inputs(net: ActorCritic, obs: np.ndarray, batch: int = 8192) -> np.ndarray:
    """network_input of every row, as float16 to halve the memory (computed in batches)."""
    return np.concatenate([network_input(obs[i:i + batch].astype(np.float32), net.features).astype(np.float16)
                           for i in range(0, len(obs), batch)])


def advantage_net(policy_ckpt: dict) -> ActorCritic:
    """The actor's architecture and inputs, body started from the policy's, head at zero (A = 0)."""
    net = network_from_checkpoint(policy_ckpt)
    with torch.no_grad():
        net.actor.weight.zero_()
        net.actor.bias.zero_()
    return net


def _predict(net: ActorCritic, x: np.ndarray, mask: np.ndarray, batch: int = 8192) -> np.ndarray:
    out = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out.append(net.policy_logits(torch.as_tensor(x[i:i + batch].astype(np.float32)),
                                         torch.as_tensor(mask[i:i + batch])).numpy())
    return np.concatenate(out)


def deviation_gain(logits: np.ndarray, adv_pred: np.ndarray, adv: np.ndarray, mask: np.ndarray,
                   choice: np.ndarray, temperature: float) -> tuple[float, float]:
    """Play argmax(logits + adv_pred / temperature) over the legal actions instead of ``choice``:
    (fraction of decisions changed, mean exact advantage of the new action per decision)."""
    score = np.where(mask, logits + adv_pred / temperature, -np.inf)
    new = score.argmax(1)
    gain = adv[np.arange(len(new)), new]
    return float((new != choice).mean()), float(np.nan_to_num(gain).mean())


TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)


def fit(policy: str, folders: Sequence[str], out: str, epochs: int = 3, learning_rate: float = 1e-4,
        batch: int = 1024, seed: int = 0, top: int = 0, log=print) -> dict:
    """Fit the advantage network (module docstring) and save it as a PPO-format checkpoint whose
    actor head outputs A in points; prints held-out diagnostics after every epoch. ``top`` > 0
    fits only the labels of the policy's ``top`` most probable actions of each decision (the
    plausible alternatives), where the capacity matters; the diagnostics still play every legal
    action, as the combined network would."""
    ckpt = load_checkpoint(policy)
    start = network_from_checkpoint(ckpt).eval()
    net = advantage_net(ckpt)
    data, chunk_of = load_labels(folders)
    t0 = time.time()
    x = _inputs(net, data["obs"])
    held = chunk_of % 10 == 0
    tr, ho = np.flatnonzero(~held), np.flatnonzero(held)
    log(f"{len(data['choice'])} decisions ({len(ho)} held out), {np.isfinite(data['adv']).sum()} labelled actions; "
        f"inputs in {time.time() - t0:.0f} s", flush=True)
    logits_ho = _predict(start, x[ho], data["mask"][ho])
    adv = torch.as_tensor(np.nan_to_num(data["adv"]))
    keep = np.isfinite(data["adv"])
    if top:
        logits = np.where(data["mask"], _predict(start, x, data["mask"]), -np.inf)
        ranked = np.argsort(-logits, axis=1, kind="stable")[:, :top]
        plausible = np.zeros_like(keep)
        np.put_along_axis(plausible, ranked, True, axis=1)
        keep &= plausible
        log(f"fitting the labels of each decision's {top} most probable actions: {keep.sum()}", flush=True)
    labelled = torch.as_tensor(keep)
    opt = torch.optim.Adam(net.parameters(), lr=learning_rate)
    g = torch.Generator().manual_seed(seed)
    scale = 10.0  # the head predicts A / 10 points: unit-sized targets for Adam

    def report(tag: str) -> dict:
        pred = _predict(net, x[ho], data["mask"][ho]) * scale
        pred = pred - pred[np.arange(len(ho)), data["choice"][ho]][:, None]
        a, m = data["adv"][ho], np.isfinite(data["adv"][ho])
        mse = float(np.mean((pred[m] - a[m]) ** 2))
        zero = float(np.mean(a[m] ** 2))
        res = {"mse": mse, "mse_zero": zero}
        line = [f"{tag}: held-out mse {mse:.2f} (A = 0: {zero:.2f})"]
        for t in TEMPERATURES:
            changed, gain = deviation_gain(logits_ho, pred, a, data["mask"][ho], data["choice"][ho], t)
            res[t] = (changed, gain)
            line.append(f"T={t}: {changed:.3f} changed, {gain:+.4f} pts/decision")
        best = np.where(data["mask"][ho], pred, -np.inf).argmax(1)  # the policy's choice unless A > 0 elsewhere
        new = np.where(pred[np.arange(len(ho)), best] > 0, best, data["choice"][ho])
        gain = float(np.nan_to_num(a[np.arange(len(ho)), new]).mean())
        res["argmax"] = (float((new != data["choice"][ho]).mean()), gain)
        line.append(f"argmax A: {res['argmax'][0]:.3f} changed, {gain:+.4f}")
        log("; ".join(line), flush=True)
        return res

    res = report("start")
    for epoch in range(epochs):
        net.train()
        order = tr[torch.randperm(len(tr), generator=g).numpy()]
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            xb = torch.as_tensor(x[idx].astype(np.float32))
            mb = torch.as_tensor(data["mask"][idx])
            pred = net.policy_logits(xb, mb)
            pred = pred - pred.gather(1, torch.as_tensor(data["choice"][idx])[:, None])
            lab = labelled[idx]
            loss = ((pred - adv[idx] / scale)[lab] ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        res = report(f"epoch {epoch + 1} ({time.time() - t0:.0f} s)")
    with torch.no_grad():  # the head outputs points from here on
        net.actor.weight.mul_(scale)
        net.actor.bias.mul_(scale)
    saved = {k: v for k, v in ckpt.items() if k not in _NOT_CARRIED}
    saved.update(model=net.state_dict(), advantage_of=os.path.abspath(policy),
                 advantage_fit={"folders": [os.path.abspath(f) for f in folders], "epochs": epochs,
                                "learning_rate": learning_rate, "seed": seed, "top": top,
                                "held_out": {str(k): v for k, v in res.items()}})
    save_checkpoint(out, saved)
    return res


# ------------------------------------------------------------------ combining
def combine(policy: str, advantage: str, temperature: float, out: str) -> None:
    """One checkpoint whose logits are the policy's plus advantage / temperature (module docstring)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0 (points per unit of logit), got {temperature!r}")
    pc, ac = load_checkpoint(policy), load_checkpoint(advantage)
    p_hidden, a_hidden = pc["model_config"]["hidden_sizes"], ac["model_config"]["hidden_sizes"]
    same = {k: v for k, v in pc["model_config"].items() if k != "hidden_sizes"}
    if {k: v for k, v in ac["model_config"].items() if k in same} != same or len(p_hidden) != len(a_hidden):
        raise ValueError(f"{advantage} does not read what {policy} reads: {ac['model_config']} against "
                         f"{pc['model_config']} (fit it from this policy)")
    wide = [p + a for p, a in zip(p_hidden, a_hidden)]
    net = ActorCritic(**dict(pc["model_config"], hidden_sizes=wide))
    load_widened(net, pc)  # the policy and its critic in the first units, zero weights from the new ones
    state = net.state_dict()
    adv = ac["model"]
    layers = len(p_hidden)
    with torch.no_grad():
        for i in range(layers):
            w, b = f"body.{2 * i}.weight", f"body.{2 * i}.bias"
            lo, hi = p_hidden[i], wide[i]
            state[b][lo:hi] = adv[b]
            if i == 0:
                state[w][lo:hi] = adv[w]  # both read the same inputs
            else:
                state[w][lo:hi] = 0
                state[w][lo:hi, p_hidden[i - 1]:] = adv[w]
        state["actor.weight"][:, p_hidden[-1]:] = adv["actor.weight"] / temperature
        state["actor.bias"] += adv["actor.bias"] / temperature
    net.load_state_dict(state)
    saved = {k: v for k, v in pc.items() if k not in _NOT_CARRIED}
    saved.update(model_config=net.config, model=net.state_dict(),
                 improved_by={"advantage": os.path.abspath(advantage), "temperature": temperature})
    save_checkpoint(out, saved)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m experiments.improve", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    lab = sub.add_parser("label", help="roll out every legal action of the policy's decisions against the expert")
    lab.add_argument("--policy", required=True, help="PPO checkpoint to label")
    lab.add_argument("--out", required=True, help="folder to write chunks into (resumed if it holds some)")
    lab.add_argument("--hands", type=int, required=True, help="hands to play (a multiple of --chunk)")
    lab.add_argument("--seed", type=int, required=True, help="seed of the deals")
    lab.add_argument("--chunk", type=int, default=512, help="hands per file (default 512)")
    f = sub.add_parser("fit", help="fit the advantage network to label folders")
    f.add_argument("folders", nargs="+", help="folders written by label (all of one policy)")
    f.add_argument("--policy", required=True, help="the PPO checkpoint the folders labelled")
    f.add_argument("--out", required=True, help="checkpoint to write (never overwritten without --force)")
    f.add_argument("--epochs", type=int, default=3, help="passes over the decisions (default 3)")
    f.add_argument("--learning-rate", type=float, default=1e-4, help="Adam's step size (default 1e-4)")
    f.add_argument("--seed", type=int, default=0, help="seed of the order of the decisions (default 0)")
    f.add_argument("--top", type=int, default=0,
                   help="fit only the labels of the policy's TOP most probable actions (default 0: all)")
    c = sub.add_parser("combine", help="write the policy improved by a fitted advantage network")
    c.add_argument("--policy", required=True, help="the PPO checkpoint the advantage network was fitted on")
    c.add_argument("--advantage", required=True, help="checkpoint written by fit")
    c.add_argument("--temperature", type=float, required=True,
                   help="points of advantage per unit of logit (smaller: follow the advantage more)")
    c.add_argument("--out", required=True, help="checkpoint to write (never overwritten without --force)")
    for p in (lab, f, c):
        p.add_argument("--threads", type=int, default=1, help="torch and numba threads (default 1)")
    for p in (f, c):
        p.add_argument("--force", action="store_true", help="replace --out if it exists")
    a = parser.parse_args(argv)
    if a.threads < 1:
        parser.error(f"--threads must be >= 1, got {a.threads}")
    try:
        if a.cmd != "label" and os.path.exists(a.out) and not a.force:
            raise ValueError(f"{a.out} exists; pass --force to replace it")
        with cpu_threads(a.threads):
            if a.cmd == "label":
                label(a.policy, a.out, a.hands, a.seed, a.chunk)
            elif a.cmd == "fit":
                if a.epochs < 1 or not a.learning_rate > 0 or a.top < 0:
                    raise ValueError(f"--epochs must be >= 1, --learning-rate > 0 and --top >= 0, got {a.epochs}, "
                                     f"{a.learning_rate} and {a.top}")
                fit(a.policy, a.folders, a.out, a.epochs, a.learning_rate, seed=a.seed, top=a.top)
            else:
                combine(a.policy, a.advantage, a.temperature, a.out)
    except (ValueError, FileNotFoundError) as e:
        sys.exit(f"experiments.improve: error: {e}")


if __name__ == "__main__":
    main()
