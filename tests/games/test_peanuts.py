"""SPY x FAMILY: Mission for Peanuts: the rules engine, from the rulebook and its FAQ.

Scenario tests drive the engine with the taps and actions of docs/rules/peanuts.md. A few showdown
tests start from a position (a state edited after the reveal, like a chess FEN) so that one turn
reaches the end of the deck. The last tests play whole games with real cards: a seeded player moves
cards between a physical deck, hands, Roles and piles, and the companion must agree with the table
after every input; replayed with a hidden card swapped for another, those games must tell the table
exactly the same things (see "hidden cards change nothing").
"""

from __future__ import annotations

import copy
import json
import random
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

from companion.core.resources import seeds_dir
from companion.games.base import GameError, MalformedInput
from companion.games.catalog import DataError, load_catalog, parse_game
from companion.games.peanuts import Discard, Peanuts, PeanutsState, StepKind
from companion.games.peanuts import elimination as peanuts_elimination
from companion.games.peanuts import engine as peanuts_engine
from companion.games.peanuts import roles as peanuts_roles
from companion.games.peanuts import view as peanuts_view
from companion.games.peanuts.rules import PeanutsRules

DATA = load_catalog()["peanuts"]
ENGINE = Peanuts(DATA)
NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve"]
X = "\N{MULTIPLICATION SIGN}"  # combination names: "Spy <X> Telepath"


def cid(card: str) -> str:
    """A short card name ("seer-1") as its id ("peanuts/seer-1")."""
    return card if card.startswith("peanuts/") else f"peanuts/{card}"


def cid_list(text: str) -> list[str]:
    return [cid(c) for c in text.split()]


def role_of(card: str) -> str:
    return DATA.cards[cid(card)]["role"]


class Game:
    """One game through the engine, with short helpers for taps and actions."""

    def __init__(self, players: int = 3, roles: list[str] | None = None, **options: Any) -> None:
        options.setdefault("start", 0)
        self.state: PeanutsState = ENGINE.setup(NAMES[:players], options)
        self.cues: list[Any] = []
        for seat, card in enumerate(roles or []):
            self.tap(card, seat=seat)

    def send(self, event: dict[str, Any]) -> list[str]:
        self.state, self.cues = ENGINE.apply(self.state, event)
        return [cue.name for cue in self.cues]

    def tap(self, card: str, seat: int | None = None) -> list[str]:
        event: dict[str, Any] = {"type": "tap", "card": cid(card)}
        if seat is not None:
            event["seat"] = seat
        return self.send(event)

    def do(self, kind: str, **fields: Any) -> list[str]:
        return self.send({"type": kind, **fields})

    def play(self, card: str, how: str) -> list[str]:
        """The current player taps a card from their hand, then ASSIST or DEPLOY."""
        self.tap(card)
        return self.do(how)

    def refused(self, event: dict[str, Any], match: str) -> str:
        """The engine refuses `event` with a message matching `match` and changes nothing."""
        before = copy.deepcopy(self.state)
        with pytest.raises(GameError, match=match) as error:
            ENGINE.apply(self.state, event)
        assert self.state == before
        return str(error.value)

    @property
    def view(self) -> dict[str, Any]:
        return ENGINE.public_view(self.state)

    @property
    def prompt(self) -> dict[str, Any]:
        return self.view["prompt"]

    @property
    def deck(self) -> int:
        return self.view["deck_count"]

    def pile(self, seat: int) -> list[str | None]:
        """A discard pile as the scoreboard shows it: ids, None for a face-down card."""
        return [d.get("card") for d in self.view["players"][seat]["discards"]]

    def role(self, seat: int) -> str:
        return self.view["players"][seat]["role"]["card"]

    def hand_counts(self) -> list[int]:
        return [p["hand_count"] for p in self.view["players"]]

    def actions(self) -> list[dict[str, Any]]:
        """The legal actions, as they are posted."""
        return [action.to_event() for action in ENGINE.legal_actions(self.state)]

    def action_values(self, key: str) -> list[Any]:
        """One field of each legal action (its type, the seat it picks...), in order."""
        return [event[key] for event in self.actions() if key in event]

    @property
    def seat(self) -> int | None:
        """The seat the game waits on."""
        return ENGINE.current_seat(self.state)


def no_spy_found(game: Game, card: str, target: int) -> None:
    """A quiet turn: the current player draws, and their Secret Police `card` looks at `target`'s hand
    and finds no Spy. (After it the player's hand may hold the Spy: they drew.)"""
    game.do("draw")
    game.play(card, "assist")
    game.do("target", seat=target)
    game.do("spy-found", found=False)


# ---------------------------------------------------------------------- data and setup


@pytest.mark.rule("PEA-1")
def test_the_data_defines_every_role_with_notches_equal_to_copies() -> None:
    by_role: dict[str, list[str]] = {}
    for card in DATA.cards.values():
        by_role.setdefault(card["role"], []).append(card.id)
    assert set(by_role) == {
        "spy",
        "telepath",
        "assassin",
        "seer",
        "informant",
        "handler",
        "agent",
        "secret-police",
    }
    for role, ids in by_role.items():
        assert all(DATA.cards[i]["notches"] == len(ids) for i in ids)
        assert sorted(ids) == sorted(f"peanuts/{role}-{n}" for n in range(1, len(ids) + 1))
    assert len(by_role["spy"]) == 1
    assert len(by_role["assassin"]) >= 2
    assert len(DATA.extra["combinations"]) == 7


@pytest.mark.rule("PEA-3", "PEA-6")
def test_deck_sizes_come_from_the_data() -> None:
    total = len(DATA.cards)
    assert ENGINE.deck_size(3) == total - 1 - 6 == 13
    assert ENGINE.deck_size(4) == total - 1 - 8 == 11
    assert ENGINE.deck_size(5) == total - 10 == 10


def _raw() -> dict[str, Any]:
    return tomllib.loads((seeds_dir() / "peanuts.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda raw: raw["cards"][1].update(notches=3), "notches"),
        (lambda raw: raw["cards"].pop(0), "no spy card"),
        (lambda raw: raw["combinations"].append({"rank": 2, "roles": ["spy", "spy"]}), "combinations"),
        (lambda raw: raw["target_points"].pop("4"), "target_points"),
        (lambda raw: raw["small_table"].update(set_aside="peanuts/seer-1"), "Assassin"),
        (lambda raw: raw["roles"].pop(), "roles"),
    ],
)
def test_wrong_data_is_refused(edit: Any, message: str) -> None:
    raw = _raw()
    edit(raw)
    with pytest.raises(DataError, match=message):
        Peanuts(parse_game(raw, "peanuts.toml"))


@pytest.mark.rule("PEA-2", "PEA-5", "PEA-22")
def test_setup_options_and_targets() -> None:
    assert Game(3).view["target"] == 3
    assert Game(4).view["target"] == Game(5).view["target"] == 2
    assert Game(3, target=1).view["target"] == 1
    game = Game(4, start=2)
    assert game.seat == 2 and game.view["turn"] == 2 and game.view["status"] == "setup"
    for options, match in [
        ({"start": 3}, "start"),
        ({"target": 0}, "target"),
        ({"speed": 1}, "Unknown option"),
    ]:
        with pytest.raises(GameError, match=match):
            ENGINE.setup(NAMES[:3], options)
    with pytest.raises(GameError, match="3 to 5 players"):
        ENGINE.setup(NAMES[:2], {})


@pytest.mark.rule("PEA-6")
def test_with_four_players_the_highest_assassin_is_set_aside() -> None:
    game = Game(4)
    assert game.view["set_aside"]["card"] == "peanuts/assassin-2"
    assert game.deck == 11
    game.refused({"type": "tap", "card": cid("assassin-2")}, "set aside")
    game.tap("assassin-1")  # the other Assassin is in play
    assert game.role(0) == "peanuts/assassin-1"

    five = Game(5)
    assert five.view["set_aside"] is None and five.deck == 10
    five.tap("assassin-2")
    assert five.role(0) == "peanuts/assassin-2"


@pytest.mark.rule("PEA-3", "PEA-4")
def test_the_reveal_seat_by_seat() -> None:
    game = Game(3, start=1)
    assert game.prompt == {
        "text": "Bob: tap your Role.",
        "seat": 1,
        "tap": True,
        "actions": [],
        "step": "reveal",
    }
    game.refused({"type": "tap", "card": cid("spy-1")}, "never dealt")
    assert game.tap("seer-1") == ["card-revealed"] and game.seat == 2  # the table says "your turn"
    game.refused({"type": "tap", "card": cid("seer-1")}, r"Seer #1 is Bob's Role")
    game.refused({"type": "tap", "card": cid("agent-1"), "seat": 1}, "already shown")
    game.refused({"type": "draw"}, "Not now")
    game.tap("agent-1", seat=0)  # a seat reader may answer out of turn
    game.tap("handler-1")
    view = game.view
    assert view["status"] == "playing"
    assert [p["role"]["card"] for p in view["players"]] == cid_list("agent-1 seer-1 handler-1")
    assert view["prompt"]["step"] == "draw" and view["prompt"]["seat"] == 1 and view["turn"] == 1
    assert view["players"][0]["role"] == {
        "card": "peanuts/agent-1",
        "name": "Agent",
        "role": "agent",
        "notches": 3,
    }


# ---------------------------------------------------------------------- a turn


@pytest.mark.rule("PEA-7", "PEA-8")
def test_a_turn_begins_with_a_draw() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    assert game.actions() == [{"type": "draw"}] and ENGINE.legal_actions(game.state)[0].primary
    game.refused({"type": "tap", "card": cid("agent-1"), "seat": 1}, "Ann's move")  # a play implies the draw
    game.refused({"type": "draw", "seat": 1}, "Ann's move")
    assert game.do("draw") == ["card-accepted"]
    assert game.deck == 12 and game.hand_counts() == [2, 1, 1]
    assert game.prompt["step"] == "act" and game.prompt["tap"]
    game.refused({"type": "draw"}, "Not now")
    game.refused({"type": "assist"}, "First tap")
    game.tap("agent-1")
    # No claim: an Informant Role and two cards in hand cannot be the whole family.
    assert game.action_values("type") == ["assist", "deploy"]
    game.tap("agent-2")  # changing one's mind: the last tap counts
    assert "Agent" in game.prompt["text"]


def test_a_draw_from_an_empty_deck_is_refused() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.state.deck = 0  # position: nothing left to draw
    game.refused({"type": "draw"}, "deck is empty")


# ---------------------------------------------------------------------- ASSIST actions


@pytest.mark.rule("PEA-13", "PEA-23", "PEA-39")
def test_spy_discarded_face_up_goes_back_into_the_deck() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    cues = game.play("spy-1", "assist")
    assert "shuffle-in" in cues
    assert game.deck == 13 and game.pile(0) == [] and game.hand_counts() == [1, 1, 1]
    assert game.prompt["step"] == "draw" and game.seat == 1


