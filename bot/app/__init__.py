"""The ``fitbot`` program: command line, settings, process start and stop.

Pydantic searches every installed package's entry points for plugins when it builds its first
validator, about 30 ms of each process start. FitBot uses no pydantic plugin, so the search is off
unless ``PYDANTIC_DISABLE_PLUGINS`` is set already (to "" for the search, as pydantic documents).
"""

import os

os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
