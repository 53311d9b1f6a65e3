#!/usr/bin/env python
"""Play against a bot, watch two bots or replay a logged game: ``python play.py --help``.

A launcher kept at the top of the checkout; the program is ``okgin/play.py`` (installed as the
``okgin-play`` command).
"""
from okgin.play import cli

if __name__ == "__main__":
    cli()
