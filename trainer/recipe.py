"""Run a recipe: the training runs and means of weights that make an agent, in order, as one command.

    python -m okgin_trainer.recipe configs/recipes/shipped.yaml             # the shipped agent (~9 h, 2 cores)
    python -m okgin_trainer.recipe configs/recipes/shipped.yaml --dry-run   # print the commands, run nothing
    python -m okgin_trainer.recipe configs/recipes/shipped.yaml --scale 0.001 --out runs/smoke   # smoke run

A recipe is a YAML file with one key, ``steps``: a list run top to bottom. Each step has a
``name`` (its folder under the run folder, and how later steps refer to it) and a ``kind``:

* ``train``: ``python -m okgin.train --config CONFIG`` with ``set`` (a mapping of config keys,
  each passed as ``--set key=value``), ``init_from`` (the *name* of an earlier step, whose output
  the run starts from) and ``output`` (``checkpoint``, the last update, by default; or ``best``,
  the best in-training evaluation). ``config`` is relative to the recipe file.
* ``soup``: ``python -m okgin_trainer.soup`` over ``inputs``, a list of earlier steps' names
  (the mean of their weights; the first input's network and config are kept).

Everything goes into one run folder (``--out``, default ``runs/<recipe file name>``): a train
step's run is ``OUT/<name>/`` (``checkpoint.pt``, ``best.pt``, TensorBoard events), a soup is
``OUT/<name>/soup.pt``. The last step's output is the recipe's result.

Resuming: ``OUT/recipe-state.json`` records each step's settings when it starts and marks it
finished once its program exited cleanly and its output exists (the file is replaced atomically,
so a kill never leaves half of it). Running the same command again skips finished steps, resumes
an unfinished train step from its ``checkpoint.pt`` (``--resume``: the same run, exactly, as
``okgin.train`` resumes any run) or starts it again if it died before its first checkpoint
(``okgin.train`` moves that attempt aside), and redoes an unfinished soup. A started step whose
settings differ from what the recipe gives now (another ``--scale``, an edited config) is an
error: a run folder never mixes two recipes. ``--dry-run`` prints what a run would do now.

``--scale F`` multiplies every budget of every train step (``SCALED_KEYS``: total_timesteps,
bc_decisions, eval_hands, snapshot_min_hands) by F, with floors that keep a run valid (at least
one update, one decision, two hands); intervals counted in updates (eval_every,
checkpoint_every, snapshot_every) stay as they are. ``--set KEY=VALUE`` applies to every train
step after the recipe's own settings (e.g. ``--set num_threads=2``, ``--set device=cuda``).

Steps run in this process: a train step's command line goes through the trainer's own reading
(``okgin_trainer.config.parse_cli``) to ``okgin_trainer.training.train``, a soup step's through
``okgin_trainer.soup.main``; the printed command is what the step runs, and typing it by hand runs
the same thing. Every run seeds its global RNGs and sets its thread counts itself; torch's and
numba's thread counts are put back after each step, so a step that set them (``num_threads``) leaves
the next one where a fresh interpreter would start. A step that fails (any error) is reported by
name and the recipe stops, leaving the state file as it was, so the same command resumes it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
from dataclasses import asdict, dataclass, field

import yaml
from okgin_trainer.cli import run_cli

#: config keys --scale multiplies, with the least value each may take (total_timesteps: see _scaled)
SCALED_KEYS = {"total_timesteps": 1, "bc_decisions": 1, "eval_hands": 2, "snapshot_min_hands": 1}
STEP_KEYS = {"train": ("name", "kind", "config", "set", "init_from", "output"),
             "soup": ("name", "kind", "inputs")}
OUTPUTS = {"checkpoint": "checkpoint.pt", "best": "best.pt"}  #: a train step's ``output`` -> its file
RECIPE_KEYS = ("steps",)
RESERVED_SET_KEYS = ("run_dir", "run_name", "init_from")  #: the recipe decides these itself
STATE_FILE = "recipe-state.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass
class Step:
    """One step of a recipe, checked: its paths are resolved, references are to earlier steps."""
    name: str
    kind: str  # train | soup
    config: str = ""  # train: absolute path of the YAML config
    overrides: dict = field(default_factory=dict)  # train: the step's own config keys (recipe ``set``)
    init_from: str = ""  # train: name of an earlier step
    output: str = "checkpoint"  # train: checkpoint | best
    inputs: list = field(default_factory=list)  # soup: names of earlier steps


def load_recipe(path: str) -> list[Step]:
    """The steps of recipe file ``path``; a bad file is a one-line ValueError / FileNotFoundError naming the problem."""
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"recipe file not found: {path}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML: {' '.join(str(e).split())}") from None
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list) or not data["steps"]:
        raise ValueError(f"{path}: a recipe is a YAML mapping with a non-empty list under 'steps'")
    unknown = sorted(set(data) - set(RECIPE_KEYS))
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {', '.join(map(str, unknown))}; a recipe has only: {', '.join(RECIPE_KEYS)}")
    base = os.path.dirname(os.path.abspath(path))
    steps: list[Step] = []
    for i, raw in enumerate(data["steps"], 1):
        where = f"{path}: step {i}"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: a step is a mapping with name and kind, got {raw!r}")
        name = raw.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name) or name == STATE_FILE:
            raise ValueError(f"{where}: name {name!r} must be a folder name of letters, digits, '_', '.', '-'")
        where = f"{path}: step {name!r}"
        if any(s.name == name for s in steps):
            raise ValueError(f"{where}: the name is used twice; each step needs its own")
        kind = raw.get("kind")
        if kind not in STEP_KEYS:
            raise ValueError(f"{where}: kind {kind!r} is not one of {', '.join(STEP_KEYS)}")
        unknown = sorted(set(raw) - set(STEP_KEYS[kind]))
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; a {kind} step takes: "
                             f"{', '.join(STEP_KEYS[kind])}")
        earlier = [s.name for s in steps]

        def reference(ref, key: str) -> str:
            if ref not in earlier:
                raise ValueError(f"{where}: {key} {ref!r} is not the name of an earlier step (earlier steps: "
                                 f"{', '.join(earlier) or 'none'})")
            return ref

        if kind == "soup":
            inputs = raw.get("inputs")
            if not isinstance(inputs, list) or len(inputs) < 2:
                raise ValueError(f"{where}: inputs must be a list of two or more earlier steps' names, got {inputs!r}")
            steps.append(Step(name, kind, inputs=[reference(r, "input") for r in inputs]))
            continue
        if not isinstance(raw.get("config"), str):
            raise ValueError(f"{where}: a train step needs config, a YAML config path relative to the recipe file")
        config = os.path.normpath(os.path.join(base, raw["config"]))
        if not os.path.isfile(config):
            raise FileNotFoundError(f"{where}: config file not found: {raw['config']} (looked for {config})")
        overrides = raw.get("set") or {}
        if not isinstance(overrides, dict):
            raise ValueError(f"{where}: set must be a mapping of config keys to values, got {overrides!r}")
        reserved = sorted(set(overrides) & set(RESERVED_SET_KEYS))
        if reserved:
            raise ValueError(f"{where}: set may not give {', '.join(reserved)}: the run folder is the recipe's "
                             f"(OUT/<step name>) and init_from names an earlier step as the step's own key")
        output = raw.get("output", "checkpoint")
        if output not in OUTPUTS:
            raise ValueError(f"{where}: output {output!r} is not one of {', '.join(OUTPUTS)}")
        init_from = raw.get("init_from") or ""
        if init_from:
            reference(init_from, "init_from")
        steps.append(Step(name, kind, config=config, overrides=dict(overrides), init_from=init_from, output=output))
    return steps


def output_path(out: str, step: Step) -> str:
    """Where ``step`` leaves its result in run folder ``out``."""
    return os.path.join(out, step.name, OUTPUTS[step.output] if step.kind == "train" else "soup.pt")


def yaml_value(value) -> str:
    """``value`` as the text of ``--set key=TEXT`` (YAML that reads back as ``value``)."""
    text = yaml.safe_dump([value], default_flow_style=True, width=1 << 30).strip()[1:-1]  # a scalar alone ends in '...'
    if yaml.safe_load(text) != value:
        raise ValueError(f"value {value!r} does not survive --set (YAML reads its text {text!r} back differently)")
    return text


def _scaled(config: dict, scale: float) -> dict:
    """The budgets of a train run's resolved ``config`` multiplied by ``scale`` (floors: ``SCALED_KEYS``, one update)."""
    out = {k: max(least, round(config[k] * scale)) for k, least in SCALED_KEYS.items()}
    out["total_timesteps"] = max(out["total_timesteps"], config["num_envs"] * config["num_steps"])
    out["eval_hands"] += out["eval_hands"] % 2  # duplicate deals: each deal is played from both seats
    return {k: v for k, v in out.items() if v != config[k]}


