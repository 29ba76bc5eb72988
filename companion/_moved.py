"""Module paths from before 0.2, when `companion/` was 35 modules side by side: importable for one
release, each with a DeprecationWarning that names the new path, so a game pack written then
(`COMPANION_GAME_PACKS`) keeps working. Goes in 0.3.

An old module path is an alias of the new module (the same module object, not a copy). The three old
modules whose names are packages now (`companion.table`, `companion.pins`, `companion.mqtt`) keep
their names readable through the package's `__getattr__` (`forward`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

MOVED: dict[str, str] = {
    "companion.config": "companion.core.config",
    "companion.cues": "companion.core.cues",
    "companion.resources": "companion.core.resources",
    "companion.catalog": "companion.games.catalog",
    "companion.packs": "companion.games.packs",
    "companion.journal": "companion.table.journal",
    "companion.wal": "companion.table.wal",
    "companion.patterns": "companion.pins.patterns",
    "companion.feedback": "companion.pins.feedback",
    "companion.buttons": "companion.pins.buttons",
    "companion.registry": "companion.readers.registry",
    "companion.cards": "companion.readers.enrollment",
    "companion.outbox": "companion.mqtt.outbox",
    "companion.homeassistant": "companion.mqtt.homeassistant",
    "companion.league": "companion.mqtt.league",
    "companion.results": "companion.mqtt.results",
    "companion.app": "companion.webapp.app",
    "companion.api": "companion.webapp.api",
    "companion.cards_api": "companion.webapp.cards_api",
    "companion.services": "companion.webapp.services",
    "companion.events": "companion.webapp.events",
    "companion.static": "companion.webapp.static",
    "companion.server": "companion.webapp.server",
    "companion.pairing": "companion.webapp.pairing",
    "companion.presentation": "companion.webapp.presentation",
    "companion.history": "companion.webapp.history",
    "companion.daemon": "companion.appliance.daemon",
    "companion.cli": "companion.appliance.cli",
    "companion.cards_cli": "companion.appliance.cards_cli",
    "companion.doctor": "companion.appliance.doctor",
    "companion.systemd": "companion.appliance.systemd",
}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new}; the old path goes in 0.3", DeprecationWarning, stacklevel=3)


class OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on `sys.meta_path`: asked only for a name no file has, it answers the moved ones."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        new = MOVED[module.__name__]
        _warn(module.__name__, new)
        sys.modules[module.__name__] = importlib.import_module(new)  # the import returns this entry


def install() -> None:
    if not any(isinstance(finder, OldPaths) for finder in sys.meta_path):
        sys.meta_path.append(OldPaths())


def forward(package: str, module: str) -> Callable[[str], Any]:
    """A package's `__getattr__` that reads a name the old module of the same name had in `module`."""

    def __getattr__(name: str) -> Any:
        if not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is None:
            target = importlib.import_module(module)
            if hasattr(target, name):
                _warn(f"{package}.{name}", f"{module}.{name}")
                return getattr(target, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
