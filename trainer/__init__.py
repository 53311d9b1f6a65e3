"""The parts of ``train.py`` that are not the PPO loop itself: the opponent pool (``pool``) and
the run directory, checkpoint and resume helpers (``checkpoint``). Script layer: it may import
``okgin_env`` and ``agents``; nothing below imports it."""