def _display(path: str) -> str:
    """``path`` relative to the working directory when it lies below it (shorter commands), else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


@dataclass
class Plan:
    """What running one step means now: its command, and the settings that identify it in the state file."""
    step: Step
    command: list  # argv
    settings: dict  # compared with the state file's record of the step
    status: str  # todo | resume | done


def plan(steps: list[Step], out: str, scale: float = 1.0, extra: dict | None = None,
         state: dict | None = None) -> list[Plan]:
    """The command of every step of a recipe run into folder ``out`` (``extra``: ``--set`` for every train step),
    checking each train step's config as ``okgin.train`` would (a one-line ValueError naming the step)."""
    from okgin_trainer.config import args_from_dict  # torch and the bots load here: not needed to read a recipe
    from okgin_trainer.resume import RESUME_OVERRIDABLE

    # keys that may differ between the sessions of one run (threads, device, logging), so not part of its identity
    free = tuple(k for k in RESUME_OVERRIDABLE if k != "total_timesteps")
    extra, state = extra or {}, state or {}
    by_name = {s.name: s for s in steps}
    plans = []
    for step in steps:
        record = state.get(step.name)
        if step.kind == "soup":
            inputs = [output_path(out, by_name[ref]) for ref in step.inputs]
            target = output_path(out, step)
            settings = {"kind": "soup", "inputs": [os.path.abspath(p) for p in inputs]}
            command = [sys.executable, "-m", "okgin_trainer.soup", "--out", _display(target),
                       *map(_display, inputs)] + (["--force"] if os.path.exists(target) else [])
            status = "done" if record and record.get("finished") else "todo"
        else:
            overrides = dict(step.overrides)
            if step.init_from:
                overrides["init_from"] = _display(output_path(out, by_name[step.init_from]))
            overrides.update(extra)
            try:
                with open(step.config, encoding="utf-8") as f:
                    config = yaml.safe_load(f) or {}
                if not isinstance(config, dict):
                    raise ValueError("a config must be a YAML mapping of keys to values")
                if scale != 1.0:
                    overrides.update(_scaled(asdict(args_from_dict({**config, **overrides})), scale))
                overrides.update(run_dir=_display(out), run_name=step.name)
                resolved = asdict(args_from_dict({**config, **overrides}))
            except (ValueError, yaml.YAMLError) as e:
                raise ValueError(f"step {step.name!r} ({_display(step.config)}): {' '.join(str(e).split())}") from None
            for key in ("init_from", "run_dir"):
                resolved[key] = os.path.abspath(resolved[key]) if resolved[key] else ""
            settings = {"kind": "train", **{k: v for k, v in resolved.items() if k not in free}}
            checkpoint = os.path.join(out, step.name, OUTPUTS["checkpoint"])
            if record and record.get("finished"):
                status = "done"
            elif record and os.path.isfile(checkpoint):
                status = "resume"
            else:
                status = "todo"
            program = [sys.executable, "-m", "okgin.train"]
            if status == "resume":  # the run's config is in its checkpoint; only these keys may change
                command = program + ["--resume", _display(checkpoint)] + [
                    a for k, v in extra.items() if k in free for a in ("--set", f"{k}={yaml_value(v)}")]
            else:
                command = program + ["--config", _display(step.config)] + [
                    a for k, v in overrides.items() for a in ("--set", f"{k}={yaml_value(v)}")]
        if record and record.get("settings") != settings:
            changed = sorted(k for k in set(settings) | set(record.get("settings", {}))
                             if settings.get(k) != record.get("settings", {}).get(k))
            raise ValueError(f"step {step.name!r} in {out} was started with other settings (differing: "
                             f"{', '.join(changed)}); a run folder holds one recipe: pass another --out")
        if status == "done" and not os.path.isfile(output_path(out, step)):
            raise ValueError(f"step {step.name!r} is marked finished in {os.path.join(out, STATE_FILE)} but its output "
                             f"{output_path(out, step)} is missing; pass another --out to start again")
        plans.append(Plan(step, command, settings, status))
    return plans


