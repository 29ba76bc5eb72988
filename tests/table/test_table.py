"""The table: inputs checked by the engine, journaled, folded; refusals change nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion.core.cues import Cue
from companion.games import build_engines
from companion.games.base import GameError
from companion.games.catalog import load_catalog
from companion.table.journal import Journal
from companion.table.table import Table

PLAYERS = ["Ann", "Bob", "Cid", "Dee"]


def new_table(path: Path) -> tuple[Table, list[tuple[str, dict[str, Any]]]]:
    table = Table(Journal(path), build_engines(load_catalog()), resolve_uid={"04a1b2": "spy-team/red-7"}.get)
    heard: list[tuple[str, dict[str, Any]]] = []

    def listener(kind: str, payload: dict[str, Any] | Cue) -> None:
        assert isinstance(payload, Cue if kind == "cue" else dict)  # listeners get Cue objects
        heard.append((kind, payload.to_json() if isinstance(payload, Cue) else payload))

    table.listeners.append(listener)
    return table, heard


def ready(table: Table) -> None:
    table.start("spy-team", PLAYERS, {"start": 0})
    table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    table.act({"type": "mission", "seat": 1, "tile": "3/3", "target": 3})


def cue_names(heard: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [payload["cue"] for kind, payload in heard if kind == "cue"]


def test_an_idle_table_asks_for_a_game(tmp_path: Path) -> None:
    table, _ = new_table(tmp_path / "j.db")
    view = table.view()
    assert view["status"] == "idle" and view["game"] is None
    with pytest.raises(GameError, match="No game is running"):
        table.tap(card="spy-team/red-1")
    assert list(table.journal.entries()) == []


def test_an_accepted_input_is_journaled_then_announced(tmp_path: Path) -> None:
    table, _ = new_table(tmp_path / "j.db")
    order: list[str] = []
    # The listener looks at the journal when the state arrives: the entry must already be there.
    table.listeners.append(lambda kind, payload: order.append(f"{kind}:{len(list(table.journal.entries()))}"))
    ready(table)
    order.clear()
    table.tap(card="spy-team/red-3")
    assert [e.event["type"] for e in table.journal.entries()] == ["start", "mission", "mission", "tap"]
    assert order[0] == "state:4"
    assert set(order) == {"state:4", "cue:4"}
    assert table.view()["trick"][0]["card"] == "spy-team/red-3"


def test_the_first_cue_goes_to_first_step_right_after_the_commit_before_anything_else(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")
    ready(table)
    calls: list[tuple[str, int, int, bool]] = []

    def first_step(cue: Cue) -> None:
        # (the cue, entries journaled, messages the listeners heard, the view already shows the card)
        shown = any(play["card"] == "spy-team/red-3" for play in table.view().get("trick", []))
        calls.append((cue.name, len(list(table.journal.entries())), len(heard), shown))

    table.first_step = first_step
    heard.clear()
    table.tap(card="spy-team/red-3")
    assert calls == [("card-accepted", 4, 0, False)]
    assert cue_names(heard)[0] == "card-accepted"  # the listeners still hear it, after the state
    calls.clear()
    with pytest.raises(GameError):
        table.tap(card="spy-team/red-3")  # refused: nothing journaled, no first step (the error cue
    assert calls == []  # goes to the listeners as before)
    table.journal._db.close()
    with pytest.raises(GameError, match="could not record"):
        table.tap(card="spy-team/red-4")
    assert calls == []


def test_a_failing_first_step_does_not_refuse_the_journaled_input(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")

    def broken(cue: Cue) -> None:
        raise RuntimeError("unplugged")

    table.first_step = broken
    table.start("spy-team", PLAYERS)
    assert table.view()["status"] != "idle" and "game-started" in cue_names(heard)


def test_a_refused_input_plays_an_error_cue_and_changes_nothing(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")
    ready(table)
    table.tap(card="spy-team/red-3")
    before, entries = table.view(), len(list(table.journal.entries()))
    heard.clear()
    with pytest.raises(GameError, match="already"):
        table.tap(card="spy-team/red-3")
    assert table.view() == before
    assert len(list(table.journal.entries())) == entries
    assert cue_names(heard) == ["error"]
    assert not any(kind == "state" for kind, _ in heard)


def test_a_check_that_changed_its_copy_then_refused_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inputs are checked on a copy of the state made ahead (`Table._spare`): one the rules changed
    half-way before refusing is dropped, and the next input is checked on a fresh copy."""
    table, _ = new_table(tmp_path / "j.db")
    ready(table)
    engine = table.engines["spy-team"]
    rules = type(engine)._apply

    def half_then_refuse(self: Any, state: Any, event: dict[str, Any]) -> list[Cue]:
        if event.get("card") == "spy-team/blue-9":
            state.played.append("spy-team/red-1")  # a change the copy keeps, then the refusal
            state.log.append("Half done.")
            raise GameError("Refused half-way.")
        return rules(self, state, event)

    monkeypatch.setattr(type(engine), "_apply", half_then_refuse)
    before = table.view()
    with pytest.raises(GameError, match="half-way"):
        table.tap(card="spy-team/blue-9")
    assert table.view() == before
    table.tap(card="spy-team/red-1")  # not played yet: the half-done change is gone
    assert [play["card"] for play in table.view()["trick"]] == ["spy-team/red-1"]
    assert "Half done." not in table.view()["log"]
    resumed, _ = new_table(tmp_path / "j.db")
    assert resumed.view() == table.view()


