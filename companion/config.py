"""The daemon's settings: a TOML file, then environment variables, then command-line flags.

[server]
host = "0.0.0.0"
port = 8000
token = "change-me"          # or COMPANION_TOKEN in the environment

[journal]
path = "/var/lib/companion/journal.db"

[reader]
device = "auto"              # "auto", "virtual", or an nfcpy path ("usb", "tty:AMA0:pn532", ...)

[[readers]]                  # instead of [reader]: one reader per seat
device = "usb:001:004"
seat = 0

[pins]                       # GPIO pins, see hardware/ (read by companion.feedback and .buttons)
[sound]                      # volume and quiet hours (read by companion.feedback)
[cards]                      # path = "/var/lib/companion/cards.db" (default: cards.db beside the journal)
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """A setting that cannot be used; the message is one line for the host."""


@dataclass
class Config:
    token: str | None = None
    host: str = "0.0.0.0"
    port: int = 8000
    db: Path = field(default_factory=lambda: Path("companion.db"))
    readers: list[dict[str, Any]] = field(default_factory=lambda: [{"device": "auto"}])
    pins: dict[str, Any] = field(default_factory=dict)
    sound: dict[str, Any] = field(default_factory=dict)
    cards: dict[str, Any] = field(default_factory=dict)  # [cards] path: see companion.registry
    mock_pins: bool = False
    source: Path | None = None  # the file it was read from, if any


def load_config(path: Path | None = None, env: dict[str, str] | None = None) -> Config:
    """Read `path` (if given) and apply COMPANION_TOKEN / COMPANION_DB from `env`."""
    env = dict(os.environ) if env is None else env
    raw: dict[str, Any] = {}
    if path is not None:
        try:
            raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as error:
            raise ConfigError(f"cannot read the config file {path}: {error.strerror}") from error
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"the config file {path} is not valid TOML: {error}") from error
    config = Config(source=Path(path) if path else None)
    # A misspelt key must not quietly mean its default: name it. ([pins], [sound] and the reader
    # tables are checked where they are read: companion.pins, companion.feedback, companion.readers.)
    _known(raw, "the config", {"server", "journal", "reader", "readers", "pins", "sound", "cards"})
    server = _table(raw, "server")
    _known(server, "[server]", {"host", "port", "token"})
    config.host = _value(server, "host", str, config.host)
    config.port = _value(server, "port", int, config.port)
    if not 1 <= config.port <= 65535:
        raise ConfigError(f"'port' in the config must be from 1 to 65535, not {config.port}")
    config.token = _value(server, "token", str, None)
    journal = _table(raw, "journal")
    _known(journal, "[journal]", {"path"})
    config.db = Path(_value(journal, "path", str, str(config.db)))
    if "readers" in raw:
        if not isinstance(raw["readers"], list) or not all(isinstance(r, dict) for r in raw["readers"]):
            raise ConfigError("[[readers]] must be a list of tables with a 'device' and a 'seat'")
        config.readers = raw["readers"]
    elif "reader" in raw:
        config.readers = [_table(raw, "reader")]
    config.pins = _table(raw, "pins")
    config.sound = _table(raw, "sound")
    config.cards = _table(raw, "cards")
    _known(config.cards, "[cards]", {"path"})
    if env.get("COMPANION_TOKEN"):
        config.token = env["COMPANION_TOKEN"]
    if env.get("COMPANION_DB"):
        config.db = Path(env["COMPANION_DB"])
    return config


def _known(table: dict[str, Any], where: str, keys: set[str]) -> None:
    unknown = sorted(set(table) - keys)
    if unknown:
        raise ConfigError(
            f"{where} has unknown keys: {', '.join(unknown)} (known: {', '.join(sorted(keys))}; "
            "see docs/configuration.md)"
        )


def _table(raw: dict[str, Any], name: str) -> dict[str, Any]:
    value = raw.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"[{name}] in the config must be a table")
    return value


_KIND_NAMES = {int: "a whole number", str: "a string", bool: "true or false"}


def _value(table: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    value = table.get(key, default)
    # TOML's true/false are Python bools, and a bool is an int: never take one for a number.
    if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
        raise ConfigError(
            f"'{key}' in the config must be {_KIND_NAMES.get(kind, kind.__name__)}, not {value!r}"
        )
    return value
