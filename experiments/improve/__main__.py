"""``python -m experiments.improve``: the command line of :mod:`experiments.improve.improve`."""

from experiments.improve.improve import main

main()