def read_state(out: str) -> dict:
    """The steps recorded in run folder ``out`` ({} for a new run)."""
    path = os.path.join(out, STATE_FILE)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
        return dict(state["steps"])
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a recipe state file ({e}); pass another --out") from None


def write_state(out: str, state: dict) -> None:
    """Replace ``OUT/recipe-state.json`` atomically (a temporary file, then a rename)."""
    path = os.path.join(out, STATE_FILE)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"steps": state}, f, indent=1)
    os.replace(tmp, path)


def run_step(p: Plan) -> None:
    """Run one step in this process, as its command (``p.command``: python -m MODULE ARGS) would: a train step
    through ``okgin_trainer.config.parse_cli`` and ``okgin_trainer.training.train``, a soup through
    ``okgin_trainer.soup.main``. Torch's and numba's thread counts are put back afterwards."""
    import numba
    import torch
    from okgin_trainer import soup
    from okgin_trainer.config import parse_cli
    from okgin_trainer.training import train

    argv = p.command[3:]
    threads = torch.get_num_threads(), numba.get_num_threads()
    try:
        if p.step.kind == "train":
            train(*parse_cli(argv, description=f"recipe step {p.step.name}", default_config=p.step.config))
        else:
            soup.main(argv)
    finally:
        torch.set_num_threads(threads[0])
        numba.set_num_threads(threads[1])


