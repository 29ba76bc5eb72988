"""Table Companion: reads NFC-tagged cards at a card table, keeps and scores the game, drives the
table's LEDs and buzzer and serves a live scoreboard.

The parts, lowest first (each package's docstring says what it may import; tests/test_imports.py
holds them to it): `core`, `games`, `table`, `pins`, `readers`, `mqtt`, `network`, `webapp`,
`appliance`.
"""

from companion import _moved

__version__ = "0.1.0"

_moved.install()  # the module paths from before 0.2, for one release
