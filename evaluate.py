#!/usr/bin/env python
"""Evaluate agents head to head or in a round robin: ``python evaluate.py --help``.

A launcher kept at the top of the checkout; the program is ``okgin/evaluate.py`` (installed as the
``okgin-evaluate`` command).
"""
from okgin.evaluate import cli

if __name__ == "__main__":
    cli()
