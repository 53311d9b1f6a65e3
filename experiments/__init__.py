"""Research code kept apart from okgin: not installed, not part of the default test run.

Each experiment is a package run from the checkout's root (``python -m experiments.distill ...``)
with a README: the question it asked, the commands, what it gave. docs/experiments.md has the
results of all of them. The code imports the installed packages (``okgin_env``, ``okgin_agents``,
``okgin``) and nothing installed imports it.
"""
