"""``python -m okgin.benchmark AGENT``: the report card (okgin.benchmark.card)."""

from okgin.benchmark.card import cli

cli()
