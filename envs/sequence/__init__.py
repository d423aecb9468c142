"""Sequence: rules engine (``rules``), board layouts (``board``) and the ``Game`` (``game``)."""
