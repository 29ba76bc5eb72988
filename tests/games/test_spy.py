"""The SPY referee: the rulebook's examples, eliminations, decks by player count, the game's end, refusals
that change nothing, and the promise that nothing secret reaches the scoreboard or the cues."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.core.cues import Cue
from companion.games.base import GameError
from companion.games.catalog import DataError, load_catalog, parse_game
from companion.games.spy import Spy, SpyState
from companion.mqtt.results import results_of
from companion.table.entries import Entry

DATA = load_catalog()["spy"]
ENGINE = Spy(DATA)
SAFE_AND_SECRET = ("safe-1", "safe-2", "top-secret-1", "top-secret-2")


def tap(card: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tap", "card": f"spy/{card}", **extra}


def new_game(colours: list[str], start: int = 0) -> SpyState:
    """A game past setup: seat i tapped the Spy card of colours[i]."""
    names = ["Ann", "Bob", "Cy", "Di"][: len(colours)]
    state = ENGINE.setup(names, {"start": start})
    for colour in colours:
        state, _ = ENGINE.apply(state, tap(f"{colour}-spy"))
    assert state.status == "playing"
    return state


def step(state: SpyState, event: dict[str, Any]) -> tuple[SpyState, list[Cue], dict[str, Any]]:
    state, cues = ENGINE.apply(state, event)
    return state, cues, ENGINE.public_view(state)


def strip(players: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [{k: v for k, v in player.items() if k != key} for player in players]


def names_of(cues: list[Cue]) -> list[str]:
    return [cue.name for cue in cues]


def refused(state: SpyState, event: dict[str, Any], match: str) -> GameError:
    """Apply an input the rules refuse; check the message and that nothing changed."""
    before, view = copy.deepcopy(state), ENGINE.public_view(state)
    with pytest.raises(GameError, match=match) as error:
        ENGINE.apply(state, event)
    assert state == before
    assert ENGINE.public_view(state) == view
    return error.value


# ----------------------------------------------------------------------------------------- the data


@pytest.mark.rule("SPY-2")
def test_data_has_the_rulebook_components() -> None:
    cards = DATA.cards.values()
    assert len(DATA.cards) == 30
    assert Counter(card["kind"] for card in cards) == {"spy": 4, "safe": 8, "top-secret": 8, "bomb": 10}
    assert {card["colour"] for card in cards} == {"green", "red", "purple", "blue"}
    for colour in ("green", "red", "purple", "blue"):
        for suffix in (*SAFE_AND_SECRET, "bomb-1", "bomb-2"):
            card = DATA.cards[f"spy/{colour}-{suffix}"]
            assert card["number"] == int(suffix[-1])  # the printed number is the movement number
        assert "number" not in DATA.cards[f"spy/{colour}-spy"].attrs
    extras = sorted(card.id for card in cards if card.get("extra"))
    assert extras == ["spy/green-bomb-2-extra", "spy/red-bomb-2-extra"]
    assert DATA.cards["spy/red-bomb-2-extra"]["number"] == 2
    assert (DATA.min_players, DATA.max_players) == (2, 4)


def _raw() -> dict[str, Any]:
    return json.loads(json.dumps(DATA.to_json()))  # a plain copy to spoil


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda raw: raw.pop("colours"), "'colours'"),
        (lambda raw: raw.update(two_player_colours=["green", "pink"]), "two_player_colours"),
        (lambda raw: raw["cards"].pop(1), "green lacks its Safe 1"),
        (lambda raw: raw["cards"][1].update(number=3), "number 1 or 2"),
        (lambda raw: raw["cards"][1].update(kind="joker"), "kind 'joker'"),
        (lambda raw: raw["cards"][1].update(colour="pink"), "colour 'pink'"),
        (lambda raw: raw["cards"][2].update(number=1), "two cards of the same kind"),
        (lambda raw: raw["cards"][0].update(number=1), "Spy and must have no number"),
        (lambda raw: raw["cards"][1].update(extra=True), "only a Bomb 2"),
    ],
)
def test_bad_data_is_refused_clearly(spoil: Any, message: str) -> None:
    raw = _raw()
    spoil(raw)
    with pytest.raises(DataError, match=message):
        Spy(parse_game(raw, "spy.toml"))


# ---------------------------------------------------------------------------------------------- setup


@pytest.mark.rule("SPY-4", "SPY-6")
def test_setup_claims_colours_by_spy_card_and_by_action() -> None:
    state = ENGINE.setup(["Ann", "Bob", "Cy"], {"start": 2})
    view = ENGINE.public_view(state)
    assert view["status"] == "setup" and view["turn"] is None
    assert view["prompt"]["seat"] == 0 and view["prompt"]["tap"] is True
    assert [a["colour"] for a in view["prompt"]["actions"] if a["type"] == "claim"] == [
        "green",
        "red",
        "purple",
        "blue",
    ]
    claims = [a for a in ENGINE.legal_actions(state) if a.type == "claim"]
    assert all(a.to_event() == {"type": "claim", "seat": 0, "colour": a.fields["colour"]} for a in claims)
    assert all(a.seat == 0 and not a.confirm for a in claims)

    state, cues, view = step(state, tap("purple-spy"))
    assert names_of(cues) == ["card-accepted"]  # the table says "your turn", not the engine
    assert view["players"][0]["colour"] == "purple" and ENGINE.current_seat(state) == 1
    assert "purple" not in [a["colour"] for a in view["prompt"]["actions"] if a["type"] == "claim"]

    # A seat reader may claim for its own seat, out of order.
    state, _, view = step(state, tap("green-spy", seat=2))
    assert view["players"][2]["colour"] == "green" and view["prompt"]["seat"] == 1

    state, cues, view = step(state, {"type": "claim", "seat": 1, "colour": "blue"})
    assert view["status"] == "playing"
    assert view["turn"] == 2 and ENGINE.current_seat(state) == 2  # the chosen (youngest) start seat
    assert [p["colour"] for p in view["players"]] == ["purple", "blue", "green"]


@pytest.mark.rule("SPY-3")
def test_two_player_game_uses_green_and_red_only() -> None:
    state = ENGINE.setup(["Ann", "Bob"], {})
    actions = ENGINE.public_view(state)["prompt"]["actions"]
    assert [a["colour"] for a in actions if a["type"] == "claim"] == ["green", "red"]
    refused(state, tap("purple-spy"), "two-player game is played with green and red only")
    refused(state, {"type": "claim", "seat": 0, "colour": "blue"}, "green and red only")
    state, _ = ENGINE.apply(state, tap("red-spy"))
    state, _ = ENGINE.apply(state, tap("green-spy"))
    assert state.status == "playing" and state.turn == 0


@pytest.mark.rule("SPY-3")
@pytest.mark.parametrize(
    ("players", "options", "message"),
    [
        (["Ann"], {}, "2 to 4 players"),
        (["Ann", "Bob", "Cy", "Di", "Ed"], {}, "2 to 4 players"),
        (["Ann", "Ann"], {}, "same name"),
        (["Ann", "Bob"], {"start": 2}, "'start' must be a seat"),
        (["Ann", "Bob"], {"target": 3}, "no option target"),
    ],
)
def test_bad_setup_is_refused(players: list[str], options: dict[str, Any], message: str) -> None:
    with pytest.raises(GameError, match=message):
        ENGINE.setup(players, options)


# ------------------------------------------------------------------------------- the rulebook examples


@pytest.mark.rule("SPY-19", "SPY-20")
def test_example_turns_1_and_2() -> None:
    state = new_game(["green", "purple", "red"])  # Ann green, Bob purple, Cy red; Ann starts

    # Example 1: Green spies Purple's card "A", an unlit Bomb 1; Purple hisses and lights it.
    state, cues, view = step(state, tap("purple-bomb-1"))
    assert names_of(cues) == ["bomb-lit"] and ENGINE.current_seat(state) == 1
    lit = cues[0]
    assert lit.seat == 1 and "TSSSsss" in lit.text and lit.data == {"spier": 0, "owner": 1}
    assert view["players"][1]["bombs_lit"] == 1
    assert view["last_outcome"] == {
        "kind": "bomb-lit",
        "spier": 0,
        "owner": 1,
        "text": "Ann lit a bomb in Bob's base: TSSSsss.",
    }
    assert view["players"][0]["last_outcome"] == view["players"][1]["last_outcome"] == view["last_outcome"]
    assert view["turn"] == 1  # spying ended Green's turn
    assert state.lit[1] == ["spy/purple-bomb-1"]  # the engine remembers which, the view does not

    # Example 2: Purple spies Green's card "A", Green's Exposure Target: revealed for good.
    state, cues, view = step(state, tap("green-safe-1"))
    assert names_of(cues) == ["card-revealed"]
    assert cues[0].seat == 0 and cues[0].data["card"] == "spy/green-safe-1"
    green = view["players"][0]
    assert green["exposure"][0] == {"card": "Safe 1", "revealed": True}
    assert [e["revealed"] for e in green["exposure"]] == [True, False, False, False]
    assert green["next"] == 1
    assert view["last_outcome"]["kind"] == "revealed" and view["turn"] == 2


@pytest.mark.rule("SPY-13")
def test_a_card_that_is_not_the_target_answers_its_type_only() -> None:
    state = new_game(["green", "red"])
    state, cues, view = step(state, tap("red-safe-2"))
    assert cues[0].name == "spied" and cues[0].text == "It's a Safe"
    assert cues[0].data == {"spier": 0, "owner": 1, "type": "safe"}
    assert (
        view["players"][1]["next"] == 0 and view["last_outcome"]["text"] == "Ann spied on Bob: It's a Safe."
    )
    state, cues, _ = step(state, tap("green-top-secret-1"))
    assert cues[0].name == "spied" and cues[0].text == "It's a Top Secret" and cues[0].seat == 0


@pytest.mark.rule("SPY-6", "SPY-7", "SPY-8", "SPY-14")
def test_exposure_order_then_top_secret_2_eliminates_its_owner() -> None:
    state = new_game(["green", "red", "blue"])
    # Ann (green) works through Bob's (red) track; Bob and Cy pass in between.
    for number, suffix in enumerate(SAFE_AND_SECRET[:3]):
        state, cues, view = step(state, tap(f"red-{suffix}"))
        assert cues[0].name == "card-revealed"
        assert view["players"][1]["next"] == number + 1
        state, _ = ENGINE.apply(state, {"type": "pass"})
        state, _ = ENGINE.apply(state, {"type": "pass"})
    state, cues, view = step(state, tap("red-top-secret-2"))
    assert names_of(cues) == ["card-revealed", "player-eliminated"]
    assert cues[1].seat == 1 and "Top Secret 2" in cues[1].text
    bob = view["players"][1]
    assert bob["eliminated"] is True and bob["next"] is None
    assert all(e["revealed"] for e in bob["exposure"])
    assert view["turn"] == 2  # Bob is skipped: Cy is next
    assert view["status"] == "playing"
    refused(state, tap("red-bomb-1"), "Bob is out")


@pytest.mark.rule("SPY-7", "SPY-15", "SPY-16")
def test_a_lit_bomb_blows_up_the_spier_and_stays_secret() -> None:
    state = new_game(["green", "red", "purple"])
    state, _ = ENGINE.apply(state, tap("purple-bomb-2"))  # Ann lights it
    state, _ = ENGINE.apply(state, {"type": "pass"})  # Bob
    state, _ = ENGINE.apply(state, {"type": "pass"})  # Cy
    state, _ = ENGINE.apply(state, {"type": "pass"})  # Ann
    state, cues, view = step(state, tap("purple-bomb-2"))  # Bob spies the lit bomb
    assert names_of(cues) == ["boom", "player-eliminated"]
    # Cy shows the bomb to everybody: the table learns which bomb went off.
    boom = cues[0]
    assert boom.data == {"spier": 1, "owner": 2, "card": "spy/purple-bomb-2", "name": "Purple Bomb 2"}
    assert boom.text == "BOOM! Bob spied Cy's lit Purple Bomb 2" and cues[1].seat == 1
    assert view["players"][1]["eliminated"] is True
    assert view["players"][2]["bombs_lit"] == 1  # put back still lit
    assert view["last_outcome"]["kind"] == "boom" and view["last_outcome"]["spier"] == 1
    assert view["turn"] == 2
    # ...then puts it back hidden: the scoreboard's record of the outcome does not name it.
    assert view["last_outcome"]["text"] == "BOOM! Bob spied a lit bomb in Cy's base."
    assert "bomb-2" not in json.dumps(view) and "Bomb 2" not in json.dumps(view)


@pytest.mark.rule("SPY-21")
def test_already_exposed_card_changes_nothing_but_ends_the_turn() -> None:
    state = new_game(["green", "red", "blue"])
    state, _ = ENGINE.apply(state, tap("red-safe-1"))  # Ann exposes Bob's Safe 1
    state, _ = ENGINE.apply(state, {"type": "pass"})  # Bob
    before = ENGINE.public_view(state)
    state, cues, view = step(state, tap("red-safe-1"))  # Cy spies it again
    assert names_of(cues) == ["already-exposed"]
    assert strip(view["players"], "last_outcome") == strip(before["players"], "last_outcome")
    assert state.exposed == [0, 1, 0] and view["turn"] == 0  # the Spy action is spent
    assert view["last_outcome"] == {
        "kind": "already-exposed",
        "spier": 2,
        "owner": 1,
        "text": "Cy spied Bob's Red Safe 1, already exposed.",
    }
    assert cues[0].text == "Red Safe 1 is already exposed: nothing new."


@pytest.mark.rule("SPY-9", "SPY-18")
def test_pass_and_dropped_cards() -> None:
    state = new_game(["green", "red", "purple", "blue"], start=3)
    view = ENGINE.public_view(state)
    assert view["prompt"]["text"] == (
        "Di's turn: spy (the owner taps the card) or press Next to pass. "
        "Dropped a card? Hold your seat button"
    )
    dropped = {a.label: a for a in ENGINE.legal_actions(state) if a.type == "eliminate"}
    assert dropped["Ann dropped a card"].to_event() == {"type": "eliminate", "seat": 0}
    assert all(a.confirm for a in dropped.values())  # it puts a player out: a second tap
    state, cues, view = step(state, {"type": "pass", "seat": 3})
    assert names_of(cues) == ["card-accepted"] and ENGINE.current_seat(state) == 0
    refused(state, {"type": "pass", "seat": 2}, "It is Ann's turn, not Cy's")

    # Someone else drops a card: out at once, the turn stays.
    state, cues, view = step(state, {"type": "eliminate", "seat": 2})
    assert names_of(cues) == ["player-eliminated"] and view["turn"] == 0
    assert view["last_outcome"] == {
        "kind": "dropped",
        "spier": None,
        "owner": 2,
        "text": "Cy dropped a card and is out.",
    }
    assert {"type": "eliminate", "seat": 2} not in [a.to_event() for a in ENGINE.legal_actions(state)]
    # The current player drops a card: the turn moves on.
    state, cues, view = step(state, {"type": "eliminate", "seat": 0})
    assert names_of(cues) == ["player-eliminated"] and ENGINE.current_seat(state) == 1
    refused(state, {"type": "eliminate", "seat": 0}, "Ann is already out")


# ------------------------------------------------------------------------------------ decks and winner


@pytest.mark.rule("SPY-2", "SPY-3")
def test_extra_bombs_belong_to_two_player_games_only() -> None:
    state = new_game(["green", "red"])
    state, cues, view = step(state, tap("red-bomb-2-extra"))
    assert cues[0].name == "bomb-lit" and view["players"][1]["bombs_lit"] == 1
    assert view["players"][1]["bombs"] == 3
    state, cues, view = step(state, tap("green-bomb-2-extra"))
    assert cues[0].name == "bomb-lit"

    for colours in (["green", "red", "purple"], ["green", "red", "purple", "blue"]):
        state = new_game(colours)
        assert ENGINE.public_view(state)["players"][0]["bombs"] == 2
        refused(state, tap("red-bomb-2-extra"), "only used in two-player games")
        refused(state, tap("green-bomb-2-extra"), "only used in two-player games")
        state, cues = ENGINE.apply(state, tap("red-bomb-2"))  # the ordinary Bomb 2 is in play
        assert cues[0].name == "bomb-lit"


@pytest.mark.rule("SPY-1", "SPY-6", "SPY-17")
def test_a_game_to_its_winner() -> None:
    state = new_game(["green", "red", "purple"], start=1)  # Bob starts
    state, _ = ENGINE.apply(state, tap("green-bomb-1"))  # Bob lights Ann's Bomb 1
    state, _ = ENGINE.apply(state, {"type": "pass"})  # Cy
    state, _ = ENGINE.apply(state, tap("red-bomb-1"))  # Ann lights Bob's Bomb 1
    state, cues = ENGINE.apply(state, tap("green-bomb-1"))  # Bob: BOOM
    assert names_of(cues) == ["boom", "player-eliminated"]
    assert ENGINE.current_seat(state) == 2
    for suffix in SAFE_AND_SECRET:  # Cy and Ann take turns; Ann answers Cy's spies
        state, _ = ENGINE.apply(state, tap(f"green-{suffix}"))
        if suffix != "top-secret-2":
            state, _ = ENGINE.apply(state, {"type": "pass"})
    view = ENGINE.public_view(state)
    assert ENGINE.is_over(state) and ENGINE.winners(state) == (2,) and view["winners"] == [2]
    assert [p["score"] for p in view["players"]] == [0, 0, 1]
    assert [p["eliminated"] for p in view["players"]] == [True, True, False]
    assert view["turn"] is None and view["rounds"] == [] and view["round"] == 1
    assert view["prompt"] == {"text": "Game over: Cy won", "seat": None, "tap": False, "actions": []}
    refused(state, tap("green-safe-1"), "The game is over: Cy won")
    refused(state, {"type": "pass"}, "game is over")
    refused(state, {"type": "eliminate", "seat": 2}, "game is over")


@pytest.mark.rule("SPY-17", "SPY-18")
def test_the_last_cues_of_a_won_game() -> None:
    state = new_game(["green", "red"])
    state, _ = ENGINE.apply(state, tap("red-bomb-1"))  # Ann lights Bob's bomb
    state, cues = ENGINE.apply(state, {"type": "eliminate", "seat": 1})  # Bob drops a card
    assert names_of(cues) == ["player-eliminated", "game-won"]
    assert cues[1].seat == 0 and cues[1].text == "Ann wins"
    assert state.status == "game-over" and state.winners == [0]


# ----------------------------------------------------------------------------------------- refusals


@pytest.mark.rule("SPY-12")
def test_refusals_leave_the_state_equal() -> None:
    setup = ENGINE.setup(["Ann", "Bob", "Cy"], {})
    refused(setup, tap("green-safe-1"), "Setup first: Ann, tap the Spy card")
    refused(setup, {"type": "pass"}, "has not started")
    refused(setup, {"type": "eliminate", "seat": 0}, "has not started")
    refused(setup, {"type": "claim", "seat": 0, "colour": "pink"}, "no colour 'pink'")
    refused(setup, {"type": "claim", "seat": 5, "colour": "red"}, "'seat' must be a seat")
    refused(setup, {"type": "claim", "seat": 0}, "needs a colour")
    refused(setup, tap("red-spy", seat=3), "'seat' must be a seat")
    half, _ = ENGINE.apply(setup, tap("red-spy"))
    refused(half, tap("red-spy"), "Red is already Ann's")
    refused(half, {"type": "claim", "seat": 0, "colour": "blue"}, "Ann already plays red")

    state = new_game(["green", "red", "purple"])
    error = refused(state, tap("nope-1"), "Unknown card")
    assert error.cue == "unknown-card"
    refused(state, {"type": "tap", "card": "spy-team/red-17"}, "another game")
    refused(state, {"type": "tap"}, "needs a card id")
    refused(state, {"type": "dance"}, "no action 'dance'")
    refused(state, tap("green-safe-2"), "that card is your own")
    refused(state, tap("blue-safe-1"), "Nobody plays blue")
    refused(state, tap("red-bomb-2-extra"), "two-player games")
    refused(state, tap("red-spy"), "The Spy card can't be spied")
    refused(state, tap("green-spy"), "The Spy card can't be spied")
    refused(state, {"type": "claim", "seat": 0, "colour": "blue"}, "already claimed")
    refused(state, {"type": "eliminate", "seat": -1}, "'seat' must be a seat")
    with pytest.raises(GameError):
        ENGINE.apply(state, {"card": "spy/red-safe-1"})  # no type at all

    dropped, _ = ENGINE.apply(state, {"type": "eliminate", "seat": 2})
    refused(dropped, tap("purple-safe-1"), "Cy is out")


# ----------------------------------------------------------------------------------- nothing leaks

_SECRET_NAME = re.compile(r"(Safe|Top Secret|Bomb) ?[12]|(safe|top-secret|bomb)-[12]", re.IGNORECASE)


def _revealed(state: SpyState) -> set[str]:
    return {
        card_id
        for seat, colour in enumerate(state.colours)
        if colour is not None
        for card_id in ENGINE.bases[colour].exposure[: state.exposed[seat]]
    }


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def assert_no_secret(
    state: SpyState, view: dict[str, Any], cues: list[Cue], errors: list[str], boom: str | None = None
) -> None:
    """Nothing in the view, the cues or a refusal names a card that is not face up, nor which bomb is
    lit; only the cues of a BOOM may name `boom`, the bomb its owner shows the table as it goes off.
    Nor do the results a table sends to MQTT (with the view itself and the cues)."""
    results = list(results_of("table", Entry(1, "2026-11-30T20:00:00+00:00", {}), view).values())
    view = copy.deepcopy(view)
    for player in view["players"]:
        # The exposure track's labels are the same fixed four for everyone: check, then drop them.
        assert [e["card"] for e in player["exposure"]] == ["Safe 1", "Safe 2", "Top Secret 1", "Top Secret 2"]
        player["exposure"] = [e["revealed"] for e in player["exposure"]]
    revealed = _revealed(state)
    _assert_names_only([view, errors, results], revealed)
    _assert_names_only([cue.to_json() for cue in cues], revealed | ({boom} if boom else set()))


def _assert_names_only(payload: Any, revealed: set[str]) -> None:
    """`payload` names no card but the `revealed` ones, and carries no number of any other."""
    assert not _keys(payload) & {"number", "move", "movement"}
    dump = json.dumps(payload)
    # The face-up cards' own ids and names go first: a hidden card's id or name may be part of
    # theirs ("spy/green-bomb-2" of "spy/green-bomb-2-extra"). What is left names no other card.
    for card_id in revealed:
        dump = dump.replace(card_id, "").replace(DATA.cards[card_id].name, "")
    hidden = [card for card in DATA.cards.values() if card.id not in revealed and card["kind"] != "spy"]
    for card in hidden:
        assert card.id not in dump, card.id
        assert card.name not in dump, card.name
    # ... and carries no card number at all.
    assert not _SECRET_NAME.search(dump), _SECRET_NAME.search(dump)


def scripted_game() -> list[dict[str, Any]]:
    """Four players through every outcome (and some refusals) to a winner."""
    return [
        tap("green-spy"),
        {"type": "claim", "seat": 1, "colour": "red"},
        tap("purple-spy"),
        tap("blue-spy"),
        tap("red-top-secret-2"),  # Ann → Bob: It's a Top Secret
        tap("purple-bomb-1"),  # Bob → Cy: TSSSsss
        tap("blue-safe-2"),  # Cy → Di: It's a Safe
        tap("blue-bomb-2"),  # Di taps her own card: refused
        tap("green-safe-1"),  # Di → Ann: exposed
        tap("green-safe-1"),  # Ann taps her own, exposed card: refused
        tap("purple-bomb-2"),  # Ann → Cy: TSSSsss (the other bomb)
        tap("green-safe-1"),  # Bob → Ann: already exposed
        tap("purple-safe-1"),  # Cy taps his own card: refused
        {"type": "pass"},  # Cy
        tap("purple-bomb-1"),  # Di → Cy: BOOM, Di is out
        tap("green-spy"),  # refused: a Spy card
        tap("red-safe-1"),  # Ann → Bob: exposed
        tap("green-safe-2"),  # Bob → Ann: exposed
        tap("purple-bomb-2"),  # Cy taps his own lit bomb: refused
        {"type": "pass"},  # Cy
        tap("red-safe-2"),  # Ann → Bob: exposed
        tap("green-top-secret-1"),  # Bob → Ann: exposed
        tap("blue-top-secret-1"),  # refused: Di is out
        tap("red-top-secret-1"),  # Cy → Bob: exposed
        tap("red-top-secret-2"),  # Ann → Bob: exposed, Bob is out
        {"type": "eliminate", "seat": 2},  # Cy drops a card: Ann wins
        tap("red-bomb-1"),  # refused: the game is over
    ]


def test_no_view_and_no_cue_of_a_scripted_game_names_a_secret() -> None:
    state = ENGINE.setup(["Ann", "Bob", "Cy", "Di"], {})
    assert_no_secret(state, ENGINE.public_view(state), [], [])
    seen: Counter[str] = Counter()
    refusals = 0
    for event in scripted_game():
        try:
            state, cues = ENGINE.apply(state, event)
        except GameError as error:
            refusals += 1
            assert_no_secret(state, ENGINE.public_view(state), [], [str(error)])
            continue
        seen.update(names_of(cues))
        boom = event["card"] if "boom" in names_of(cues) else None  # shown to the table
        assert_no_secret(state, ENGINE.public_view(state), cues, [], boom)
    assert refusals == 7
    assert len(ENGINE.public_view(state)["log"]) == 23  # the story was checked too, line by line
    for name in ("spied", "bomb-lit", "boom", "card-revealed", "already-exposed", "player-eliminated"):
        assert seen[name] >= 1, name
    assert state.status == "game-over" and state.winners == [0]


CARD_IDS = sorted(DATA.cards)


def random_event(value: int, players: int) -> dict[str, Any]:
    """Mostly taps of any card (legal or not), some passes, a few dropped cards."""
    if value < 4:
        return {"type": "eliminate", "seat": value % players}
    if value < 14:
        return {"type": "pass"}
    return {"type": "tap", "card": CARD_IDS[value % len(CARD_IDS)]}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(min_value=2, max_value=4),
    start=st.integers(min_value=0, max_value=3),
    values=st.lists(st.integers(min_value=0, max_value=99), max_size=80),
)
def test_random_games_keep_secrets_and_invariants(players: int, start: int, values: list[int]) -> None:
    state = new_game(["green", "red", "purple", "blue"][:players], start=start % players)
    for value in values:
        event = random_event(value, players)
        snapshot = copy.deepcopy(state)
        try:
            new_state, cues = ENGINE.apply(state, event)
        except GameError as error:
            assert state == snapshot
            assert_no_secret(state, ENGINE.public_view(state), [], [str(error)])
            continue
        assert state == snapshot  # apply never touches the state it is given
        state = new_state
        view = ENGINE.public_view(state)
        boom = event["card"] if "boom" in names_of(cues) else None  # shown to the table
        assert_no_secret(state, view, cues, [], boom)
        alive = [p["seat"] for p in view["players"] if not p["eliminated"]]
        if ENGINE.is_over(state):
            assert list(ENGINE.winners(state)) == view["winners"] == alive and len(alive) == 1
            assert view["turn"] is None and ENGINE.current_seat(state) is None
            assert sum(p["score"] for p in view["players"]) == 1
        else:
            assert len(alive) >= 2 and view["turn"] in alive and ENGINE.current_seat(state) == view["turn"]
        for player in view["players"]:
            assert 0 <= player["bombs_lit"] <= player["bombs"]
            assert player["eliminated"] or not all(e["revealed"] for e in player["exposure"])


@pytest.mark.rule("SPY-5", "SPY-10", "SPY-11")
def test_bases_and_moves_stay_at_the_table() -> None:
    """Every base starts with no bomb lit and nothing exposed. Where a card sits, how the Spy moves
    and loops round the base are said and done at the table: a turn offers no move, and a spy is
    accepted on any card of another base."""
    state = new_game(["green", "red", "purple"])
    view = ENGINE.public_view(state)
    for player in view["players"]:
        assert player["bombs_lit"] == 0 and player["next"] == 0
        assert not any(slot["revealed"] for slot in player["exposure"])
    assert {a["type"] for a in view["prompt"]["actions"]} == {"pass", "eliminate"}
    refused(state, {"type": "move", "steps": 2}, "no action 'move'")
    state, cues, view = step(state, tap("purple-top-secret-2"))  # any place in Cy's base
    assert cues[0].name == "spied" and view["turn"] == 1