@pytest.mark.rule("PEA-25")
def test_telepath_assist_gives_an_extra_turn() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    turns = ENGINE.turn_number(game.state)
    cues = game.play("telepath-1", "assist")
    assert "extra-turn" in cues and ENGINE.turn_number(game.state) == turns + 1  # a new turn: "your turn"
    assert game.pile(0) == [cid("telepath-1")]
    assert game.seat == 0 and game.prompt["step"] == "draw" and "extra turn" in game.prompt["text"]
    game.do("draw")
    game.play("secret-police-1", "deploy")  # the extra turn is over: Bob plays
    assert game.seat == 1


@pytest.mark.rule("PEA-9", "PEA-27")
def test_assassin_discard_has_no_assist() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.play("assassin-1", "assist")
    assert game.pile(0) == [cid("assassin-1")] and game.deck == 12
    assert game.prompt["step"] == "draw" and game.seat == 1


@pytest.mark.rule("PEA-29")
def test_seer_assist_discards_one_card_face_down() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.play("seer-2", "assist")
    assert game.prompt["step"] == "face-down" and game.prompt["tap"] and "top 3" in game.prompt["text"]
    assert game.deck == 12  # looking is not drawing
    game.tap("telepath-2")
    assert game.deck == 11
    assert game.view["players"][0]["discards"] == [
        {"face_up": True, "card": cid("seer-2"), "name": "Seer", "role": "seer", "notches": 2},
        {"face_up": False},
    ]
    assert "telepath-2" not in json.dumps(game.view) + json.dumps([c.to_json() for c in game.cues])
    assert game.seat == 1


@pytest.mark.rule("PEA-29", "PEA-39")
def test_seer_assist_may_hide_the_spy_face_down() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.play("seer-2", "assist")
    game.tap("spy-1")  # the FAQ: the Spy may be discarded face down, and then it stays
    assert game.pile(0) == [cid("seer-2"), None] and game.deck == 11


@pytest.mark.rule("PEA-16", "PEA-27", "PEA-31", "PEA-45")
def test_informant_assist_trades_two_hands_and_the_assassin_eliminates() -> None:
    game = Game(5, ["seer-1", "assassin-1", "telepath-1", "informant-2", "handler-1"])
    game.do("draw")
    game.play("informant-1", "assist")
    assert game.prompt["step"] == "trade"
    pairs = game.action_values("seats")
    assert [0, 3] in pairs and [2, 4] in pairs
    assert all(1 not in pair for pair in pairs)  # an Assassin Role cannot trade
    game.refused({"type": "trade", "seats": [0, 1]}, "protects them")
    game.refused({"type": "trade", "seats": [0, 0]}, "different")
    game.do("trade", seats=[0, 3])
    assert game.prompt["step"] == "assassin-check" and game.seat == 0
    game.do("assassin", received=False)
    assert game.seat == 3
    cues = game.tap("assassin-2")  # Dee received the Assassin: the tap answers and discards it
    assert "player-eliminated" in cues
    dee = game.view["players"][3]
    assert dee["eliminated"] and dee["hand_count"] == 0 and game.pile(3) == [cid("assassin-2")]
    assert game.prompt["step"] == "draw" and game.seat == 1


@pytest.mark.rule("PEA-12", "PEA-26")
def test_a_telepath_role_is_never_asked_about_the_assassin() -> None:
    game = Game(5, ["seer-1", "assassin-1", "telepath-1", "informant-2", "handler-1"])
    game.do("draw")
    game.play("informant-1", "assist")
    game.do("trade", seats=[2, 3])
    assert game.seat == 3  # Cy (Telepath Role) is skipped
    game.do("assassin", received=True)
    assert game.prompt["step"] == "eliminate" and game.seat == 3
    game.refused({"type": "tap", "card": cid("agent-1")}, "the Assassin")
    game.tap("assassin-2")
    assert game.view["players"][3]["eliminated"]


@pytest.mark.rule("PEA-33")
def test_handler_assist_passes_every_role_one_seat() -> None:
    game = Game(3, ["informant-1", "seer-1", "agent-1"])
    game.do("draw")
    game.play("handler-1", "assist")
    assert game.action_values("direction") == ["left", "right"]
    game.refused({"type": "direction", "direction": "up"}, "left")
    game.do("direction", direction="left")  # left = clockwise: seat 0's Role goes to seat 1
    assert [game.role(s) for s in range(3)] == cid_list("agent-1 informant-1 seer-1")
    game.do("draw")
    game.play("handler-2", "assist")
    game.do("direction", direction="right")
    assert [game.role(s) for s in range(3)] == cid_list("informant-1 seer-1 agent-1")


@pytest.mark.rule("PEA-35", "PEA-40")
def test_agent_assist_draws_then_the_target_discards_and_picks() -> None:
    game = Game(5, ["seer-1", "assassin-1", "telepath-1", "informant-2", "handler-1"])
    game.do("draw")
    game.play("agent-1", "assist")
    assert game.prompt["step"] == "target"
    assert game.action_values("seat") == [2, 3, 4]  # not herself, not an Assassin Role
    game.refused({"type": "target", "seat": 1}, "protects them")
    game.refused({"type": "target", "seat": 0}, "another player")
    game.do("target", seat=3)
    assert game.deck == 8 and game.hand_counts() == [2, 1, 1, 1, 1]  # Ann drew (safely)
    assert game.prompt["step"] == "agent-discard" and game.seat == 3
    assert {"type": "claim-family"} not in game.actions()  # a Seer Role and two cards: never the family
    game.tap("secret-police-1")  # Dee discards her hand, then takes one of Ann's two cards
    assert game.pile(3) == [cid("secret-police-1")] and game.hand_counts() == [1, 1, 1, 1, 1]
    assert game.prompt["step"] == "assassin-check" and game.seat == 3
    game.do("assassin", received=True)
    game.tap("assassin-2")
    assert game.view["players"][3]["eliminated"] and game.pile(3) == cid_list("secret-police-1 assassin-2")
    assert game.seat == 1


@pytest.mark.rule("PEA-23", "PEA-35")
def test_agent_target_discarding_the_spy_shuffles_it_in() -> None:
    game = Game(3, ["seer-1", "informant-1", "handler-1"])
    game.do("draw")
    game.play("agent-1", "assist")
    game.do("target", seat=1)
    assert game.deck == 11
    assert "shuffle-in" in game.tap("spy-1")
    assert game.deck == 12 and game.pile(1) == []
    game.do("assassin", received=False)


@pytest.mark.rule("PEA-41", "PEA-42")
def test_faq_example_1_no_legal_target_voids_the_agent() -> None:
    # Cy is eliminated by the Secret Police; Ann and Bob (Assassin Role) remain.
    game = Game(3, ["seer-1", "assassin-1", "telepath-1"], start=2)
    no_spy_found(game, "secret-police-2", 0)  # Cy's turn: now his hand may hold the Spy
    game.do("draw")
    game.play("secret-police-1", "assist")
    assert game.action_values("seat") == [1, 2]
    game.do("target", seat=2)
    game.do("spy-found", found=True)
    game.tap("spy-1")
    assert game.view["players"][2]["eliminated"] and game.deck == 12  # the Spy went back in
    game.do("draw")  # Ann's extra turn
    game.play("agent-1", "assist")
    assert any(c.data.get("void") for c in game.cues) and game.seat == 1
    assert game.deck == 11  # nobody drew for the Agent
    assert game.pile(0) == cid_list("secret-police-1 agent-1")
    assert game.prompt["step"] == "draw" and game.seat == 1


@pytest.mark.rule("PEA-41", "PEA-43")
def test_faq_example_2_the_agent_with_an_empty_deck_does_nothing() -> None:
    game = Game(3, ["seer-1", "informant-1", "handler-1"])
    game.state.deck = 1  # position: one card left
    game.do("draw")  # Ann draws the final card
    cues = game.play("agent-1", "assist")
    assert any(c.data.get("void") for c in game.cues)
    assert game.deck == 0 and game.pile(0) == [cid("agent-1")]
    assert "showdown" in cues and game.prompt["step"] == "showdown" and game.seat == 1


@pytest.mark.rule("PEA-9", "PEA-41")
def test_seer_assist_with_an_empty_deck_does_nothing() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.state.deck = 1
    game.do("draw")
    game.play("seer-2", "assist")
    assert any(c.data.get("void") for c in game.cues) and game.prompt["step"] == "showdown"


@pytest.mark.rule("PEA-41")
def test_informant_with_one_player_able_to_trade_does_nothing() -> None:
    game = Game(3, ["seer-1", "assassin-1", "telepath-1"], start=2)
    no_spy_found(game, "secret-police-2", 0)  # Cy's turn
    game.do("draw")
    game.play("secret-police-1", "assist")
    game.do("target", seat=2)
    game.do("spy-found", found=True)
    game.tap("spy-1")
    game.do("draw")
    game.play("informant-1", "assist")  # only Ann can trade: Bob's Assassin Role protects him
    assert any(c.data.get("void") for c in game.cues) and game.seat == 1


@pytest.mark.rule("PEA-16", "PEA-37")
def test_secret_police_assist_finds_the_spy() -> None:
    game = Game(3, ["seer-1", "secret-police-1", "informant-1"], start=2)
    no_spy_found(game, "secret-police-3", 0)  # Cy's turn: from now on his hand may hold the Spy
    assert game.deck == 12 and game.pile(2) == [cid("secret-police-3")]
    game.do("draw")
    game.play("secret-police-2", "assist")
    assert game.action_values("seat") == [2]  # Bob's Secret Police Role protects him
    game.refused({"type": "target", "seat": 1}, "protects them")
    game.do("target", seat=2)
    assert game.prompt["step"] == "spy-found" and game.seat == 0
    assert game.action_values("found") == [False, True]
    game.do("spy-found", found=True)
    assert game.prompt["step"] == "eliminate" and game.seat == 2
    game.refused({"type": "tap", "card": cid("agent-1")}, "the Spy")
    cues = game.tap("spy-1")
    assert {"player-eliminated", "shuffle-in", "extra-turn"} <= set(cues)
    assert game.deck == 12 and game.pile(2) == [cid("secret-police-3")]  # the Spy went into the deck
    assert game.view["players"][2]["eliminated"]
    assert game.seat == 0 and game.prompt["step"] == "draw"


