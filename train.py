#!/usr/bin/env python
"""Train an agent with PPO and self-play: ``python train.py --help``.

A launcher kept at the top of the checkout; the program is ``okgin/train.py`` (installed as the
``okgin-train`` command).
"""
from okgin.train import cli

if __name__ == "__main__":
    cli()
