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

[pins]                       # GPIO pins, see hardware/ (read by companion.pins.feedback and .buttons)
[sound]                      # volume and quiet hours (read by companion.pins.feedback)
[cards]                      # path = "/var/lib/companion/cards.db" (default: cards.db beside the journal)

[mqtt]                       # publish to a broker (see docs/mqtt.md); off without a url
url = "mqtt://broker.local:1883"

[network]                    # its own Wi-Fi when there is none (docs/operations.md); off without it
hotspot = "auto"             # "auto", "on" or "off"
"""

from __future__ import annotations

import os
import re
import socket
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

INSTALLED_CONFIG = Path("/etc/companion/companion.toml")  # where systemd/install.sh puts it


def config_path(given: Path | None) -> Path | None:
    """The config file a command reads: `given`, else the installed one if there is one (else None:
    defaults and environment)."""
    if given is not None:
        return given
    return INSTALLED_CONFIG if INSTALLED_CONFIG.exists() else None


class ConfigError(Exception):
    """A setting that cannot be used; the message is one line for the host."""


@dataclass
class Config:
    token: str | None = None
    host: str = "0.0.0.0"
    port: int = 8000
    hosts: list[str] = field(default_factory=list)  # extra names the Host header may carry
    scoreboards: int = 32  # event streams open at once (each holds a server thread)
    streams_per_address: int = 4  # ... of which one client address may hold
    db: Path = field(default_factory=lambda: Path("companion.db"))
    readers: list[dict[str, Any]] = field(default_factory=lambda: [{"device": "auto"}])
    pins: dict[str, Any] = field(default_factory=dict)
    sound: dict[str, Any] = field(default_factory=dict)
    cards: dict[str, Any] = field(default_factory=dict)  # [cards] path: see companion.readers.registry
    mock_pins: bool = False
    mqtt: MqttSettings | None = None  # [mqtt]: None publishes nothing
    network: NetworkSettings | None = None  # [network]: None never touches the Wi-Fi
    source: Path | None = None  # the file it was read from, if any


@dataclass(frozen=True)
class MqttSettings:
    """Where and as what a table publishes (docs/mqtt.md); `companion league` reads the same keys."""

    host: str
    port: int = 1883
    tls: bool = False  # mqtts://
    ca_file: str | None = None  # mqtts: the CA of the broker's certificate (default: the system's CAs)
    username: str | None = None
    password: str | None = None
    table: str = "table"  # this table's name in the topics
    base: str = "companion"
    discovery: bool = False  # Home Assistant MQTT discovery
    discovery_prefix: str = "homeassistant"

    @property
    def topic(self) -> str:
        """This table's topics start here: `<base>/<table>`."""
        return f"{self.base}/{self.table}"


def load_config(path: Path | None = None, env: dict[str, str] | None = None) -> Config:
    """Read `path` (if given) and apply COMPANION_TOKEN / COMPANION_DB from `env`."""
    env = dict(os.environ) if env is None else env
    raw = {} if path is None else read_toml(Path(path))
    config = Config(source=Path(path) if path else None)
    try:
        _read_tables(config, raw)
        config.mqtt = parse_mqtt(_table(raw, "mqtt"), env)
        config.network = parse_network(_table(raw, "network")) if "network" in raw else None
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}" if path else str(error)) from None
    if env.get("COMPANION_TOKEN"):
        config.token = env["COMPANION_TOKEN"]
    if env.get("COMPANION_DB"):
        config.db = Path(env["COMPANION_DB"])
    return config


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's tables; anything wrong with the file itself is one line naming it."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read the config file {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        where = f"byte {error.start + 1} is 0x{error.object[error.start]:02x}"
        raise ConfigError(f"{path}: not UTF-8 text ({where}): save it as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"the config file {path} is not valid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not a config: tables or lists nested too deep") from None


def _read_tables(config: Config, raw: dict[str, Any]) -> None:
    # A misspelt key must not quietly mean its default: name it. ([pins], [sound] and the reader
    # tables are checked where they are read: companion.pins.devices, companion.pins.feedback,
    # companion.readers.)
    _known(
        raw,
        "the config",
        {"server", "journal", "reader", "readers", "pins", "sound", "cards", "mqtt", "network"},
    )
    _read_server(config, _table(raw, "server"))
    journal = _table(raw, "journal")
    _known(journal, "[journal]", {"path"})
    config.db = Path(_value(journal, "[journal] path", str, str(config.db)))
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
    _value(config.cards, "[cards] path", str, None)


def _read_server(config: Config, server: dict[str, Any]) -> None:
    _known(server, "[server]", {"host", "port", "token", "hosts", "scoreboards", "streams_per_address"})
    config.host = _value(server, "[server] host", str, config.host)
    config.port = _value(server, "[server] port", int, config.port)
    if not 1 <= config.port <= 65535:
        raise ConfigError(f"[server] port must be from 1 to 65535, not {config.port}")
    config.token = _value(server, "[server] token", str, None)
    config.hosts = _value(server, "[server] hosts", list, config.hosts)
    if not all(isinstance(name, str) and name for name in config.hosts):
        raise ConfigError(f"[server] hosts must be a list of host names, not {config.hosts!r}")
    config.scoreboards = _value(server, "[server] scoreboards", int, config.scoreboards)
    if not 1 <= config.scoreboards <= 256:
        raise ConfigError(f"[server] scoreboards must be from 1 to 256, not {config.scoreboards}")
    config.streams_per_address = _value(
        server, "[server] streams_per_address", int, config.streams_per_address
    )
    if config.streams_per_address < 1:
        raise ConfigError(
            f"[server] streams_per_address must be at least 1, not {config.streams_per_address}"
        )


MQTT_KEYS = {"url", "ca_file", "username", "password", "table", "base", "discovery", "discovery_prefix"}
_TOPIC_LEVEL = re.compile(r"[A-Za-z0-9_-]{1,64}")


def parse_mqtt(raw: dict[str, Any], env: dict[str, str]) -> MqttSettings | None:
    """[mqtt], or None when it has no url. COMPANION_MQTT_PASSWORD overrides the password."""
    _known(raw, "[mqtt]", MQTT_KEYS)
    url = _value(raw, "[mqtt] url", str, None)
    if not url:
        if raw:
            raise ConfigError("[mqtt] needs a 'url', e.g. \"mqtt://broker.local:1883\"")
        return None
    host, port, tls = _broker_address(url)
    ca_file = _value(raw, "[mqtt] ca_file", str, None)
    if ca_file and not Path(ca_file).is_file():
        raise ConfigError(f"[mqtt] ca_file {ca_file} is not a readable file")
    table, base, prefix = _topics(raw)
    return MqttSettings(
        host=host,
        port=port,
        tls=tls,
        ca_file=ca_file,
        username=_value(raw, "[mqtt] username", str, None),
        password=env.get("COMPANION_MQTT_PASSWORD") or _value(raw, "[mqtt] password", str, None),
        table=table,
        base=base,
        discovery=_value(raw, "[mqtt] discovery", bool, False),
        discovery_prefix=prefix,
    )


def _broker_address(url: str) -> tuple[str, int, bool]:
    """[mqtt] url -> host, port and whether it is TLS (mqtts)."""
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname or parts.path not in ("", "/"):
        raise ConfigError(f"[mqtt] url must look like mqtt://host:1883 or mqtts://host:8883, not {url!r}")
    try:
        port = parts.port or (8883 if parts.scheme == "mqtts" else 1883)
    except ValueError as error:
        raise ConfigError(f"[mqtt] url has a bad port: {url!r}") from error
    return parts.hostname, port, parts.scheme == "mqtts"


def _topics(raw: dict[str, Any]) -> tuple[str, str, str]:
    """[mqtt] table, base and discovery_prefix, each checked as MQTT topic levels."""
    table = (
        _value(raw, "[mqtt] table", str, None) or re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname())[:64]
    )
    base = _value(raw, "[mqtt] base", str, "companion")
    prefix = _value(raw, "[mqtt] discovery_prefix", str, "homeassistant")
    if not _TOPIC_LEVEL.fullmatch(table):
        raise ConfigError(f"[mqtt] table must be 1-64 letters, digits, '-' or '_', not {table!r}")
    for key, topic in (("base", base), ("discovery_prefix", prefix)):
        if not all(_TOPIC_LEVEL.fullmatch(level) for level in topic.split("/")):
            raise ConfigError(f"[mqtt] {key} must be topic levels of letters, digits, '-' or '_': {topic!r}")
    return table, base, prefix