@pytest.mark.rule("PEA-3", "PEA-37")
def test_the_spy_cannot_be_found_in_a_hand_that_never_drew_nor_received() -> None:
    """The Spy is never dealt: until a player draws or is given a card, their hand cannot hold it,
    and "found the Spy" is neither offered nor accepted. A trade passes that on with the hand."""
    game = Game(3, ["seer-1", "handler-1", "agent-1"])
    game.do("draw")
    game.play("secret-police-1", "assist")
    game.do("target", seat=2)
    assert game.action_values("found") == [False]
    game.refused(
        {"type": "spy-found", "found": True},
        "Cy cannot hold the Spy: it went back into the deck after the deal, and Cy has neither drawn "
        "nor received a card since.",
    )
    game.do("spy-found", found=False)
    game.do("draw")  # Bob draws, then trades hands with Cy: Cy now holds what Bob held
    game.play("informant-1", "assist")
    game.do("trade", seats=[1, 2])
    game.do("assassin", received=False)
    game.do("assassin", received=False)
    game.do("draw")  # Cy looks at Bob's hand: Cy's dealt card, which cannot be the Spy
    game.play("secret-police-2", "assist")
    game.do("target", seat=1)
    assert game.action_values("found") == [False]
    game.refused({"type": "spy-found", "found": True}, "Bob cannot hold the Spy")
    game.do("spy-found", found=False)
    game.do("draw")  # Ann looks at Cy's hand, which came from Bob and has drawn since
    game.play("secret-police-3", "assist")
    game.do("target", seat=2)
    assert game.action_values("found") == [False, True]


@pytest.mark.rule("PEA-37")
def test_secret_police_without_the_spy() -> None:
    game = Game(3, ["seer-1", "secret-police-1", "informant-1"])
    game.do("draw")
    game.play("secret-police-2", "assist")
    game.do("target", seat=2)
    game.refused({"type": "spy-found", "found": "yes"}, "true or false")
    game.do("spy-found", found=False)
    assert game.seat == 1 and not game.view["players"][2]["eliminated"]


# ---------------------------------------------------------------------- DEPLOY actions


@pytest.mark.rule("PEA-10", "PEA-11")
def test_deploy_puts_the_old_role_face_up_in_the_pile() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.tap("telepath-1")
    assert "Informant goes to the discard pile" in game.prompt["actions"][1]["label"]
    assert game.do("deploy")[0] == "card-revealed"
    assert game.role(0) == cid("telepath-1") and game.pile(0) == [cid("informant-1")]
    assert game.view["players"][0]["protected_from"] == ["assassin"]
    assert game.deck == 12 and game.seat == 1


@pytest.mark.rule("PEA-24")
def test_spy_deploy_swaps_the_spy_for_the_top_card() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.play("spy-1", "deploy")
    assert game.prompt["step"] == "spy-swap" and game.role(0) == cid("spy-1")
    game.refused({"type": "tap", "card": cid("seer-1")}, "Bob's Role")
    cues = game.tap("assassin-1")  # the top card becomes the Role: not a hand, so nobody is out
    assert "shuffle-in" in cues and "player-eliminated" not in cues
    assert game.role(0) == cid("assassin-1") and game.pile(0) == [cid("informant-1")]
    assert game.deck == 12 and game.hand_counts() == [1, 1, 1]


@pytest.mark.rule("PEA-24")
def test_spy_deploy_with_an_empty_deck_keeps_the_spy() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.state.deck = 1
    game.do("draw")
    game.play("spy-1", "deploy")
    assert game.role(0) == cid("spy-1") and any(c.data.get("void") for c in game.cues)
    assert game.prompt["step"] == "showdown"


@pytest.mark.rule("PEA-12", "PEA-28", "PEA-41")
def test_assassin_role_protects_from_trades_and_discards() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.play("assassin-1", "deploy")  # drawing and deploying her is safe
    assert game.view["players"][0]["protected_from"] == ["discard", "trade"]
    assert not game.view["players"][0]["eliminated"]
    game.do("draw")
    game.play("agent-1", "assist")
    assert game.action_values("seat") == [2]
    game.do("target", seat=2)
    game.tap("agent-2")
    game.do("assassin", received=False)
    game.do("draw")
    game.play("informant-2", "assist")
    assert game.action_values("seats") == [[1, 2]]


@pytest.mark.rule("PEA-12", "PEA-38")
def test_secret_police_role_protects_from_the_secret_police() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.play("secret-police-1", "deploy")
    assert game.view["players"][0]["protected_from"] == ["secret-police"]
    game.do("draw")
    game.play("secret-police-2", "assist")
    assert game.action_values("seat") == [2]


@pytest.mark.rule("PEA-30")
def test_seer_deploy_draws_two_then_puts_two_under_the_deck() -> None:
    game = Game(3, ["informant-1", "handler-1", "agent-1"])
    game.do("draw")
    game.play("seer-1", "deploy")
    assert game.deck == 10 and game.hand_counts() == [3, 1, 1]
    assert game.prompt["step"] == "seer-draw" and game.action_values("type") == ["done", "claim-family"]
    game.do("done")
    assert game.deck == 12 and game.hand_counts() == [1, 1, 1] and game.seat == 1


@pytest.mark.rule("PEA-30")
def test_seer_deploy_with_one_card_left_draws_one() -> None:
    game = Game(3, ["informant-1", "handler-1", "agent-1"])
    game.state.deck = 2
    game.do("draw")
    game.play("seer-1", "deploy")
    assert game.deck == 0 and game.state.steps[0].info["count"] == 1
    game.do("done")
    assert game.deck == 1 and game.prompt["step"] == "draw"


@pytest.mark.rule("PEA-14", "PEA-15", "PEA-30")
def test_instant_win_after_the_seer_deploy() -> None:
    game = Game(3, ["informant-1", "handler-1", "agent-1"])
    game.do("draw")
    game.play("seer-1", "deploy")  # Ann now holds three cards
    game.do("claim-family")
    assert game.prompt["step"] == "claim" and game.action_values("type") == ["cancel-claim"]
    game.tap("spy-1")
    game.tap("telepath-1")
    cues = game.tap("assassin-1")
    assert "family-found" in cues and "round-won" in cues
    found = next(c for c in game.cues if c.name == "family-found")
    assert found.data == {"cards": cid_list("spy-1 telepath-1 assassin-1")}  # now they are shown
    view = game.view
    assert view["players"][0]["score"] == 1
    (result,) = view["rounds"]
    assert [card["name"] for card in result.pop("cards")] == ["Spy", "Telepath", "Assassin"]
    assert result == {
        "round": 1,
        "winners": [0],
        "reason": "Ann found the family: the Spy, the Telepath and the Assassin.",
        "how": "family",  # the three cards (shown now) stay with the round, for the next one's board
        "out": [],
    }
    assert view["prompt"]["step"] == "round-over" and view["prompt"]["seat"] is None


@pytest.mark.rule("PEA-13", "PEA-32")
def test_informant_deploy_draws_then_puts_a_card_back_on_top() -> None:
    game = Game(3, ["seer-1", "handler-1", "agent-1"])
    game.do("draw")
    assert game.play("informant-1", "deploy") == ["card-revealed", "card-accepted"]
    assert game.deck == 11 and game.hand_counts() == [2, 1, 1]  # the top card is in Ann's hand
    assert game.pile(0) == [cid("seer-1")] and game.role(0) == cid("informant-1")
    assert game.prompt["step"] == "informant-draw" and game.seat == 0
    assert game.action_values("type") == ["done"]  # an Informant Role and two cards: never the family
    game.refused({"type": "draw"}, "Not now")
    assert game.do("done") == ["card-accepted"]
    assert game.deck == 12 and game.hand_counts() == [1, 1, 1] and game.seat == 1


@pytest.mark.rule("PEA-32")
def test_informant_deploy_with_an_empty_deck_does_nothing() -> None:
    game = Game(3, ["seer-1", "handler-1", "agent-1"])
    game.state.deck = 1
    game.do("draw")
    game.play("informant-1", "deploy")
    assert any(c.data.get("void") for c in game.cues) and game.prompt["step"] == "showdown"


@pytest.mark.rule("PEA-34")
def test_handler_deploy_takes_back_a_face_down_card_then_trades_with_the_deck() -> None:
    game = Game(5, ["informant-1", "seer-1", "assassin-1", "agent-1", "telepath-1"])
    game.do("draw")
    game.play("seer-2", "assist")
    game.tap("agent-2")  # face down in Ann's pile
    assert game.deck == 8
    game.do("draw")
    game.play("handler-1", "deploy")  # Bob: his Seer goes to his pile
    assert game.pile(0) == [cid("seer-2"), None] and game.pile(1) == [cid("seer-1")]
    assert game.prompt["step"] == "take-back"
    labels = [a["label"] for a in game.prompt["actions"] if a["type"] == "take-back"]
    assert labels == ["Ann: Seer", "Ann: face-down card #2", "Bob: Seer"]
    game.refused({"type": "take-back", "seat": 0, "index": 2}, "no card number 2")
    assert "shuffle-in" in game.do("take-back", seat=0, index=1)
    assert game.deck == 8 and game.pile(0) == [cid("seer-2")]
    assert "agent-2" not in json.dumps([c.to_json() for c in game.cues])
    assert game.prompt["step"] == "target" and game.action_values("seat") == [0, 1, 3, 4]  # Cy: Assassin Role
    game.do("target", seat=3)  # Dee swaps her hand for the top card
    assert game.deck == 8 and game.prompt["step"] == "assassin-check" and game.seat == 3
    game.do("assassin", received=False)
    assert game.seat == 2


@pytest.mark.rule("PEA-34")
def test_handler_deploy_can_take_back_by_tapping_a_face_up_card() -> None:
    game = Game(3, ["informant-1", "seer-1", "agent-1"])
    game.do("draw")
    game.play("handler-1", "deploy")
    game.refused({"type": "tap", "card": cid("seer-1")}, "Tap a card lying face up in a discard pile")
    game.tap("informant-1")
    assert game.pile(0) == [] and game.deck == 13
    game.do("target", seat=0)  # she may pick herself: her Handler Role is not protected
    game.do("assassin", received=False)
    assert game.seat == 1


@pytest.mark.rule("PEA-36")
def test_agent_deploy_uses_another_players_role_assist() -> None:
    game = Game(4, ["informant-1", "assassin-1", "handler-1", "secret-police-1"])
    game.do("draw")
    game.play("agent-1", "deploy")
    assert game.action_values("seat") == [2, 3]  # the Assassin has no ASSIST
    game.refused({"type": "target", "seat": 1}, "no ASSIST")
    game.do("target", seat=2)  # Cy's Handler: Ann passes every Role
    assert game.prompt["step"] == "direction"
    game.do("direction", direction="left")
    assert [game.role(s) for s in range(4)] == cid_list("secret-police-1 agent-1 assassin-1 handler-1")
    assert game.pile(0) == [cid("informant-1")] and game.seat == 1


# ---------------------------------------------------------------------- eliminations and rounds