def test_an_unknown_tag_plays_the_unknown_card_cue_with_its_uid(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")
    ready(table)
    with pytest.raises(GameError, match="Unknown tag 04ffff"):
        table.tap(uid="04ffff")
    assert heard[-1] == (
        "cue",
        {
            "cue": "unknown-card",
            "seat": None,
            "text": "Unknown tag 04ffff: enroll it first.",
            "data": {"uid": "04ffff"},
        },
    )
    # A registered UID is the card it was enrolled as.
    table.tap(uid="04a1b2")
    assert table.view()["trick"][0]["card"] == "spy-team/red-7"


def test_undo_takes_back_the_last_input_and_is_journaled(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")
    ready(table)
    before = table.view()
    table.tap(card="spy-team/red-3")
    view = table.undo()
    assert view == {**before, "taken_back": "Took back: Ann played Red 3."}
    assert [e.event["type"] for e in table.journal.entries()][-2:] == ["tap", "undo"]
    assert "undo" in cue_names(heard)


def test_undo_of_a_start_brings_back_the_game_before(tmp_path: Path) -> None:
    table, _ = new_table(tmp_path / "j.db")
    ready(table)
    table.tap(card="spy-team/red-3")
    first = table.view()
    table.start("spy-team", ["W", "X", "Y", "Z"], {"start": 2})
    assert table.view()["players"][0]["name"] == "W"
    assert table.undo() == {**first, "taken_back": "Took back the start of Spy Team."}
    for _ in range(4):
        table.undo()
    assert table.view()["status"] == "idle"
    with pytest.raises(GameError, match="Nothing to undo"):
        table.undo()


def test_a_restarted_table_resumes_the_exact_game(tmp_path: Path) -> None:
    table, _ = new_table(tmp_path / "j.db")
    ready(table)
    for card in ("spy-team/red-3", "spy-team/red-9", "spy-team/blue-4", "spy-team/red-1", "spy-team/red-20"):
        table.tap(card=card)
    table.undo()
    view = table.view()
    table.journal.close()
    again, _ = new_table(tmp_path / "j.db")
    assert again.view() == view
    assert again.view()["prompt"] == view["prompt"]


def test_the_prompt_turning_to_a_seat_plays_your_turn_for_it(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")
    ready(table)
    heard.clear()
    table.tap(card="spy-team/red-3")
    turns = [p for kind, p in heard if kind == "cue" and p["cue"] == "your-turn"]
    assert [t["seat"] for t in turns] == [1]


def test_a_journal_that_cannot_write_refuses_the_input_whole(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")
    ready(table)
    before = table.view()
    table.journal._db.close()  # the disk is gone
    heard.clear()
    with pytest.raises(GameError, match="could not record"):
        table.tap(card="spy-team/red-3")
    assert table.view() == before
    assert cue_names(heard) == ["error"]


def test_a_broken_listener_does_not_stop_the_others(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")

    def broken(kind: str, payload: dict[str, Any]) -> None:
        raise RuntimeError("unplugged")

    table.listeners.insert(0, broken)
    table.start("spy-team", PLAYERS)
    assert "game-started" in cue_names(heard)


def test_only_the_current_game_is_folded(tmp_path: Path) -> None:
    table, _ = new_table(tmp_path / "j.db")
    ready(table)
    table.tap(card="spy-team/red-3")
    table.start("spy-team", ["W", "X", "Y", "Z"])
    view = table.view()
    table.journal.close()
    # An earlier game that today's rules would refuse no longer matters once a later game started.
    journal = Journal(tmp_path / "j.db")
    journal._db.execute(
        "UPDATE entries SET event = ? WHERE seq = 4", ('{"type":"tap","card":"spy-team/red-99"}',)
    )
    again = Table(journal, build_engines(load_catalog()))
    assert again.view() == view


def test_a_label_from_the_prompt_is_not_journaled(tmp_path: Path) -> None:
    table, _ = new_table(tmp_path / "j.db")
    table.start("spy-team", PLAYERS)
    action = table.view()["prompt"]["actions"][0]
    assert "label" in action
    table.act(action)
    assert "label" not in list(table.journal.entries())[-1].event


def test_the_table_alone_says_your_turn_whenever_the_prompt_turns_to_another_seat(tmp_path: Path) -> None:
    table, heard = new_table(tmp_path / "j.db")
    table.start("spy", ["Ann", "Bob", "Cid"], {"start": 1})
    for colour in ("green", "red", "blue"):
        table.tap(card=f"spy/{colour}-spy")
    table.act({"type": "pass"})
    turns = [(p["seat"], p["text"]) for kind, p in heard if kind == "cue" and p["cue"] == "your-turn"]
    setup = "tap the Spy card of your colour, or hold your seat button to play"
    play = "spy (the owner taps the card) or press Next to pass. Dropped a card? Hold your seat button"
    assert turns == [
        (0, f"Ann: {setup} green (press it for another colour)"),  # the game starts
        (1, f"Bob: {setup} red (press it for another colour)"),
        (2, f"Cid: {setup} purple (press it for another colour)"),
        (1, f"Bob's turn: {play}"),  # every colour claimed
        (2, f"Cid's turn: {play}"),
    ]
    assert table.current_seat() == 2 and [a.type for a in table.legal_actions() if a.primary] == ["pass"]


def test_a_new_turn_of_the_same_seat_is_your_turn_again(tmp_path: Path) -> None:
    """Mission for Peanuts: the Telepath's ASSIST gives Ann another turn; the prompt stays on Ann, and
    the table still says it is her turn (a new one)."""
    table, heard = new_table(tmp_path / "j.db")
    table.start("peanuts", ["Ann", "Bob", "Cid"], {"start": 0})
    for card in ("peanuts/informant-1", "peanuts/seer-1", "peanuts/handler-1"):
        table.tap(card=card)
    table.act({"type": "draw"})
    table.tap(card="peanuts/telepath-1")
    heard.clear()
    table.act({"type": "assist"})
    turns = [(p["seat"], p["text"]) for kind, p in heard if kind == "cue" and p["cue"] == "your-turn"]
    assert table.current_seat() == 0 and turns == [
        (0, "Ann: draw a card (extra turn), then tap the card you play (DEPLOY: your Role too).")
    ]


def test_the_game_in_force_is_named_by_the_entry_that_started_it(tmp_path: Path) -> None:
    """`game_start` (the id MQTT results carry, docs/mqtt.md) stays the same across a restart and
    follows an undo past a start back to the game before."""
    table, _ = new_table(tmp_path / "j.db")
    assert table.game_start is None
    ready(table)
    first = table.game_start
    assert first is not None and first.seq == 1 and first.event["type"] == "start"
    table.tap(card="spy-team/red-3")
    assert table.game_start == first
    table.start("spy-team", ["W", "X", "Y", "Z"], {"start": 2})
    second = table.game_start
    assert second is not None and second.seq == 5 and second.at >= first.at
    table.journal.close()
    table, _ = new_table(tmp_path / "j.db")
    assert table.game_start == second
    table.undo()  # the second start: the first game is back, with its own name
    assert table.game_start == first
    table.journal.close()
    assert new_table(tmp_path / "j.db")[0].game_start == first
