"""The table: every input checked by the game's engine, written to the journal, then announced
(`table`); the append-only journal with its archive (`journal`), its SQLite tables (`schema`), the
entries it holds and the fold of those in force (`entries`), reading a torn write-ahead log (`wal`)
and what the disk allows (`disk`).

Imports: companion.core, companion.games.
"""

from companion._moved import forward

__getattr__ = forward(__name__, "companion.table.table")  # `from companion.table import Table`, before 0.2