@pytest.mark.rule("PEA-17", "PEA-21")
def test_last_player_standing_wins_and_starts_the_next_round() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"], start=1)
    no_spy_found(game, "secret-police-2", 2)  # Bob
    no_spy_found(game, "secret-police-3", 1)  # Cy
    game.do("draw")
    game.play("secret-police-1", "assist")
    game.do("target", seat=1)
    game.do("spy-found", found=True)
    game.tap("spy-1")
    game.do("draw")
    game.play("informant-2", "assist")
    assert game.action_values("seats") == [[0, 2]]
    game.do("trade", seats=[0, 2])
    game.do("assassin", received=False)
    cues = game.tap("assassin-1")
    assert {"player-eliminated", "round-won"} <= set(cues)
    view = game.view
    assert [p["score"] for p in view["players"]] == [1, 0, 0]
    assert view["rounds"][0]["winners"] == [0] and "last player standing" in view["rounds"][0]["reason"]
    assert [a.label for a in ENGINE.legal_actions(game.state)] == ["Deal round 2"]
    assert game.actions() == [{"type": "next-round"}]
    game.refused({"type": "draw"}, "Not now")
    game.do("next-round")
    view = game.view
    assert view["round"] == 2 and view["status"] == "setup" and view["deck_count"] == 13
    assert all(not p["eliminated"] and p["discards"] == [] and p["role"] is None for p in view["players"])
    assert view["prompt"]["seat"] == 0  # the winner starts


@pytest.mark.rule("PEA-21")
def test_the_round_winner_starts_the_next_round() -> None:
    game = Game(3, ["informant-1", "handler-1", "agent-1"], start=1)
    game.do("draw")
    game.play("seer-1", "deploy")
    game.do("claim-family")
    for card in ("spy-1", "telepath-1", "assassin-1"):
        game.tap(card)
    game.do("next-round")
    assert game.seat == 1 and game.view["turn"] == 1


@pytest.mark.rule("PEA-22")
def test_the_game_ends_at_the_target() -> None:
    game = Game(3, ["informant-1", "handler-1", "agent-1"], target=1)
    game.do("draw")
    game.play("seer-1", "deploy")
    game.do("claim-family")
    game.tap("spy-1")
    game.tap("telepath-1")
    assert game.tap("assassin-1")[-2:] == ["round-won", "game-won"]
    view = game.view
    assert view["status"] == "game-over" and view["winners"] == [0]
    assert view["prompt"] == {
        "text": "Game over: Ann won.",
        "seat": None,
        "tap": False,
        "actions": [],
        "step": "game-over",
    }
    game.refused({"type": "next-round"}, "game is over")


# ---------------------------------------------------------------------- Finding the Family


@pytest.mark.rule("PEA-14")
def test_a_claim_with_the_role_as_one_of_the_family() -> None:
    game = Game(3, ["telepath-1", "handler-1", "agent-1"])
    game.do("draw")
    game.do("claim-family")
    game.tap("telepath-1")  # her own Role counts
    game.tap("assassin-1")
    assert "family-found" in game.tap("spy-1")


@pytest.mark.rule("PEA-14")
def test_false_claims_are_refused() -> None:
    game = Game(3, ["telepath-2", "informant-1", "agent-1"])
    game.refused({"type": "claim-family", "seat": 1}, "Only Ann")
    game.do("draw")
    game.do("claim-family")
    game.refused({"type": "tap", "card": cid("seer-1")}, "False claim: tap one Spy, one Telepath and one")
    game.refused({"type": "tap", "card": cid("informant-1")}, r"False claim: Informant .* Bob's Role")
    game.refused({"type": "tap", "card": cid("assassin-2")}, "False claim: .* set aside")
    game.refused({"type": "draw"}, "Not now")
    game.tap("spy-1")
    game.refused({"type": "tap", "card": cid("spy-1")}, "tap one Spy, one Telepath and one Assassin")
    game.tap("assassin-1")
    # Ann's Role is a Telepath: another Telepath would be a third card in a two-card hand.
    game.refused({"type": "tap", "card": cid("telepath-1")}, "holds only 2")
    game.do("cancel-claim")
    assert game.prompt["step"] == "act" and game.view["claim"] is None
    assert game.view["players"][0]["score"] == 0


@pytest.mark.rule("PEA-14", "PEA-15", "PEA-32")
def test_no_claim_where_the_record_shows_the_family_cannot_be_held() -> None:
    """The Informant's DEPLOY is a draw, but with the Informant as her Role and two cards in hand Ann
    cannot hold all three: the claim is neither offered nor accepted. Nor when every card of a family
    Role is in sight, here both Telepaths."""
    game = Game(3, ["seer-1", "telepath-1", "assassin-1"])
    game.do("draw")
    game.play("informant-1", "deploy")
    assert game.prompt["step"] == "informant-draw" and game.action_values("type") == ["done"]
    game.refused({"type": "claim-family"}, "cannot succeed now: Ann holds only 2 card")
    game.do("done")
    assert game.seat == 1 and game.hand_counts() == [1, 1, 1]
    game.do("draw")
    game.refused({"type": "claim-family", "seat": 0}, "Only Bob has just drawn")
    game.play("telepath-2", "deploy")  # Bob's old Telepath goes face up: both are in sight
    game.do("draw")  # Cy, with the Assassin as his Role, would need a Telepath
    assert "claim-family" not in game.action_values("type")
    game.refused({"type": "claim-family"}, "cannot succeed now: every Telepath is in sight on the table")


@pytest.mark.rule("PEA-15", "PEA-35")
def test_a_claim_may_follow_the_agents_draw() -> None:
    """The Agent's ASSIST: the player draws, and may claim before the target takes a card."""
    game = Game(3, ["telepath-1", "handler-1", "seer-1"])
    game.do("draw")
    game.play("agent-1", "assist")
    game.do("target", seat=1)
    assert game.prompt["step"] == "agent-discard" and game.seat == 1
    game.do("claim-family")
    for card in ("telepath-1", "assassin-1"):
        game.tap(card)
    assert "family-found" in game.tap("spy-1")
    assert game.view["players"][0]["score"] == 1


# ---------------------------------------------------------------------- the showdown


def showdown(
    roles: list[str],
    hands: dict[int, str],
    piles: dict[int, list[tuple[str | None, bool]]] | None = None,
    last: str = "agent-3",
    **options: Any,
) -> Game:
    """Five players; those without a hand in `hands` are out (position). The deck holds one card:
    Ann draws it and discards `last` for an ASSIST that does nothing (it joins her pile); then each
    remaining player shows their hand card."""
    game = Game(5, roles, **options)
    for seat in range(5):
        if seat not in hands:
            game.state.eliminated[seat] = True
            game.state.hands[seat] = 0
    for seat, pile in (piles or {}).items():
        game.state.piles[seat] = [Discard(cid(card) if card else None, up) for card, up in pile]
    game.state.deck = 1
    game.do("draw")
    cues = game.play(last, "assist")
    assert "showdown" in cues and game.prompt["step"] == "showdown"
    for seat, card in hands.items():
        game.tap(card, seat=seat)
    return game


SPARE_ROLES = ["secret-police-2", "secret-police-3", "secret-police-4"]


@pytest.mark.rule("PEA-19")
def test_the_combination_table() -> None:
    rank = {
        name: ENGINE.combination(cid(a), cid(b))
        for name, (a, b) in {
            "spy-telepath": ("spy-1", "telepath-1"),
            "spy-assassin": ("assassin-1", "spy-1"),
            "telepath-assassin": ("telepath-1", "assassin-1"),
            "spy-informant": ("spy-1", "informant-1"),
            "telepath-seer": ("seer-1", "telepath-1"),
            "handler-agent": ("handler-1", "agent-1"),
            "assassin-secret-police": ("assassin-1", "secret-police-1"),
        }.items()
    }
    assert rank["spy-telepath"] == (1, f"Spy {X} Telepath")
    assert rank["spy-assassin"][0] == rank["spy-telepath"][0]  # equal best
    order = [rank[k][0] for k in rank][1:]
    assert order == sorted(order) and len(set(order)) == 6
    assert ENGINE.combination(cid("telepath-1"), cid("telepath-2")) is None
    assert ENGINE.combination(cid("spy-1"), cid("seer-1")) is None


BETTER_WORSE = [
    # (better Role, better hand), (worse Role, worse hand), one pair per step down the table
    (("assassin-1", "spy-1"), ("telepath-2", "assassin-2")),
    (("assassin-2", "telepath-2"), ("informant-1", "spy-1")),
    (("informant-1", "spy-1"), ("seer-1", "telepath-1")),
    (("telepath-1", "seer-1"), ("handler-1", "agent-1")),
    (("agent-1", "handler-1"), ("assassin-1", "secret-police-1")),
]


@pytest.mark.rule("PEA-18", "PEA-19")
@pytest.mark.parametrize(("better", "worse"), BETTER_WORSE)
def test_a_higher_combination_wins_the_showdown(better: tuple[str, str], worse: tuple[str, str]) -> None:
    # Ann (seat 0) holds the worse combination, Bob (seat 1) the better one.
    game = showdown([worse[0], better[0], *SPARE_ROLES], {0: worse[1], 1: better[1]})
    result = game.view["showdown"]
    assert result["winners"] == [1] and result["decided_by"] == "combination"
    assert game.view["rounds"][0]["reason"].startswith("Bob wins the showdown with")
    assert game.view["players"][1]["score"] == 1


@pytest.mark.rule("PEA-19", "PEA-20")
def test_any_combination_beats_fewer_notches() -> None:
    game = showdown(["handler-1", "seer-1", *SPARE_ROLES], {0: "agent-1", 1: "spy-1"})
    result = game.view["showdown"]
    assert result["winners"] == [0] and f"Handler {X} Agent" in result["reason"]
    hands = {h["seat"]: h for h in result["hands"]}
    assert hands[0]["combination"] == f"Handler {X} Agent" and hands[0]["notches"] == 6
    assert hands[1]["combination"] is None and hands[1]["notches"] == 3


@pytest.mark.rule("PEA-18", "PEA-20")
def test_without_combinations_the_fewest_notches_win() -> None:
    game = showdown(["secret-police-1", "seer-1", *SPARE_ROLES], {0: "handler-1", 1: "informant-1"})
    result = game.view["showdown"]
    assert result["winners"] == [1] and result["decided_by"] == "notches"
    assert result["reason"] == "Nobody holds a combination; Bob has the fewest notches on Role and hand (5)."
    assert all(h["discard_notches"] is None for h in result["hands"])  # piles were not needed


@pytest.mark.rule("PEA-20")
def test_a_notch_tie_goes_to_the_fewest_discard_notches_face_down_included() -> None:
    # Ann: Seer 2 + Informant 3 = 5; Bob: Telepath 2 + Handler 3 = 5 (no combination).
    # Ann's pile: Seer 2 + the Agent she just discarded 3 = 5.
    # Bob's pile: Informant 3 face up + Secret Police 4 face down = 7: the face-down card decides.
    game = showdown(
        ["seer-1", "telepath-1", *SPARE_ROLES],
        {0: "informant-1", 1: "handler-1"},
        piles={0: [("seer-2", True)], 1: [("informant-2", True), ("secret-police-1", False)]},
    )
    result = game.view["showdown"]
    assert result["winners"] == [0] and result["decided_by"] == "discards"
    hands = {h["seat"]: h for h in result["hands"]}
    assert hands[0]["discard_notches"] == 5 and hands[1]["discard_notches"] == 7
    assert "fewest notches in the discard pile (5)" in result["reason"]
    assert "secret-police-1" not in json.dumps(game.view)
    assert game.view["players"][1]["discards"][1] == {"face_up": False}


