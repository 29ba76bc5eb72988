"""The module paths from before the move into subpackages (companion/_moved.py) still work for one
release, each with a DeprecationWarning naming the new path: a game pack written against them plays.

Run in a fresh interpreter each, so the first import of an old path (the one that warns) is the
test's own and not some earlier test's."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from companion import _moved

TOY = Path(__file__).parent / "packs" / "toy"

PLAY = """
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    from companion.games.packs import playable_games
    from companion.table.journal import Journal
    from companion.table.table import Table
    engines, packs = playable_games({"COMPANION_GAME_PACKS": PACK})
table = Table(Journal(":memory:"), engines)
table.start("toy-race", ["Ann", "Bob"], {"target": 3})
for card in ("toy-race/one", "toy-race/two", "toy-race/three"):
    view = table.tap(card)
print(json.dumps({"status": view["status"], "winners": view.get("winners"),
                  "warnings": [str(w.message) for w in caught if w.category is DeprecationWarning]}))
"""


def _run(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_a_pack_written_before_the_move_still_plays(tmp_path: Path) -> None:
    old = tmp_path / "old-pack"
    shutil.copytree(TOY, old)
    engine = old / "toy-race.py"
    text = engine.read_text()
    assert "from companion.core.cues import Cue" in text  # the pack of today ...
    engine.write_text(text.replace("from companion.core.cues import Cue", "from companion.cues import Cue"))
    played = _run(f"PACK = {str(old)!r}\n{PLAY}")  # ... as it was written before the move
    assert played["status"] == "game-over" and played["winners"] == [0]
    assert played["warnings"] == ["companion.cues moved to companion.core.cues; the old path goes in 0.3"]


def test_todays_pack_plays_with_no_warning() -> None:
    played = _run(f"PACK = {str(TOY)!r}\n{PLAY}")
    assert played["status"] == "game-over" and played["warnings"] == []


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("companion.table", "Table", "companion.table.table"),  # the old module is a package now
        ("companion.pins", "PinLayout", "companion.pins.devices"),
        ("companion.mqtt", "MqttBridge", "companion.mqtt.bridge"),
        ("companion.journal", "Journal", "companion.table.journal"),  # an alias of the moved module
        ("companion.cli", "main", "companion.appliance.cli"),
    ],
)
def test_an_old_path_is_the_new_module(old: str, name: str, new: str) -> None:
    code = f"""
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    from {old} import {name} as found
import {new} as module
print(json.dumps({{"same": found is getattr(module, {name!r}),
                  "warnings": [str(w.message) for w in caught if w.category is DeprecationWarning]}}))
"""
    found = _run(code)
    assert found["same"] is True
    assert found["warnings"] and all(new in message for message in found["warnings"])  # type: ignore[union-attr]


def test_every_old_path_leads_somewhere() -> None:
    for old, new in _moved.MOVED.items():
        assert importlib.util.find_spec(new) is not None, (old, new)
        assert importlib.util.find_spec(old).origin is None, old  # no file of its own: an alias


def test_an_unknown_name_is_still_an_error() -> None:
    for code in ("from companion.table import NoSuchThing", "import companion.no_such_module"):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and "Error: " in done.stderr.splitlines()[-1], done.stderr
