"""Table Companion: reads NFC-tagged cards at a card table, keeps and scores the game, drives the
table's LEDs and buzzer and serves a live scoreboard."""

__version__ = "0.1.0"
