"""``okgin_trainer`` (the checkout's ``trainer/`` folder): the parts of ``okgin/train.py`` that are not the PPO loop itself: the config keys, reading and
checking them (``config``), the behaviour-cloning warm start (``bc``), the opponent pool and its
snapshot decision (``pool``), the run directory and game-state helpers (``checkpoint``), the run's
state, its checkpoint and resume (``resume``) and the critic's privileged inputs (``oracle``). Script layer: it may import ``okgin_env`` and ``okgin_agents``; nothing below imports it."""