def test_a_face_down_card_whose_record_proved_wrong_is_asked_when_the_piles_decide() -> None:
    """Bob's second discard is face down and unknown (a tap proved its record wrong): the piles
    decide, so Bob turns it over and taps it; the view still shows only the totals."""
    game = showdown(
        ["seer-1", "telepath-1", *SPARE_ROLES],
        {0: "informant-1", 1: "handler-1"},
        piles={0: [("seer-2", True)], 1: [("informant-2", True), (None, False)]},
    )
    assert game.prompt == {
        "text": "The discard piles decide: Bob, turn over face-down card #2 and tap it.",
        "seat": 1,
        "tap": True,
        "actions": [],
        "step": "flip",
    }
    assert game.view["showdown"]["winners"] == [] and game.view["rounds"] == []
    game.refused({"type": "tap", "card": cid("seer-2")}, "Ann's discard pile")
    game.refused({"type": "tap", "card": cid("secret-police-1"), "seat": 0}, "Bob's move")
    cues = game.tap("secret-police-1")
    assert "round-won" in cues
    result = game.view["showdown"]
    assert result["winners"] == [0] and result["decided_by"] == "discards"
    assert {h["seat"]: h["discard_notches"] for h in result["hands"]} == {0: 5, 1: 7}
    assert "secret-police-1" not in json.dumps(game.view) + json.dumps([c.to_json() for c in game.cues])
    assert game.view["players"][1]["discards"][1] == {"face_up": False}


def test_an_unknown_face_down_card_is_not_asked_when_the_piles_do_not_decide() -> None:
    game = showdown(
        ["secret-police-1", "seer-1", *SPARE_ROLES],
        {0: "handler-1", 1: "informant-1"},
        piles={1: [(None, False)]},
    )
    assert game.view["showdown"]["decided_by"] == "notches" and game.prompt["step"] == "round-over"


@pytest.mark.rule("PEA-20")
def test_a_combination_tie_goes_to_notches_then_discards() -> None:
    game = showdown(
        ["telepath-1", "telepath-2", *SPARE_ROLES],
        {0: "assassin-1", 1: "assassin-2"},
        piles={1: [("handler-1", True), ("seer-1", True)]},
    )
    result = game.view["showdown"]
    assert result["winners"] == [0] and result["decided_by"] == "discards"  # Ann's pile: 3 (the Agent)
    assert result["reason"].startswith(
        f"Ann (Telepath {X} Assassin) and Bob (Telepath {X} Assassin) hold equal combinations; "
        "Ann and Bob tie on 4 notches"
    )


def test_a_tie_on_every_count_shares_the_round() -> None:
    game = showdown(
        ["seer-1", "telepath-1", "informant-3", *SPARE_ROLES[:2]],
        {0: "informant-1", 1: "handler-1", 2: "handler-2"},  # Cy: Informant + Handler = 6, beaten
        piles={1: [("agent-1", True)]},
    )
    result = game.view["showdown"]
    assert result["winners"] == [0, 1] and result["decided_by"] == "tie"
    assert "Ann and Bob share the round" in result["reason"]
    assert [p["score"] for p in game.view["players"]] == [1, 1, 0, 0, 0]
    assert game.view["rounds"][0]["winners"] == [0, 1]
    game.do("next-round")
    assert game.seat == 1  # the first tied winner clockwise from Ann, who ended the round


def test_a_shared_round_can_end_the_game_for_both() -> None:
    game = showdown(
        ["seer-1", "telepath-1", *SPARE_ROLES],
        {0: "informant-1", 1: "handler-1"},
        piles={1: [("agent-1", True)]},
        target=1,
    )
    assert ENGINE.is_over(game.state) and ENGINE.winners(game.state) == (0, 1)


def test_showdown_taps_are_checked() -> None:
    game = Game(3, ["seer-1", "informant-1", "handler-1"])
    game.state.deck = 1
    game.do("draw")
    game.play("agent-1", "assist")
    game.refused({"type": "tap", "card": cid("agent-1")}, "Ann's discard pile")
    game.refused({"type": "tap", "card": cid("spy-1"), "seat": 5}, "seat number")
    game.tap("spy-1", seat=0)  # any order, by seat
    game.refused({"type": "tap", "card": cid("telepath-1"), "seat": 0}, "not showing")
    shown = game.view["showdown"]
    assert shown["winners"] == [] and [h["seat"] for h in shown["hands"]] == [0]


# ---------------------------------------------------------------------- secrecy
#
# The public view (prompt included), every cue and every refusal must be the same whichever card lies
# face down, and whichever cards a claim tapped before it was withdrawn: two games that differ only
# in such a card must tell the table exactly the same things.

ACTIONS = {"draw", "assist", "deploy", "done", "claim-family", "cancel-claim", "next-round"}


def inputs(*steps: str | dict[str, Any]) -> list[dict[str, Any]]:
    """Inputs in short: an action ("draw"), a card to tap ("seer-2") or a whole event."""
    events = []
    for step in steps:
        if isinstance(step, dict):
            events.append(step)
        elif step in ACTIONS:
            events.append({"type": step})
        else:
            events.append({"type": "tap", "card": cid(step)})
    return events


def public_output(state: PeanutsState, cues: list[Any]) -> dict[str, Any]:
    """What an accepted input tells the table: the public view and the cues."""
    return {"view": ENGINE.public_view(state), "cues": [cue.to_json() for cue in cues]}


def public_record(events: list[dict[str, Any]], players: int = 3) -> tuple[list[Any], PeanutsState]:
    """A new game (Ann starts) fed `events`: what each input told the table (a refusal too), and
    the final state."""
    state = ENGINE.setup(NAMES[:players], {"start": 0})
    record: list[Any] = []
    for event in events:
        try:
            state, cues = ENGINE.apply(state, event)
        except GameError as error:
            record.append({"refused": str(error)})
        else:
            record.append(public_output(state, cues))
    return record, state


