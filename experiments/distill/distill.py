"""Expert iteration: label a PPO agent's decisions with a search that follows it, then fit the agent to them.

    python -m experiments.distill collect --policy checkpoints/okgin_ppo.pt --hands 7200 --seed 101 \\
        --out runs/distill/d101.npz
    python -m experiments.distill fit --init-from checkpoints/okgin_ppo.pt --temperature 3 \\
        --out runs/distill/student.pt runs/distill/d101.npz runs/distill/d102.npz

``collect`` plays ``search:K:POLICY`` (determinized rollouts that follow the policy, the expert
modelling the opponent; ``okgin_agents.search``) against the expert on duplicate deals of its seed and
records every decision of the searcher: the observation, the mask, the policy's own choice, the
search's choice, and the candidates with their mean rollout values. It saves after every chunk of
hands and resumes a file it finds (same policy file and contents, K, seed, chunk).

``fit`` fine-tunes the policy (actor body and head; the critic is kept) towards the search, with
one of two targets: by default the search's choice where it overrode the policy (weighted
``--switch-weight`` times) and the policy's own move probabilities elsewhere, so that agreeing
decisions keep their (often close) preferences; with ``--temperature T`` the policy's
probabilities reweighted on every searched decision by exp(value lead / T) (:func:`search_targets`).
It holds out a tenth of the decisions and prints, after each epoch, the agreement with the search
there and what the policy's changes there are worth by the search's values (:func:`change_value`).
The search acts on what the searcher observes alone, so the student learns nothing a player could
not know. Round 8 of docs/experiments.md (and README.md beside this file) has what this gave for
the shipped agent. Research code, not installed: run it from the checkout's root.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads sleep (see train.py); before numba/torch load

import numba  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from okgin import evaluate
from okgin_agents.expert import ExpertAgent
from okgin_agents.ppo import (
    load_checkpoint,
    load_ppo_agent,
    masked_log_probs,
    network_from_checkpoint,
    network_input,
    save_checkpoint,
)
from okgin_agents.search import SearchAgent

FIELDS = ("obs", "mask", "policy", "label", "cand", "values")
CHUNK_SEED = 1_000  #: chunk c of seed s plays the duplicate deals of seed s * CHUNK_SEED + c


class Recorder:
    """Plays like ``search`` and keeps every decision it is asked for (an agent, for play_match)."""

    def __init__(self, search: SearchAgent) -> None:
        self.search, self.name = search, "search"
        self.rows: dict[str, list[np.ndarray]] = {f: [] for f in FIELDS}

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        label, cand, values = self.search.search(observations, action_masks)
        policy = cand[:, 0]  # the policy's own choice
        # float16 halves the file; it moves an input by < 3e-4 and no choice of the shipped policy
        for f, v in zip(FIELDS, (np.asarray(observations, np.float16), action_masks, policy, label, cand,
                                 values.astype(np.float32))):
            self.rows[f].append(np.asarray(v))
        return label


def _save(path: str, data: dict[str, np.ndarray], meta: dict) -> None:
    tmp = f"{path}.tmp{os.getpid()}.npz"
    np.savez_compressed(tmp, **data, meta=np.array(json.dumps(meta)))
    os.replace(tmp, path)


def _load(path: str) -> tuple[dict[str, np.ndarray], dict]:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"data file not found: {path}")
    try:
        with np.load(path) as f:
            found = {k: f[k] for k in (*FIELDS, "meta") if k in f}
    except Exception as e:  # noqa: BLE001 - numpy raises many kinds for a bad file
        raise ValueError(f"{path} is not a readable experiments.distill data file: {type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else ''}") from None
    missing = [k for k in (*FIELDS, "meta") if k not in found]
    if missing:
        raise ValueError(f"{path} is not an experiments.distill data file (lacks {', '.join(missing)})")
    return {k: found[k] for k in FIELDS}, json.loads(str(found["meta"]))


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def collect(policy: str, out: str, hands: int, seed: int, worlds: int = 10, chunk: int = 200,
            log=print) -> dict[str, np.ndarray]:
    """Record ``hands`` hands of ``search:worlds:policy`` against the expert into ``out`` (resumable)."""
    if hands < chunk or hands % chunk:
        raise ValueError(f"hands must be a positive multiple of the chunk size {chunk}, got {hands}")
    agent = load_ppo_agent(policy, seed=seed)  # a missing or bad checkpoint fails here, before any file is touched
    meta = {"policy": os.path.abspath(policy), "policy_sha256": file_sha256(policy), "worlds": worlds, "seed": seed,
            "chunk": chunk, "chunks": 0, "points": []}
    data = {f: np.zeros((0,), np.int64) for f in FIELDS}
    if os.path.exists(out):
        data, old = _load(out)
        same = {k: old.get(k) for k in ("policy", "policy_sha256", "worlds", "seed", "chunk")}
        if same != {k: meta[k] for k in same}:
            raise ValueError(f"{out} holds decisions of {same}, not of this command's "
                             f"{ {k: meta[k] for k in same} }; give another --out")
        meta = old
        log(f"resuming {out}: {meta['chunks']} chunks, {len(data['label'])} decisions")
    rec = Recorder(SearchAgent(seed=seed, worlds=worlds, policy=agent))
    expert = ExpertAgent()
    t0 = time.time()
    for c in range(meta["chunks"], hands // chunk):
        r = evaluate.play_match(rec, expert, chunk, seed=seed * CHUNK_SEED + c, batch=chunk)
        new = {f: np.concatenate(v) for f, v in rec.rows.items()}
        rec.rows = {f: [] for f in FIELDS}
        data = {f: new[f] if not len(data[f]) else np.concatenate([data[f], new[f]]) for f in FIELDS}
        meta["chunks"], meta["points"] = c + 1, meta["points"] + [float(r.points_per_hand)]
        _save(out, data, meta)
        log(f"chunk {c + 1}/{hands // chunk}: {len(data['label'])} decisions, "
            f"{np.mean(data['label'] != data['policy']):.3f} overridden, search {r.points_per_hand:+.2f} "
            f"points/hand against the expert ({time.time() - t0:.0f} s)")
    return data


def search_targets(start: np.ndarray, cand: np.ndarray, values: np.ndarray, temperature: float) -> np.ndarray:
    """Move probabilities improved by the search's values: on each searched row's candidates,
    start * exp((value - value of the default) / temperature), rescaled to the mass the start gave
    the candidates; elsewhere (other actions, rows not searched) the start's probabilities."""
    target = start.astype(np.float64).copy()
    rows = np.flatnonzero(~np.isnan(values[:, 0]))
    c, ok = cand[rows], cand[rows] >= 0
    p = np.where(ok, np.take_along_axis(target[rows], np.maximum(c, 0), 1), 0.0)
    lead = np.where(ok, values[rows] - values[rows, :1], 0.0)
    w = np.where(ok, p * np.exp(np.clip(lead / temperature, -50.0, 50.0)), 0.0)
    new = p.sum(1, keepdims=True) * w / np.maximum(w.sum(1, keepdims=True), 1e-300)
    r, j = np.nonzero(ok)
    target[rows[r], c[r, j]] = new[r, j]
    return target.astype(np.float32)


