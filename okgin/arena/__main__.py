"""``python -m okgin.arena``: the ``okgin-arena`` command."""

from okgin.arena.cli import cli

cli()
