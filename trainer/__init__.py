"""``okgin_trainer`` (the checkout's ``trainer/`` folder): the parts of ``okgin/train.py`` that are not the PPO loop itself: the opponent pool (``pool``), the
run directory and game-state helpers (``checkpoint``) and the training checkpoint a run resumes
from (``resume``). Script layer: it may import ``okgin_env`` and ``okgin_agents``; nothing below imports it."""
