"""Play against the agents: a session model (``play.session``), a terminal front end
(``python -m play terminal``), a browser front end (``python -m play serve``), ``watch`` and
``replay``. Game records are :mod:`agents.records`.
"""
