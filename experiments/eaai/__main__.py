"""``python -m experiments.eaai``: the command line of :mod:`experiments.eaai.simple_stats`."""

from experiments.eaai.simple_stats import main

main()
