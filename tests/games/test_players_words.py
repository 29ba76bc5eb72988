"""Players' words: what the table tells players (every cue's text, every prompt, every refusal) names
cards by their names, never by the ids their tags carry ("Handler #1", not "peanuts/handler-1")."""

from __future__ import annotations

import re
from typing import Any

from tests.conftest import AUTH
from tests.games.test_peanuts import Table
from tests.scripted_games import GAMES

CARD_ID = re.compile(r"\b(?:spy-team|spy|peanuts)/[a-z0-9-]+")


def test_no_message_of_the_scripted_games_names_a_card_id(client: Any, cues: list[dict[str, Any]]) -> None:
    said: list[str] = []

    def call(method: str, path: str, body: Any) -> Any:
        response = client.open(path, method=method, json=body, headers=AUTH)
        answer = response.get_json()
        if response.status_code >= 400:
            said.append(answer["error"])
        elif isinstance(answer, dict) and answer.get("prompt"):
            said.append(answer["prompt"]["text"])
        return answer

    for script in GAMES.values():
        for _ in script(call):
            pass
        # Refusals too: a card of another game, a card played twice, a card elsewhere on the table.
        game = call("GET", "/api/state", None)["game"]
        other = {"spy": "spy-team/red-1", "spy-team": "spy/green-safe-1", "peanuts": "spy/green-spy"}[game]
        call("POST", "/api/taps", {"card": other})
    call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
    call("POST", "/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
    call("POST", "/api/taps", {"card": "spy-team/red-9"})
    call("POST", "/api/taps", {"card": "spy-team/red-9"})
    said += [cue["text"] for cue in cues]
    assert len(said) > 100 and any("another game" in text for text in said)
    assert [text for text in said if CARD_ID.search(text)] == []


def test_no_message_of_seeded_peanuts_tables_names_a_card_id() -> None:
    """Seeded tables of every size, refusals included (each tries impossible inputs now and then)."""
    said: list[str] = []
    for players, seed in ((3, 7), (4, 11), (5, 1819)):
        table = Table(players, seed)
        table.play()
        for entry in table.log:
            if isinstance(entry.outcome, str):
                said.append(entry.outcome)
            else:
                said += [cue.text for cue in entry.outcome]
    assert len(said) > 100
    assert [text for text in said if CARD_ID.search(text)] == []