def change_value(choice: np.ndarray, cand: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """(value, share): the search's value lead of ``choice`` over the policy's own choice (column 0)
    summed over the rows and divided by their number (a change to an action the search did not
    value counts 0), and the share of rows where ``choice`` differs. On held-out rows this is an
    unbiased reading, in the search's own model, of what a change of policy is worth per decision."""
    pick = (cand == choice[:, None]) & (cand >= 0)
    lead = np.where(pick, values - values[:, :1], 0.0).sum(axis=1)
    lead = np.where(np.isnan(lead), 0.0, lead)
    return float(lead.sum() / max(len(choice), 1)), float(np.mean(choice != cand[:, 0]))


def fit(init_from: str, data_paths: Sequence[str], out: str, epochs: int = 3, learning_rate: float = 3e-5,
        switch_weight: float = 1.0, temperature: float | None = None, minibatch: int = 2048,
        val_fraction: float = 0.1, seed: int = 0, log=print) -> dict:
    """Fine-tune ``init_from``'s policy towards the recorded search (its choices, or with
    ``temperature`` its values: :func:`search_targets`); write ``out``."""
    if epochs < 1 or not learning_rate > 0 or not switch_weight > 0 or (temperature is not None and not temperature > 0):
        raise ValueError(f"need epochs >= 1 and learning_rate, switch_weight, temperature > 0; got epochs={epochs}, "
                         f"learning_rate={learning_rate}, switch_weight={switch_weight}, temperature={temperature}")
    parts = [_load(p)[0] for p in data_paths]
    d = {f: np.concatenate([p[f] for p in parts]) for f in FIELDS}
    if not len(d["label"]):
        raise ValueError("the data files hold no decisions")
    ckpt = load_checkpoint(init_from)
    net = network_from_checkpoint(ckpt)
    torch.manual_seed(seed)
    x = torch.as_tensor(network_input(d["obs"].astype(np.float32), net.features))
    m = torch.as_tensor(d["mask"].astype(bool))
    y = torch.as_tensor(d["label"].astype(np.int64))
    switched = torch.as_tensor(d["label"] != d["policy"])
    weight = torch.where(switched, float(switch_weight), 1.0)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    n_val = int(len(y) * val_fraction)
    val, train = order[:n_val], order[n_val:]
    with torch.no_grad():  # the start's own move probabilities: the target where the search agreed
        start = torch.cat([masked_log_probs(net.policy_logits(x[i:i + 8192], m[i:i + 8192]), m[i:i + 8192]).exp()
                           for i in range(0, len(y), 8192)])
    if temperature is None:  # the search's choice where it overrode the policy, the start elsewhere
        target = torch.where(switched[:, None], torch.nn.functional.one_hot(y, start.shape[1]).to(start.dtype), start)
    else:
        target = torch.as_tensor(search_targets(start.numpy(), d["cand"], d["values"], temperature))
    params = [*net.body.parameters(), *net.actor.parameters()]
    opt = torch.optim.Adam(params, lr=learning_rate)

    def accuracy(tag: str) -> None:
        with torch.no_grad():
            pred = masked_log_probs(net.policy_logits(x[val], m[val]), m[val]).argmax(-1)
        hit, s = pred == y[val], switched[val]
        gain, changed = change_value(pred.numpy(), d["cand"][val], d["values"][val])
        log(f"{tag}: held-out agreement with the search {hit.float().mean():.4f} "
            f"(overridden decisions {hit[s].float().mean():.3f}, n={int(s.sum())}; "
            f"others {hit[~s].float().mean():.4f}); {changed:.4f} of the decisions changed, "
            f"worth {gain:+.4f} points per decision by the search's values")

    log(f"{len(y)} decisions, {switched.float().mean():.3f} overridden by the search")
    accuracy("start")
    for epoch in range(epochs):
        rng.shuffle(train)
        for i in range(0, len(train), minibatch):
            b = torch.as_tensor(train[i:i + minibatch])
            lp = masked_log_probs(net.policy_logits(x[b], m[b]), m[b])
            ce = -(target[b] * torch.where(m[b], lp, 0.0)).sum(1)  # KL to the target up to a constant
            loss = (weight[b] * ce).sum() / weight[b].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        accuracy(f"epoch {epoch + 1}")
    new = {k: v for k, v in ckpt.items() if k not in ("optimizer", "train_state", "soup_of")}
    new["model"] = net.state_dict()
    new["distilled_from"] = {"init_from": init_from, "data": list(data_paths), "epochs": epochs,
                             "learning_rate": learning_rate, "switch_weight": switch_weight,
                             "temperature": temperature, "seed": seed}
    save_checkpoint(out, new)
    return new


@contextlib.contextmanager
def cpu_threads(n: int):
    """torch's and numba's threads (the expert and the search) set to ``n`` for the block, as
    train.py's num_threads sets them; the caller's settings are restored after."""
    old = torch.get_num_threads(), numba.get_num_threads()
    torch.set_num_threads(n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        torch.set_num_threads(old[0])
        numba.set_num_threads(old[1])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m experiments.distill", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="record search choices on the policy's games against the expert")
    c.add_argument("--policy", required=True, help="PPO checkpoint the search follows")
    c.add_argument("--out", required=True, help=".npz to write (resumed if it exists)")
    c.add_argument("--hands", type=int, required=True, help="hands to play (a multiple of --chunk)")
    c.add_argument("--seed", type=int, required=True, help="seed of the deals and of the search")
    c.add_argument("--worlds", type=int, default=10, help="K, first-pass worlds per candidate (default 10)")
    c.add_argument("--chunk", type=int, default=200, help="hands between saves (default 200)")
    c.add_argument("--threads", type=int, default=1, help="torch and numba threads (default 1)")
    f = sub.add_parser("fit", help="fine-tune a policy towards recorded search choices")
    f.add_argument("data", nargs="+", help=".npz files written by collect")
    f.add_argument("--init-from", required=True, help="PPO checkpoint to start from (normally collect's --policy)")
    f.add_argument("--out", required=True, help="checkpoint to write (never overwritten without --force)")
    f.add_argument("--force", action="store_true", help="replace --out if it exists")
    f.add_argument("--epochs", type=int, default=3, help="passes over the decisions (default 3)")
    f.add_argument("--learning-rate", type=float, default=3e-5, help="Adam's step size (default 3e-5)")
    f.add_argument("--switch-weight", type=float, default=1.0,
                   help="weight of the decisions where the search overrode the policy (default 1)")
    f.add_argument("--temperature", type=float, default=None,
                   help="fit the search's values instead of its choices: candidates reweighted by "
                        "exp(value lead / temperature), in points (default: fit its choices)")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--threads", type=int, default=1, help="torch and numba threads (default 1)")
    a = parser.parse_args(argv)
    if a.threads < 1:
        sys.exit(f"experiments.distill: error: --threads must be >= 1, got {a.threads}")
    try:
        if a.cmd == "fit" and os.path.exists(a.out) and not a.force:
            raise ValueError(f"{a.out} exists; pass --force to replace it")
        with cpu_threads(a.threads):
            if a.cmd == "collect":
                collect(a.policy, a.out, a.hands, a.seed, a.worlds, a.chunk)
            else:
                fit(a.init_from, a.data, a.out, a.epochs, a.learning_rate, a.switch_weight, a.temperature,
                    seed=a.seed)
    except (ValueError, FileNotFoundError) as e:
        sys.exit(f"experiments.distill: error: {e}")


if __name__ == "__main__":
    main()