@dataclass(frozen=True)
class NetworkSettings:
    """[network]: the access point the table raises when no known Wi-Fi connects (companion.network)."""

    hotspot: str = "auto"  # "auto": after `wait` s without a network; "on": always; "off": never
    wait: int = 60  # seconds without a known network before the access point goes up
    ssid: str = ""  # "": Companion-<hostname>
    password: str | None = None  # None: generated once, kept in network.json beside the journal
    interface: str = "wlan0"
    scan_every: int = 300  # seconds between looks for a known network while it is the access point

    @property
    def name(self) -> str:
        """The access point's SSID."""
        return self.ssid or f"Companion-{socket.gethostname()}"[:32]


NETWORK_KEYS = {"hotspot", "wait", "ssid", "password", "interface", "scan_every"}


def parse_network(raw: dict[str, Any]) -> NetworkSettings:
    """[network], checked: WPA2 wants a password of 8 to 63 printable ASCII characters and an SSID
    of 1 to 32 bytes."""
    _known(raw, "[network]", NETWORK_KEYS)
    hotspot = _value(raw, "[network] hotspot", str, "auto")
    if hotspot not in ("auto", "on", "off"):
        raise ConfigError(f'[network] hotspot must be "auto", "on" or "off", not {hotspot!r}')
    wait = _value(raw, "[network] wait", int, 60)
    scan_every = _value(raw, "[network] scan_every", int, 300)
    for key, seconds in (("wait", wait), ("scan_every", scan_every)):
        if not 5 <= seconds <= 3600:
            raise ConfigError(f"[network] {key} must be from 5 to 3600 seconds, not {seconds}")
    ssid = _value(raw, "[network] ssid", str, "")
    if len(ssid.encode()) > 32:
        raise ConfigError(f"[network] ssid must be at most 32 bytes, not {ssid!r}")
    password = _value(raw, "[network] password", str, "generated")
    if password != "generated" and not (
        8 <= len(password) <= 63 and password.isascii() and password.isprintable()
    ):
        raise ConfigError('[network] password must be 8 to 63 printable ASCII characters (or "generated")')
    interface = _value(raw, "[network] interface", str, "wlan0")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,15}", interface):
        raise ConfigError(f"[network] interface must be a network interface name, not {interface!r}")
    return NetworkSettings(
        hotspot, wait, ssid, None if password == "generated" else password, interface, scan_every
    )


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
        raise ConfigError(f"[{name}] must be a table, not {value!r}")
    return value


_KIND_NAMES = {int: "a whole number", str: "a string", bool: "true or false", list: "a list"}


def _value(table: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    """`name` is "[table] key"; the value of that key, checked to be a `kind`."""
    value = table.get(name.split()[-1], default)
    # TOML's true/false are Python bools, and a bool is an int: never take one for a number.
    if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
        raise ConfigError(f"{name} must be {_KIND_NAMES.get(kind, kind.__name__)}, not {value!r}")
    return value
