"""okgin's programs: training (``okgin.train``), evaluation (``okgin.evaluate``) and play
(``okgin.play``), installed as the commands ``okgin-train``, ``okgin-evaluate`` and ``okgin-play``.

The installed import names differ from the checkout's folder names so that nothing collides with
other packages (HuggingFace ``evaluate``, OpenAI's ``agents``, Coqui's ``trainer``)::

    folder        import name       what
    okgin_env/    okgin_env         the game core and the environments
    agents/       okgin_agents      the bots
    trainer/      okgin_trainer     training as a function (train), its parts, the matches
    okgin/        okgin             the programs; train.py, evaluate.py and play.py at the
                                    top of the checkout are thin launchers for them

Layers point one way: okgin_env <- okgin_agents <- okgin_trainer <- okgin.
"""
