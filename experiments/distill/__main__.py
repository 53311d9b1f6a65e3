"""``python -m experiments.distill``: the command line of :mod:`experiments.distill.distill`."""

from experiments.distill.distill import main

main()