def run(recipe: str, out: str | None = None, scale: float = 1.0, extra: dict | None = None,
        dry_run: bool = False) -> str:
    """Run (or with ``dry_run`` print) every unfinished step of ``recipe`` into ``out``; returns the result's path."""
    if not scale > 0:
        raise ValueError(f"--scale {scale} must be a number > 0 (e.g. 0.01 for a smoke run)")
    steps = load_recipe(recipe)
    out = out or os.path.join("runs", os.path.splitext(os.path.basename(recipe))[0])
    state = read_state(out)
    plans = plan(steps, out, scale, extra, state)
    result = output_path(out, steps[-1])
    for i, p in enumerate(plans, 1):
        head = f"[recipe] step {i}/{len(plans)} {p.step.name}"
        if p.status == "done":
            print(f"{'# ' if dry_run else ''}{head}: finished, skipped ({output_path(out, p.step)})", flush=True)
            continue
        if dry_run:
            print(f"# {head}{' (resumed)' if p.status == 'resume' else ''}\n{shlex.join(p.command)}", flush=True)
            continue
        print(f"{head}{' (resumed)' if p.status == 'resume' else ''}: {shlex.join(p.command)}", flush=True)
        os.makedirs(os.path.join(out, p.step.name), exist_ok=True)
        state[p.step.name] = {"settings": p.settings, "finished": False}
        write_state(out, state)
        try:
            run_step(p)
        except (Exception, SystemExit) as e:  # any failure of the step; Ctrl-C goes through (cli's message)
            why = f"exit code {e.code}" if isinstance(e, SystemExit) else " ".join(str(e).split()) or type(e).__name__
            raise RuntimeError(f"step {p.step.name!r} failed ({why}); run the same command again to resume from it "
                               f"(finished steps are skipped)") from e
        if not os.path.isfile(output_path(out, p.step)):
            raise RuntimeError(f"step {p.step.name!r} exited cleanly but left no {output_path(out, p.step)}")
        state[p.step.name]["finished"] = True
        write_state(out, state)
    if not dry_run:
        print(f"[recipe] done: {result}\n[recipe] evaluate it: python -m okgin.evaluate --agents "
              f"ppo:{shlex.quote(result)} expert simple --hands 20000 --seed 0", flush=True)
    return result


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="See the module docstring and "
                                     "docs/training.md, 'The shipped agent'.")
    parser.add_argument("recipe", help="recipe YAML file, e.g. configs/recipes/shipped.yaml")
    parser.add_argument("--out", default=None, help="run folder (default: runs/<recipe file name>)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every budget (" + ", ".join(SCALED_KEYS) + ") by this; e.g. 0.001 for a smoke run")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="config key for every train step (YAML value syntax), after the recipe's own; repeatable")
    parser.add_argument("--dry-run", action="store_true", help="print the commands it would run now, run nothing")
    ns = parser.parse_args(argv)
    from okgin_trainer.config import parse_overrides  # okgin.train's reading of --set, with its checks

    extra = parse_overrides(ns.set)
    reserved = sorted(set(extra) & set(RESERVED_SET_KEYS))
    if reserved:
        raise ValueError(f"--set {', '.join(reserved)} is the recipe's to give (run folder: --out; init_from: the "
                         f"recipe's steps)")
    return run(ns.recipe, ns.out, ns.scale, extra, ns.dry_run)


def cli() -> None:
    """``main`` with one-line errors (``OKGIN_TRACEBACK=1`` shows the traceback)."""
    run_cli(main, interrupted="interrupted: run the same command again to resume (finished steps are skipped)")


if __name__ == "__main__":
    cli()