def same_public_record(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[Any]:
    """Two games that differ only in hidden cards tell the table the same things, input by input."""
    a, _ = public_record(first)
    b, _ = public_record(second)
    for index, (x, y) in enumerate(zip(a, b, strict=True)):
        assert x == y, f"input {index} ({first[index]} / {second[index]}) tells the table different things"
    return a


def face_down_then_secret_police(face_down: str) -> list[dict[str, Any]]:
    """Ann's Seer puts `face_down` face down; Bob's Secret Police looks at Ann's hand."""
    return inputs(
        *("informant-1", "telepath-1", "seer-1"),
        *("draw", "seer-2", "assist", face_down),
        *("draw", "secret-police-1", "assist", {"type": "target", "seat": 0}),
    )


def test_the_secret_police_question_does_not_depend_on_a_face_down_card() -> None:
    record = same_public_record(
        face_down_then_secret_police("spy-1"), face_down_then_secret_police("handler-2")
    )
    prompt = record[-1]["view"]["prompt"]
    assert prompt["step"] == "spy-found"
    assert [a["found"] for a in prompt["actions"]] == [False, True]


def test_the_table_may_find_the_spy_where_the_record_put_it_face_down() -> None:
    """The cards are the truth: if Ann shows the Spy, the card in her pile is another one. The
    companion accepts it without a word (a refusal would tell where the Spy lies) and forgets what
    its record said that face-down card was."""
    found = inputs({"type": "spy-found", "found": True}, "spy-1")
    record = same_public_record(
        face_down_then_secret_police("spy-1") + found, face_down_then_secret_police("handler-2") + found
    )
    view = record[-1]["view"]
    assert view["players"][0]["eliminated"] and view["deck_count"] == 11  # the Spy is shuffled in
    assert [d["face_up"] for d in view["players"][0]["discards"]] == [True, False]
    assert view["prompt"]["step"] == "draw" and view["prompt"]["seat"] == 1  # Bob's extra turn
    _, state = public_record(face_down_then_secret_police("spy-1") + found)
    assert state.piles[0][1] == Discard(None, False)  # unknown now


def face_down_then_trade(face_down: str) -> list[dict[str, Any]]:
    """Three players (Assassin 2 set aside): Ann's Seer puts `face_down` face down; Bob's Informant
    makes Ann and Cy trade hands."""
    return inputs(
        *("informant-1", "telepath-1", "seer-1"),
        *("draw", "seer-2", "assist", face_down),
        *("draw", "informant-2", "assist", {"type": "trade", "seats": [0, 2]}),
    )


def test_the_assassin_question_does_not_depend_on_a_face_down_card() -> None:
    received = inputs({"type": "assassin", "received": True}, "assassin-1")
    record = same_public_record(
        face_down_then_trade("assassin-1") + received, face_down_then_trade("handler-2") + received
    )
    prompt = record[-3]["view"]["prompt"]
    assert prompt["step"] == "assassin-check" and prompt["seat"] == 0 and prompt["tap"]
    assert prompt["text"] == "Ann: did you receive the Assassin? If so, tap it; if not, Next."
    assert [a["received"] for a in prompt["actions"]] == [False, True]
    assert record[-1]["view"]["players"][0]["eliminated"]


def test_an_assassin_in_sight_everywhere_cannot_be_received() -> None:
    """What every player sees may still refuse: Assassin 2 is set aside, Assassin 1 a Role."""
    game = Game(3, ["assassin-1", "telepath-1", "seer-1"])
    game.do("draw")
    game.play("informant-1", "assist")
    game.do("trade", seats=[1, 2])
    assert game.seat == 2 and not game.prompt["tap"]
    assert game.action_values("received") == [False]
    game.refused({"type": "assassin", "received": True}, "every Assassin is in sight")


def test_a_tap_of_a_card_recorded_face_down_is_accepted_and_corrects_the_record() -> None:
    """Bob plays the Telepath that Ann's tap put face down: the physical card wins."""

    def game(face_down: str) -> list[dict[str, Any]]:
        return inputs(
            *("informant-1", "seer-1", "handler-1"),
            *("draw", "seer-2", "assist", face_down),
            *("draw", "telepath-2", "assist"),
        )

    record = same_public_record(game("telepath-2"), game("handler-2"))
    assert "extra-turn" in [cue["cue"] for cue in record[-1]["cues"]]
    _, state = public_record(game("telepath-2"))
    assert state.piles[0][1] == Discard(None, False)
    assert state.piles[1] == [Discard(cid("telepath-2"), True)]


def test_the_handler_takes_back_a_face_down_card_by_its_number_only() -> None:
    """A tap names a face-up card; a tap of any other card is refused the same way, whatever the
    face-down cards are."""

    def game(face_down: str) -> list[dict[str, Any]]:
        return inputs(
            *("informant-1", "seer-1", "agent-1"),
            *("draw", "seer-2", "assist", face_down),
            *("draw", "handler-1", "deploy", "telepath-2"),
            {"type": "take-back", "seat": 0, "index": 1},
        )

    record = same_public_record(game("telepath-2"), game("handler-2"))
    assert record[-2] == {
        "refused": "Tap a card lying face up in a discard pile, or pick a card by its number."
    }
    assert record[-1]["view"]["prompt"]["step"] == "target"


def claim(*cards: str) -> list[dict[str, Any]]:
    """Ann (Assassin Role) draws, claims, taps `cards`, and withdraws the claim."""
    return inputs("assassin-1", "handler-1", "agent-1", "draw", "claim-family", *cards, "cancel-claim")


def test_a_withdrawn_claim_tells_the_table_only_how_many_cards() -> None:
    record = same_public_record(claim("spy-1", "telepath-2"), claim("telepath-1", "spy-1"))
    cues = [cue for output in record[4:] for cue in output["cues"]]
    assert [cue["text"] for cue in cues if cue["cue"] == "card-accepted"] == [
        "Ann claims Finding the Family!",
        "Ann: 1 of 3 cards tapped.",
        "Ann: 2 of 3 cards tapped.",
        "Ann withdraws the claim.",
    ]
    assert all("card" not in cue["data"] for cue in cues)
    assert record[-1]["view"]["claim"] is None and record[-1]["view"]["prompt"]["step"] == "act"


def test_a_refused_claim_card_is_not_named() -> None:
    """A card of another Role, or a second Telepath: one refusal, whichever card it was."""
    record = same_public_record(claim("telepath-2", "seer-2"), claim("telepath-2", "handler-2"))
    assert record[-2] == {"refused": "False claim: tap one Spy, one Telepath and one Assassin."}
    record = same_public_record(claim("telepath-2", "telepath-1"), claim("telepath-2", "agent-2"))
    assert record[-2] == {"refused": "False claim: tap one Spy, one Telepath and one Assassin."}


def test_a_claim_may_use_a_card_recorded_face_down() -> None:
    """Ann's tap put Assassin 1 face down, but Cy holds it: his claim wins, as the cards say."""
    game = Game(3, ["informant-1", "seer-1", "telepath-1"])
    game.do("draw")
    game.play("seer-2", "assist")
    game.tap("assassin-1")
    game.do("draw")
    game.play("informant-2", "deploy")
    game.do("done")
    game.do("draw")
    game.do("claim-family")
    for card in ("telepath-1", "spy-1"):
        game.tap(card)
    assert "family-found" in game.tap("assassin-1")


@pytest.mark.rule("PEA-11")
def test_the_public_view_never_names_a_face_down_card() -> None:
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.play("seer-2", "assist")
    cues = [c.to_json() for c in game.cues]
    game.tap("telepath-2")
    cues += [c.to_json() for c in game.cues]
    game.do("draw")
    game.play("handler-2", "deploy")
    cues += [c.to_json() for c in game.cues]
    text = json.dumps(game.view) + json.dumps(cues)
    assert "telepath-2" not in text and "Telepath" not in text
    assert game.view["players"][0]["discards"][1] == {"face_up": False}


# ---------------------------------------------------------------------- a scripted round, card by card


def test_the_deck_count_follows_the_physical_deck_through_a_scripted_round() -> None:
    """Three players, every card of the round accounted for. `deck` is the real deck, top first."""
    deck = cid_list(
        "spy-1 seer-2 agent-2 informant-2 secret-police-2 handler-2 telepath-2 assassin-1 agent-3 "
        "informant-3 handler-3 secret-police-3 secret-police-4"
    )
    # Dealt: Ann informant-1 (Role) + seer-1, Bob handler-1 + agent-1, Cy secret-police-1 + telepath-1.
    game = Game(3, ["informant-1", "handler-1", "secret-police-1"])

    def check() -> None:
        assert game.deck == len(deck)

    check()
    # Ann draws the Spy and discards it face up: it is shuffled back in.
    deck.pop(0)
    game.do("draw")
    check()
    game.play("spy-1", "assist")
    deck.insert(5, cid("spy-1"))
    check()
    # Bob draws Seer 2 and uses it: of the three top cards, Informant 2 goes face down to his pile.
    deck.pop(0)
    game.do("draw")
    game.play("seer-2", "assist")
    check()
    deck.remove(cid("informant-2"))
    game.tap("informant-2")
    check()
    # Cy draws Agent 2 and uses it on Ann: Cy draws, Ann discards Seer 1 and takes Secret Police 2.
    deck.pop(0)
    game.do("draw")
    game.play("agent-2", "assist")
    assert game.action_values("seat") == [0, 1]
    deck.pop(0)
    game.do("target", seat=0)
    check()
    game.tap("seer-1")
    game.do("assassin", received=False)
    check()
    # Ann draws Handler 2 and deploys it: Informant 1 to her pile; she shuffles Bob's face-down card
    # back (to the bottom), then Bob trades his Agent 1 for the top card (the Spy).
    deck.pop(0)
    game.do("draw")
    game.play("handler-2", "deploy")
    game.do("take-back", seat=1, index=1)
    deck.append(cid("informant-2"))
    check()
    assert deck[0] == cid("spy-1")
    deck[0] = cid("agent-1")
    game.do("target", seat=1)
    game.do("assassin", received=False)
    check()
    # Bob draws Agent 1 back and deploys the Spy, which swaps at once for the top card: Telepath 2.
    deck.pop(0)
    game.do("draw")
    game.play("spy-1", "deploy")
    assert deck.pop(0) == cid("telepath-2")
    game.tap("telepath-2")
    deck.insert(3, cid("spy-1"))
    check()
    assert game.pile(1) == cid_list("seer-2 handler-1")
    # Cy draws the Assassin (safe) and discards Telepath 1: another turn.
    assert deck.pop(0) == cid("assassin-1")
    game.do("draw")
    assert "extra-turn" in game.play("telepath-1", "assist")
    check()
    # Cy draws Agent 3 and deploys it (Secret Police 1 to his pile), using Ann's Handler: Roles go left.
    deck.pop(0)
    game.do("draw")
    game.play("agent-3", "deploy")
    game.do("target", seat=0)
    game.do("direction", direction="left")
    assert [game.role(s) for s in range(3)] == cid_list("agent-3 handler-2 telepath-2")
    check()
    # Ann draws Informant 3 and makes Bob and Cy trade: Bob receives the Assassin and is out.
    deck.pop(0)
    game.do("draw")
    game.play("informant-3", "assist")
    game.do("trade", seats=[1, 2])
    assert game.seat == 1  # Cy (Telepath Role) is not asked
    game.do("assassin", received=True)
    assert "player-eliminated" in game.tap("assassin-1")
    check()
    # Cy (Bob is out) draws the Spy, uses Agent 1 on Ann: Cy draws Handler 3, Ann discards Secret
    # Police 2 and takes Handler 3 from Cy.
    assert game.seat == 2
    deck.pop(0)
    game.do("draw")
    game.play("agent-1", "assist")
    assert game.action_values("seat") == [0]
    deck.pop(0)
    game.do("target", seat=0)
    game.tap("secret-police-2")
    game.do("assassin", received=False)
    check()
    # Ann draws Secret Police 3 and deploys it (Agent 3 to her pile).
    deck.pop(0)
    game.do("draw")
    game.play("secret-police-3", "deploy")
    check()
    # Cy draws Secret Police 4 and uses it: Ann's Secret Police Role protects her, so nothing happens.
    deck.pop(0)
    game.do("draw")
    game.play("secret-police-4", "assist")
    assert any(c.data.get("void") for c in game.cues)
    check()
    # Ann draws the final card, Informant 2, and trades hands with Cy: she receives the Spy.
    assert deck == [cid("informant-2")]
    deck.pop(0)
    game.do("draw")
    game.play("informant-2", "assist")
    assert game.action_values("seats") == [[0, 2]]
    game.do("trade", seats=[0, 2])
    game.do("assassin", received=False)  # Ann is asked; Cy's Telepath Role keeps him safe
    check()
    # The deck is empty at the end of the turn: showdown, from Ann's left (Cy, then Ann).
    assert game.prompt["step"] == "showdown" and game.seat == 2
    game.tap("handler-3")
    game.tap("spy-1")
    result = game.view["showdown"]
    # Ann: Secret Police 4 + Spy 1 = 5; Cy: Telepath 2 + Handler 3 = 5. Piles: Ann 2+3+3+4+3+3 = 18,
    # Cy 3+2+4+3+4 = 16: Cy wins the round.
    assert {h["seat"]: h["discard_notches"] for h in result["hands"]} == {0: 18, 2: 16}
    assert result["winners"] == [2] and result["decided_by"] == "discards"
    assert game.pile(0) == cid_list("seer-1 informant-1 informant-3 secret-police-2 agent-3 informant-2")
    assert game.pile(2) == cid_list("agent-2 telepath-1 secret-police-1 agent-1 secret-police-4")


# ---------------------------------------------------------------------- whole games with real cards

FAMILY = ("spy", "telepath", "assassin")


@dataclass
class Input:
    """One input of a simulated game: the state before, the event, and the state after and its
    cues, or (refused) None and the refusal."""

    before: PeanutsState
    event: dict[str, Any]
    after: PeanutsState | None
    outcome: list[Any] | str

    def public_output(self) -> dict[str, Any]:
        if self.after is None:
            assert isinstance(self.outcome, str)
            return {"refused": self.outcome}
        assert isinstance(self.outcome, list)
        return public_output(self.after, self.outcome)


class Table:
    """Real cards in step with the companion. A seeded player makes every choice a person would
    make, moves the cards as the rules say, and feeds the companion the same taps and actions.
    After every input the companion must agree with the table; from time to time the player also
    tries something impossible, which must be refused without a trace."""

    def __init__(self, players: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n = players
        self.state = ENGINE.setup(NAMES[:players], {"start": self.rng.randrange(players)})
        self.inputs = 0
        self.refusals = 0
        self.log: list[Input] = []  # every input, refused ones too (see `check_hidden_cards`)
        self.deal()

    # The physical table.

    def deal(self) -> None:
        cards = sorted(DATA.cards)
        if self.state.set_aside:
            cards.remove(self.state.set_aside)
        spies = [c for c in cards if role_of(c) == "spy"]
        cards = [c for c in cards if c not in spies]
        self.rng.shuffle(cards)
        self.hands = [[cards.pop(), cards.pop()] for _ in range(self.n)]
        self.deck = cards + spies  # the top card is the last one
        self.rng.shuffle(self.deck)
        self.chosen = [hand.pop(self.rng.randrange(2)) for hand in self.hands]
        self.roles: list[str | None] = [None] * self.n
        self.piles: list[list[tuple[str, bool]]] = [[] for _ in range(self.n)]
        self.out = [False] * self.n
        self.received: dict[int, str] = {}

    def shuffle_in(self, card: str) -> None:
        self.deck.insert(self.rng.randrange(len(self.deck) + 1), card)

    def discard_face_up(self, seat: int, card: str) -> None:
        if role_of(card) == "spy":
            self.shuffle_in(card)
        else:
            self.piles[seat].append((card, True))

    def draw(self, seat: int) -> str:
        card = self.deck.pop()
        self.hands[seat].append(card)
        return card

    # Talking to the companion.

    def send(self, event: dict[str, Any]) -> None:
        before = self.state
        self.state, cues = ENGINE.apply(self.state, event)
        self.log.append(Input(before, event, self.state, cues))
        self.inputs += 1
        self.check(cues)

    def tap(self, card: str, **fields: Any) -> None:
        self.send({"type": "tap", "card": card, **fields})

    def check(self, cues: list[Any]) -> None:
        view = ENGINE.public_view(self.state)
        assert view["deck_count"] == len(self.deck)
        in_front = [r or c for r, c in zip(self.roles, self.chosen, strict=True)]
        total = len(self.deck) + sum(map(len, self.hands)) + len(in_front) + sum(map(len, self.piles))
        assert total + (1 if self.state.set_aside else 0) == len(DATA.cards)
        for seat, player in enumerate(view["players"]):
            assert player["hand_count"] == len(self.hands[seat])
            assert (player["role"] or {}).get("card") == self.roles[seat]
            assert [d.get("card") for d in player["discards"]] == [
                c if up else None for c, up in self.piles[seat]
            ]
            assert player["eliminated"] == self.out[seat]
        text = json.dumps(view) + json.dumps([cue.to_json() for cue in cues])
        for pile in self.piles:
            for card, up in pile:
                assert up or card not in text

    def try_the_impossible(self) -> None:
        """Tap another player's Role (it can be in no hand, no pile), or draw out of turn."""
        others = [r for s, r in enumerate(self.roles) if r and s != self.state.turn]
        event = {"type": "tap", "card": self.rng.choice(others)} if others else {"type": "draw"}
        if event["type"] == "draw" and self.state.steps and self.state.steps[0].kind == "draw":
            return
        before = copy.deepcopy(self.state)
        with pytest.raises(GameError) as error:
            ENGINE.apply(self.state, event)
        assert self.state == before
        self.log.append(Input(self.state, event, None, str(error.value)))
        self.refusals += 1

    def family(self, seat: int, partial: bool = False) -> list[str] | None:
        """One card of each family Role `seat` holds (Role and hand): all three, or (`partial`) any."""
        found: dict[str, str] = {}
        for card in [self.roles[seat], *self.hands[seat]]:
            assert card is not None
            if role_of(card) in FAMILY:
                found.setdefault(role_of(card), card)
        return list(found.values()) if len(found) == 3 or (partial and found) else None

    def claim(self) -> bool:
        """Right after a draw, the current player claims Finding the Family if they can (and the
        claim is then always offered: the public record never rules out a real family). Now and
        then a player holding part of the family claims it, if offered, taps those cards and withdraws."""
        cards = self.family(self.state.turn)
        offered = "claim-family" in [a["type"] for a in ENGINE.public_view(self.state)["prompt"]["actions"]]
        if not cards:
            part = self.family(self.state.turn, partial=True)
            if part and offered and self.rng.random() < 0.2:
                self.send({"type": "claim-family"})
                for card in part:
                    self.tap(card)
                self.send({"type": "cancel-claim"})
            return False
        assert offered, "the family is held, yet the claim is not offered"
        self.send({"type": "claim-family"})
        for card in cards:
            self.tap(card)
        assert self.state.rounds[-1]["winners"] == [self.state.turn]
        return True

    # The player's moves, one per kind of prompt.

    def play(self, limit: int = 5000) -> None:
        while self.state.status != "game-over":
            assert self.inputs < limit, "the game does not end"
            if self.rng.random() < 0.05:
                self.try_the_impossible()
            step = self.state.steps[0]
            getattr(self, "on_" + step.kind.replace("-", "_"))(step)

    def on_reveal(self, step: Any) -> None:
        seat = self.rng.choice([s.seat for s in self.state.steps])
        self.roles[seat] = self.chosen[seat]
        self.tap(self.chosen[seat], seat=seat)

    def on_draw(self, step: Any) -> None:
        self.draw(self.state.turn)
        self.send({"type": "draw"})

    def on_act(self, step: Any) -> None:
        if self.claim():
            return
        seat = self.state.turn
        card = self.rng.choice(self.hands[seat])
        how = self.rng.choice(["assist", "deploy"])
        self.tap(card)
        self.hands[seat].remove(card)
        self.received = {}
        if how == "assist":
            self.discard_face_up(seat, card)
        else:
            old = self.roles[seat]
            assert old is not None
            self.roles[seat] = card
            self.discard_face_up(seat, old)
            if role_of(card) == "informant" and self.deck:  # draw one (`on_informant_draw`)
                self.draw(seat)
            if role_of(card) == "seer":
                for _ in range(min(2, len(self.deck))):
                    self.draw(seat)
        self.send({"type": how})

    def on_seer_draw(self, step: Any) -> None:
        if self.claim():
            return
        hand = self.hands[self.state.turn]
        for _ in range(step.info["count"]):
            self.deck.insert(0, hand.pop(self.rng.randrange(len(hand))))
        self.send({"type": "done"})

    def on_informant_draw(self, step: Any) -> None:
        if self.claim():
            return
        hand = self.hands[self.state.turn]
        self.deck.append(hand.pop(self.rng.randrange(len(hand))))  # back on top
        self.send({"type": "done"})

    def on_flip(self, step: Any) -> None:  # only when a record proved wrong: never in these games
        self.tap(self.piles[step.seat][step.info["index"]][0])

    def on_face_down(self, step: Any) -> None:
        card = self.rng.choice(self.deck[-3:])
        self.deck.remove(card)
        self.piles[self.state.turn].append((card, False))
        self.tap(card)

    def on_trade(self, step: Any) -> None:
        pairs = [a for a in ENGINE.public_view(self.state)["prompt"]["actions"] if a["type"] == "trade"]
        a, b = self.rng.choice(pairs)["seats"]
        self.hands[a], self.hands[b] = self.hands[b], self.hands[a]
        self.received = {a: self.hands[a][0], b: self.hands[b][0]}
        self.send({"type": "trade", "seats": [a, b]})

    def on_direction(self, step: Any) -> None:
        direction = self.pass_roles()
        self.send({"type": "direction", "direction": direction})

    def pass_roles(self) -> str:
        """The Handler's ASSIST on the table: the Roles move one seat, left or right (chosen here)."""
        direction = self.rng.choice(["left", "right"])
        active = [s for s in range(self.n) if not self.out[s]]
        shift = 1 if direction == "left" else -1
        moved = {active[(k + shift) % len(active)]: self.roles[s] for k, s in enumerate(active)}
        for seat, role in moved.items():
            self.roles[seat] = role
        return direction

    def on_target(self, step: Any) -> None:
        self.send({"type": "target", "seat": self.pick_target(step)})

    def pick_target(self, step: Any) -> int:
        """A target picked (here) and what its action does to the cards on the table."""
        seat, target = self.state.turn, self.rng.choice(step.info["seats"])
        effect = step.info["effect"]
        if effect == "agent":
            self.draw(seat)
        elif effect == "handler-trade":
            top = self.deck.pop()
            self.deck.append(self.hands[target].pop())
            self.hands[target].append(top)
            self.received = {target: top}
        return int(target)

    def on_agent_discard(self, step: Any) -> None:
        if self.claim():
            return
        self.tap(self.agent_swap(step)[1])

    def agent_swap(self, step: Any) -> tuple[int, str]:
        """The Agent's swap on the table: the target discards a card and takes one of the Agent's
        (picked here); the target's seat and the card discarded."""
        target, by = step.seat, step.info["by"]
        card = self.hands[target].pop()
        self.discard_face_up(target, card)
        picked = self.hands[by].pop(self.rng.randrange(len(self.hands[by])))
        self.hands[target].append(picked)
        self.received = {target: picked}
        return target, card

    def on_spy_found(self, step: Any) -> None:
        found = any(role_of(c) == "spy" for c in self.hands[step.info["target"]])
        self.send({"type": "spy-found", "found": found})

    def on_assassin_check(self, step: Any) -> None:
        got = self.received.get(step.seat)
        if got is None or role_of(got) != "assassin":
            self.send({"type": "assassin", "received": False})
        elif self.rng.random() < 0.5:
            self.send({"type": "assassin", "received": True})
        else:
            self.on_eliminate(step)

    def on_eliminate(self, step: Any) -> None:
        seat = step.seat
        assert len(self.hands[seat]) == 1
        card = self.hands[seat].pop()
        self.discard_face_up(seat, card)
        self.out[seat] = True
        self.tap(card)

    def on_spy_swap(self, step: Any) -> None:
        seat = self.state.turn
        top, spy = self.deck.pop(), self.roles[seat]
        assert spy is not None
        self.roles[seat] = top
        self.shuffle_in(spy)
        self.tap(top)

    def on_take_back(self, step: Any) -> None:
        action = self.rng.choice(
            [a for a in ENGINE.legal_actions(self.state) if a.type == "take-back"]
        ).to_event()
        card, up = self.piles[action["seat"]].pop(action["index"])
        self.shuffle_in(card)
        if up and self.rng.random() < 0.5:
            self.tap(card)
        else:
            self.send(action)

    def on_showdown(self, step: Any) -> None:
        seat = self.rng.choice([s.seat for s in self.state.steps])
        self.tap(self.hands[seat][0], seat=seat)

    def on_round_over(self, step: Any) -> None:
        self.deal()  # the same set-aside Assassin every round
        self.send({"type": "next-round"})


# ---------------------------------------------------------------------- hidden cards change nothing
#
# In a simulated game, take a card that only its holder saw (put face down by a Seer, or tapped for
# a claim that was then withdrawn) and any other card out of sight at that moment (in a hand, in
# the deck or face down). Swap their names from that input until either card is next seen: it is
# another game, which the table cannot tell from the first. Replayed from the same position (its
# face-down records swapped too), the companion must tell the table exactly the same things after
# every input: views, prompts, cues and refusals. The one exception is the count of the discard
# piles at a showdown, made with the piles turned over: the replay stops there if the two cards'
# notches differ.


def private_taps(log: list[Input]) -> set[int]:
    """The inputs whose card only its player saw: a Seer's face-down discard, a card of a claim
    that was withdrawn (a claim that wins shows its cards)."""
    private: set[int] = set()
    claim: list[int] = []
    for index, entry in enumerate(log):
        kind = entry.event["type"]
        if entry.after is None:
            continue
        if entry.before.claim is not None:
            if kind == "tap":
                claim.append(index)
            elif kind == "cancel-claim":
                private.update(claim)
        elif kind == "claim-family":
            claim = []
        elif kind == "tap" and entry.before.steps and entry.before.steps[0].kind == "face-down":
            private.add(index)
    return private


def swap_names(state: PeanutsState, a: str, b: str) -> PeanutsState:
    """The same position with cards `a` and `b` (both out of sight) swapped in the hidden records."""
    state, names = copy.deepcopy(state), {a: b, b: a}
    for pile in state.piles:
        for discard in pile:
            discard.card = names.get(discard.card or "", discard.card)
    if state.claim is not None:
        state.claim = [names.get(card, card) for card in state.claim]
    return state


def replay_swapped(log: list[Input], start: int, stop: int, a: str, b: str) -> set[str]:
    """Replay inputs `start` to `stop` (excluded) with cards `a` and `b` swapped; each must tell
    the table what it told in the game played. Returns the steps the replay went through."""
    state = swap_names(log[start].before, a, b)
    assert ENGINE.public_view(state) == ENGINE.public_view(log[start].before)
    names, steps = {a: b, b: a}, set()
    for index in range(start, stop):
        entry = log[index]
        result = entry.after.result if entry.after else None
        if result and result["piles_counted"] and ENGINE.notches(a) != ENGINE.notches(b):
            break  # the table counts the piles turned over: their notches are no secret any more
        steps.add(state.steps[0].kind if state.steps else "")
        event = dict(entry.event)
        if "card" in event:
            event["card"] = names.get(event["card"], event["card"])
        try:
            state, cues = ENGINE.apply(state, event)
        except GameError as error:
            got: dict[str, Any] = {"refused": str(error)}
        else:
            got = public_output(state, cues)
        message = f"with {a} and {b} swapped, input {index} {event} tells the table more"
        assert got == entry.public_output(), message
    return steps


def check_hidden_cards(table: Table, rng: random.Random, tries: int = 3) -> Counter[str]:
    """Swap each card only its holder saw with up to `tries` cards out of sight (and a Spy or an
    Assassin when one is); count what the replays went through."""
    log, seen = table.log, Counter[str]()
    private = private_taps(log)
    ends = [i for i, e in enumerate(log) if e.event["type"] == "next-round" and e.after] + [len(log)]
    for start in sorted(private):
        a, position = log[start].event["card"], log[start].before
        if ENGINE._place(position, a) is not None:
            continue  # the claimant's own Role: in sight
        hidden = [
            b
            for b in sorted(DATA.cards)
            if b not in (a, position.set_aside) and ENGINE._place(position, b) is None
        ]
        picks = rng.sample(hidden, min(tries, len(hidden)))
        picks += [b for b in hidden if role_of(b) in ("spy", "assassin") and b not in picks][:1]
        end = next(e for e in ends if e > start)  # the round's end
        for b in picks:
            stop = next(
                (i for i in range(start + 1, end) if log[i].event.get("card") in (a, b) and i not in private),
                end,
            )
            claimed = set(position.claim or [])
            claimed |= {
                log[i].event["card"]
                for i in range(start, stop)
                if i in private and log[i].before.claim is not None
            }
            if {a, b} & claimed and role_of(a) != role_of(b):
                continue  # a claim checks the Role of its cards: not the same game
            steps = replay_swapped(log, start, stop, a, b)
            seen["swaps"] += 1
            roles = {role_of(a), role_of(b)}
            seen["spy-found"] += "spy" in roles and "spy-found" in steps
            seen["assassin-check"] += "assassin" in roles and "assassin-check" in steps
            seen["claim"] += bool({a, b} & claimed)
    return seen


def hidden_card_games(count: int) -> Counter[str]:
    seen: Counter[str] = Counter()
    for seed in range(count):
        for players in (3, 4, 5):
            table = Table(players, 1000 + seed * 10 + players)
            table.play()
            seen += check_hidden_cards(table, random.Random(seed))
    return seen


def test_hidden_cards_change_nothing_the_table_is_told() -> None:
    seen = hidden_card_games(8)
    # The replays went through the questions and the claims that once gave hidden cards away.
    assert seen["swaps"] > 100 and seen["spy-found"] > 0 and seen["assassin-check"] > 0 and seen["claim"] > 0


def test_the_hidden_card_check_catches_a_prompt_that_knows_a_face_down_card(monkeypatch: Any) -> None:
    """The check itself: with the old rule (a card recorded face down cannot be in a hand), the
    Secret Police and Assassin questions give face-down cards away, and the swaps see it."""

    def knows_face_down(rules: PeanutsRules, state: PeanutsState, role: str) -> bool:
        down = {d.card for pile in state.piles for d in pile}
        return any(
            card["role"] == role and card.id not in down and ENGINE._place(state, card.id) is None
            for card in rules.cards.values()
        )

    # The rules (the Secret Police's outcome, the Assassin check) and the prompts ask it.
    for module in (peanuts_roles, peanuts_elimination, peanuts_view):
        monkeypatch.setattr(module, "could_hold", knows_face_down)
    with pytest.raises(AssertionError, match="tells the table more"):
        hidden_card_games(8)


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("seed", range(12))
def test_whole_games_with_real_cards(players: int, seed: int) -> None:
    table = Table(players, seed * 10 + players)
    table.play()
    view = ENGINE.public_view(table.state)
    assert view["status"] == "game-over" and view["winners"]
    target = {3: 3, 4: 2, 5: 2}[players]
    assert all(view["players"][s]["score"] >= target for s in view["winners"])
    assert sum(p["score"] for p in view["players"]) >= len(view["rounds"])
    assert view["prompt"]["step"] == "game-over"


# ---------------------------------------------------------------------- rules not covered above


@pytest.mark.rule("PEA-15", "PEA-29")
def test_the_seers_look_is_not_a_draw() -> None:
    """Looking at the top cards neither finds the family nor asks about the Assassin."""
    game = Game(3, ["informant-1", "seer-1", "handler-1"])
    game.do("draw")
    game.play("seer-2", "assist")
    assert game.prompt["step"] == "face-down" and "claim-family" not in game.action_values("type")
    game.refused({"type": "claim-family"}, "right after a draw")
    game.tap("assassin-1")  # the Assassin looked at goes face down: nobody is asked about it
    assert game.prompt["step"] == "draw" and game.seat == 1


@pytest.mark.rule("PEA-40")
def test_a_draw_never_asks_about_the_assassin() -> None:
    """The turn's draw, the Informant's DEPLOY and the Seer's DEPLOY are draws: the Assassin among the
    cards drawn eliminates nobody, so the companion never asks."""
    game = Game(3, ["handler-1", "agent-1", "telepath-1"])
    steps = [game.prompt["step"]]
    game.do("draw")
    steps.append(game.prompt["step"])
    game.play("informant-1", "deploy")  # Ann draws the top card
    steps.append(game.prompt["step"])
    game.do("done")
    game.do("draw")  # Bob
    game.play("seer-1", "deploy")  # Bob draws two
    steps.append(game.prompt["step"])
    game.do("done")
    steps.append(game.prompt["step"])
    assert steps == ["draw", "act", "informant-draw", "seer-draw", "draw"]
    assert game.seat == 2


@pytest.mark.rule("PEA-44")
def test_the_secret_police_on_the_last_card_brings_the_spy_back_to_draw() -> None:
    """The tip: Ann draws the last card and her Secret Police finds the Spy in Bob's hand. The Spy is
    shuffled into the empty deck, so the round goes on, and Ann's extra turn draws it."""
    game = Game(3, ["telepath-1", "informant-1", "handler-1"], start=1)
    game.state.deck = 3  # position: three cards left
    game.do("draw")
    game.play("assassin-1", "assist")  # Bob: no ASSIST
    game.do("draw")
    game.play("secret-police-2", "assist")  # Cy looks at Bob's hand: no Spy yet
    game.do("target", seat=1)
    game.do("spy-found", found=False)
    game.do("draw")  # Ann takes the last card
    assert game.deck == 0
    game.play("secret-police-1", "assist")
    game.do("target", seat=1)
    game.do("spy-found", found=True)
    cues = game.tap("spy-1", seat=1)
    assert {"player-eliminated", "shuffle-in", "extra-turn"} <= set(cues)
    assert game.deck == 1 and game.prompt["step"] == "draw" and game.seat == 0
    game.do("draw")  # the one card in the deck: the Spy
    assert game.deck == 0 and game.hand_counts() == [2, 0, 1]
    game.play("agent-1", "assist")  # Ann keeps the Spy; the Agent finds no card to draw
    assert game.prompt["step"] == "showdown"
    game.tap("spy-1", seat=0)
    game.tap("agent-2", seat=2)
    assert game.view["showdown"]["winners"] == [0]  # Spy x Telepath beats Handler x Agent


@pytest.mark.rule("PEA-46")
def test_what_the_telepath_and_the_secret_police_show_is_never_entered() -> None:
    """Ann's Telepath has Bob and Cy show her their hands, then her Secret Police looks at Bob's hand
    again: Bob holds the Agent 1, Cy the Seer 1, seen by Ann alone. Neither action takes a card: a tap
    of a card seen is refused and changes nothing, a `spy-found` or a draw that carries a card is
    refused as malformed (and the engine, given one anyway, reads only "found"), and afterwards the
    public view and the log name only the cards the whole table saw."""
    game = Game(3, ["informant-1", "handler-1", "secret-police-2"])
    seen = {1: "agent-1", 2: "seer-1"}  # the hands shown to Ann, never tapped
    game.do("draw")
    game.play("telepath-1", "assist")
    assert game.prompt["step"] == "draw" and game.seat == 0  # Ann plays again
    for seat, card in seen.items():  # (a tap from Ann's side would be her next play)
        game.refused({"type": "tap", "card": cid(card), "seat": seat}, "Ann's move")
    with pytest.raises(MalformedInput, match="'card'"):
        ENGINE.canonical({"type": "draw", "card": cid("agent-1")})

    game.do("draw")
    game.play("secret-police-1", "assist")
    game.do("target", seat=1)
    assert game.prompt["step"] == "spy-found" and not game.prompt["tap"]
    assert all(set(event) <= {"type", "found", "seat"} for event in game.actions())
    game.refused({"type": "tap", "card": cid("agent-1")}, "Not now")
    game.refused({"type": "tap", "card": cid("agent-1"), "seat": 0}, "Not now")
    game.refused({"type": "tap", "card": cid("spy-1")}, "Bob cannot hold the Spy")  # his hand is the deal's
    carrying = {"type": "spy-found", "found": False, "card": cid("agent-1")}
    with pytest.raises(MalformedInput, match="'card'"):
        ENGINE.canonical(carrying)
    assert ENGINE.apply(game.state, carrying) == ENGINE.apply(
        game.state, {"type": "spy-found", "found": False}
    )
    game.do("spy-found", found=False)

    assert game.prompt["step"] == "draw" and game.seat == 1 and game.hand_counts() == [1, 1, 1]
    public = cid_list("informant-1 handler-1 secret-police-2 telepath-1 secret-police-1")
    view = json.dumps(game.view)
    assert set(re.findall(r"peanuts/[a-z-]+-\d+", view)) <= {*public, game.state.set_aside}
    log = " ".join(game.view["log"])
    for card in seen.values():
        assert cid(card) not in view and DATA.cards[cid(card)].name not in log


def test_every_step_kind_has_a_handler_and_a_prompt() -> None:
    assert set(peanuts_engine.STEPS) == set(StepKind) == set(peanuts_view.ASK)
