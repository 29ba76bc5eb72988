"""Spy Team rules engine: scenarios from the rulebook, the prompt and public view, data validation,
and a property test over random legal games."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.core.cues import Cue
from companion.games.base import GameError, Outcome
from companion.games.catalog import DataError, GameData, load_catalog, parse_game
from companion.games.spy_team import SpyTeam, SpyTeamState, strongest

NAMES = ["Ann", "Bob", "Cid", "Dee"]  # C.A.T. = Ann + Cid (0, 2); B.I.R.D. = Bob + Dee (1, 3)
CAT, BIRD = 0, 1


@pytest.fixture(scope="module")
def data() -> GameData:
    return load_catalog()["spy-team"]


@pytest.fixture(scope="module")
def engine(data: GameData) -> SpyTeam:
    return SpyTeam(data)


def cid(short: str) -> str:
    """``"r17"`` -> ``"spy-team/red-17"``, to keep scenarios readable."""
    colour = {"r": "red", "b": "blue"}[short[0]]
    return f"spy-team/{colour}-{int(short[1:])}"


def step(engine: SpyTeam, state: SpyTeamState, event: dict[str, Any]) -> tuple[SpyTeamState, list[Cue]]:
    return engine.apply(state, event)


def names(cues: list[Cue]) -> list[str]:
    return [cue.name for cue in cues]


def mission(seat: int, tile: str, target: int) -> dict[str, Any]:
    return {"type": "mission", "seat": seat, "tile": tile, "target": target}


def start(
    engine: SpyTeam,
    cat: tuple[int, str, int] = (0, "1/5", 1),
    bird: tuple[int, str, int] = (1, "3/3", 3),
    **options: Any,
) -> SpyTeamState:
    """A new game with both missions chosen (by default Ann 1, Cid 5; Bob 3, Dee 3)."""
    state = engine.setup(list(NAMES), options)
    state, _ = step(engine, state, mission(*cat))
    state, _ = step(engine, state, mission(*bird))
    return state


def play(engine: SpyTeam, state: SpyTeamState, *cards: str) -> tuple[SpyTeamState, list[Cue]]:
    """Tap the cards in order (each from the seat whose turn it is); return all the cues."""
    cues: list[Cue] = []
    for short in cards:
        state, more = step(engine, state, {"type": "tap", "card": cid(short)})
        cues += more
    return state, cues


def win_trick(engine: SpyTeam, state: SpyTeamState, winner: int) -> tuple[SpyTeamState, list[Cue]]:
    """Play a whole trick, from unplayed cards, that `winner` wins.

    The lead colour is whichever colour has more cards left; the winner plays its highest, one other
    seat plays the other colour (so it is never Camouflage), the rest play the lowest of the lead
    colour. That is 3 + 1 cards a trick, balanced between the colours, enough for 11 tricks.
    """
    played = set(state.played)
    free = {c: [n for n in range(1, 25) if f"spy-team/{c}-{n}" not in played] for c in ("red", "blue")}
    lead, other = sorted(free, key=lambda c: -len(free[c]))
    leader = state.leader
    off_colour_seat = next(s for s in ((leader + i) % 4 for i in range(1, 4)) if s != winner)
    cues: list[Cue] = []
    for i in range(4):
        seat = (leader + i) % 4
        if seat == winner:
            card = f"spy-team/{lead}-{free[lead].pop()}"
        elif seat == off_colour_seat:
            card = f"spy-team/{other}-{free[other].pop()}"
        else:
            card = f"spy-team/{lead}-{free[lead].pop(0)}"
        state, more = step(engine, state, {"type": "tap", "card": card, "seat": seat})
        cues += more
    assert state.last_trick is not None and state.last_trick.winner == winner
    return state, cues


def refused(engine: SpyTeam, state: SpyTeamState, event: dict[str, Any], match: str) -> None:
    """The event is refused with `match` in its message, and the state is untouched."""
    before = copy.deepcopy(state)
    with pytest.raises(GameError, match=match):
        engine.apply(state, event)
    assert state == before


def sabotage_round(engine: SpyTeam, state: SpyTeamState, victim: int) -> tuple[SpyTeamState, list[Cue]]:
    """A quick round the rival team completes: `victim` aims for 1 trick (1/5) and wins two. The
    rivals choose the first tile they have left."""
    rival = state.teams[1 - victim % 2]  # seats 0, 2 are C.A.T. (team 0); 1, 3 are B.I.R.D. (team 1)
    tile = rival.tiles_left[0]
    state, _ = step(engine, state, mission(victim, "1/5", 1))
    state, _ = step(engine, state, mission(rival.seats[0], tile, int(tile.split("/")[0])))
    state, _ = win_trick(engine, state, victim)
    return win_trick(engine, state, victim)


# Data and setup.


@pytest.mark.rule("ST-1", "ST-2")
def test_seed_data_has_the_48_cards_tiles_and_teams(data: GameData) -> None:
    assert len(data.cards) == 48
    assert data.cards["spy-team/red-17"].name == "Red 17"
    assert data.cards["spy-team/blue-24"].attrs == {"colour": "blue", "number": 24}
    assert data.extra["tiles"] == ["1/5", "2/4", "3/3"]
    assert data.extra["teams"] == [{"name": "C.A.T.", "seats": [0, 2]}, {"name": "B.I.R.D.", "seats": [1, 3]}]


def test_setup_starts_round_one_waiting_for_missions(engine: SpyTeam) -> None:
    state = engine.setup(list(NAMES), {})
    view = engine.public_view(state)
    assert view["status"] == "playing" and view["round"] == 1
    assert [t["name"] for t in view["teams"]] == ["C.A.T.", "B.I.R.D."]
    assert [t["seats"] for t in view["teams"]] == [[0, 2], [1, 3]]
    assert view["start_seat"] == view["leader"] == 0 and view["turn"] is None
    assert view["players"][2] == {"seat": 2, "name": "Cid", "score": 0, "eliminated": False, "team": "C.A.T."}


@pytest.mark.rule("ST-1")
@pytest.mark.parametrize(
    ("players", "options", "match"),
    [
        (["Ann", "Bob", "Cid"], {}, "needs 4 players, not 3"),
        (["Ann", "Bob", "Cid", "Dee", "Eve"], {}, "needs 4 players, not 5"),
        (["Ann", "Bob", "Ann", "Dee"], {}, "same name"),
        (NAMES, {"start": 4}, "'start' must be a seat number from 0 to 3"),
        (NAMES, {"start": "1"}, "'start' must be a seat number"),
        (NAMES, {"start": True}, "'start' must be a seat number"),
        (NAMES, {"first": 1}, "no option 'first'"),
    ],
)
def test_setup_refuses_bad_players_and_options(
    engine: SpyTeam, players: list[str], options: dict[str, Any], match: str
) -> None:
    with pytest.raises(GameError, match=match):
        engine.setup(list(players), options)


@pytest.mark.rule("ST-3", "ST-12")
def test_start_option_sets_the_first_leader(engine: SpyTeam) -> None:
    state = start(engine, start=2)
    view = engine.public_view(state)
    assert view["start_seat"] == 2 and view["turn"] == 2
    assert view["prompt"]["seat"] == 2 and view["prompt"]["text"] == "Cid: lead the first trick"


# Tricks.


@pytest.mark.rule("ST-14", "ST-15")
def test_lead_colour_wins_over_a_higher_off_colour_card(engine: SpyTeam) -> None:
    state = start(engine)
    state, cues = play(engine, state, "r5", "b24", "r9", "r2")
    assert state.last_trick is not None and state.last_trick.winner == 2  # Red 9, not Blue 24
    won = next(c for c in cues if c.name == "trick-won")
    assert won.seat == 2 and won.text == "Cid wins the trick with Red 9"
    assert "camouflage" not in names(cues)
    assert state.tricks_won == [0, 0, 1, 0] and state.leader == 2
    assert engine.public_view(state)["turn"] == 2


@pytest.mark.rule("ST-16")
def test_camouflage_lowest_card_wins(engine: SpyTeam) -> None:
    state = start(engine)
    state, cues = play(engine, state, "b20", "b3", "b24", "b11")
    assert state.last_trick is not None and state.last_trick.camouflage
    assert state.last_trick.winner == 1  # Blue 3 is the lowest
    assert names(cues).index("camouflage") < names(cues).index("trick-won")
    won = next(c for c in cues if c.name == "trick-won")
    assert won.seat == 1 and won.text == "Bob wins the trick with Blue 3"
    view = engine.public_view(state)
    assert view["last_trick"]["camouflage"] is True and view["last_trick"]["winner"] == 1
    assert [c["number"] for c in view["last_trick"]["cards"]] == [20, 3, 24, 11]


@pytest.mark.rule("ST-15", "ST-16")
def test_strongest_card_rules_directly(data: GameData) -> None:
    def cards(*shorts: str) -> list[Any]:
        return [data.cards[cid(s)] for s in shorts]

    assert strongest(cards("b1", "r24", "r23", "b2")) == (3, False)  # lead blue: Blue 2 beats Blue 1
    assert strongest(cards("r1", "r24", "r23", "r2")) == (0, True)  # Camouflage: Red 1
    assert strongest(cards("r10", "b24", "b23", "b22")) == (0, False)  # only card of the lead colour


@pytest.mark.rule("ST-12", "ST-17")
def test_the_winner_leads_the_next_trick_and_cues_follow_the_turn(engine: SpyTeam) -> None:
    state = start(engine)
    state, cues = step(engine, state, {"type": "tap", "card": cid("r5"), "seat": 0})
    assert [(c.name, c.seat) for c in cues] == [("card-accepted", 0), ("your-turn", 1)]
    state, cues = play(engine, state, "r6", "r7", "b1")  # Cid wins with Red 7
    assert [(c.name, c.seat) for c in cues][-2:] == [("trick-won", 2), ("your-turn", 2)]
    refused(engine, state, {"type": "tap", "card": cid("r8"), "seat": 3}, "It is Cid's turn, not Dee's")
    state, _ = step(engine, state, {"type": "tap", "card": cid("r8"), "seat": 2})
    assert [p.seat for p in state.trick] == [2]


def test_a_card_played_twice_is_refused(engine: SpyTeam) -> None:
    state = start(engine)
    state, _ = play(engine, state, "r17")
    refused(engine, state, {"type": "tap", "card": cid("r17")}, "Red 17 was already played this round")
    state, _ = play(engine, state, "r1", "r2", "b3")  # Ann wins with Red 17
    refused(engine, state, {"type": "tap", "card": cid("r17")}, "Red 17 was already played this round")


def test_wrong_seat_is_refused(engine: SpyTeam) -> None:
    state = start(engine)
    refused(engine, state, {"type": "tap", "card": cid("r3"), "seat": 1}, "It is Ann's turn, not Bob's")
    refused(engine, state, {"type": "tap", "card": cid("r3"), "seat": 7}, "'seat' must be a seat number")


def test_unknown_and_foreign_cards_are_refused(engine: SpyTeam) -> None:
    state = start(engine)
    with pytest.raises(GameError) as error:
        engine.apply(state, {"type": "tap", "card": "spy-team/green-3"})
    assert error.value.cue == "unknown-card"
    refused(engine, state, {"type": "tap", "card": "spy/green-safe-1"}, "belongs to another game")
    refused(engine, state, {"type": "tap"}, "needs a card id")


def test_tap_before_both_missions_is_refused(engine: SpyTeam) -> None:
    state = engine.setup(list(NAMES), {})
    refused(engine, state, {"type": "tap", "card": cid("r3")}, "waiting for C.A.T. and B.I.R.D.")
    state, _ = step(engine, state, mission(2, "2/4", 4))
    refused(engine, state, {"type": "tap", "card": cid("r3")}, "waiting for B.I.R.D.")


def test_unknown_actions_are_refused(engine: SpyTeam) -> None:
    state = start(engine)
    refused(engine, state, {"type": "foo"}, "Spy Team has no action 'foo'")
    with pytest.raises(GameError, match="needs a type"):
        engine.apply(state, {"card": cid("r3")})


# Missions.


def test_mission_prompt_lists_every_choice_for_both_teams(engine: SpyTeam) -> None:
    state = engine.setup(list(NAMES), {})
    prompt = engine.public_view(state)["prompt"]
    assert prompt["seat"] is None and prompt["tap"] is False
    labels = [a["label"] for a in prompt["actions"] if a.get("tablet", True)]  # the buttons' own left out
    assert labels == [
        "C.A.T.: Ann takes 1, Cid takes 5 (1/5)",
        "C.A.T.: Ann takes 5, Cid takes 1 (1/5)",
        "C.A.T.: Ann takes 2, Cid takes 4 (2/4)",
        "C.A.T.: Ann takes 4, Cid takes 2 (2/4)",
        "C.A.T.: Ann and Cid take 3 each (3/3)",
        "B.I.R.D.: Bob takes 1, Dee takes 5 (1/5)",
        "B.I.R.D.: Bob takes 5, Dee takes 1 (1/5)",
        "B.I.R.D.: Bob takes 2, Dee takes 4 (2/4)",
        "B.I.R.D.: Bob takes 4, Dee takes 2 (2/4)",
        "B.I.R.D.: Bob and Dee take 3 each (3/3)",
    ]
    assert prompt["actions"][1] == {
        "type": "mission",
        "seat": 0,
        "tile": "1/5",
        "target": 5,
        "label": "C.A.T.: Ann takes 5, Cid takes 1 (1/5)",
        "primary": False,
        "confirm": False,
        "button": False,  # the seat buttons step through the missions and hold one instead
    }
    # Every legal action is accepted as it is posted.
    for action in engine.legal_actions(state):
        engine.apply(state, action.to_event())


@pytest.mark.rule("ST-7", "ST-8")
def test_mission_targets_go_to_the_sender_and_the_teammate(engine: SpyTeam) -> None:
    state = engine.setup(list(NAMES), {})
    state, cues = step(engine, state, mission(2, "1/5", 5))  # Cid takes 5, so Ann takes 1
    assert [(c.name, c.seat) for c in cues] == [("card-accepted", 2)]
    assert cues[0].text == "C.A.T.: Cid takes 5, Ann takes 1 (1/5)"
    view = engine.public_view(state)
    assert view["teams"][0]["mission"] == {"tile": "1/5", "targets": {"0": 1, "2": 5}}
    assert view["targets"] == [1, None, 5, None]
    assert view["prompt"]["text"] == (
        "Round 1: B.I.R.D., choose your mission: press a seat button to pick a mission, hold it to settle. "
        "B.I.R.D.: Bob takes 1, Dee takes 5 (1/5)?"
    )
    state, cues = step(engine, state, mission(3, "3/3", 3))
    assert [(c.name, c.seat) for c in cues] == [("card-accepted", 3), ("your-turn", 0)]
    view = engine.public_view(state)
    assert view["targets"] == [1, 3, 5, 3]
    assert view["prompt"]["tap"] is True and view["prompt"]["seat"] == 0
    # still free to change until the first card
    assert len([a for a in view["prompt"]["actions"] if a.get("tablet", True)]) == 10


@pytest.mark.parametrize(
    ("event", "match"),
    [
        (mission(0, "1/5", 3), "aims for 1 or 5 tricks, not 3"),
        (mission(0, "3/3", 1), "aims for 3 tricks, not 1"),
        (mission(0, "1/5", True), "not True"),
        (mission(0, "5/1", 5), "no mission tile 5/1"),
        (mission(0, "4/2", 2), "no mission tile 4/2"),
        ({"type": "mission", "seat": 0, "target": 1}, "needs a tile"),
        ({"type": "mission", "tile": "1/5", "target": 1}, "'seat' must be a seat number"),
    ],
)
def test_bad_missions_are_refused(engine: SpyTeam, event: dict[str, Any], match: str) -> None:
    refused(engine, engine.setup(list(NAMES), {}), event, match)


@pytest.mark.rule("ST-7", "ST-9")
def test_a_mission_may_change_until_the_first_card(engine: SpyTeam) -> None:
    state = start(engine)  # Ann 1 / Cid 5
    state, cues = step(engine, state, mission(2, "2/4", 2))  # Cid changes it: Cid 2, Ann 4
    assert names(cues) == ["card-accepted"]  # the prompt still asks Ann: no new your-turn
    assert state.teams[CAT].mission is not None
    assert state.teams[CAT].mission.targets == {2: 2, 0: 4}
    state, _ = play(engine, state, "r1")
    assert engine.legal_actions(state) == ()
    refused(engine, state, mission(0, "3/3", 3), "C.A.T. can no longer change its mission")
    refused(engine, state, mission(1, "1/5", 1), "B.I.R.D. can no longer change its mission")


# Rounds.


@pytest.mark.rule("ST-18", "ST-20", "ST-21")
def test_mission_accomplished_ends_the_round_with_cards_left(engine: SpyTeam) -> None:
    state = start(engine)  # C.A.T.: Ann 1, Cid 5; B.I.R.D.: 3/3
    state, _ = win_trick(engine, state, 0)
    for _ in range(4):
        state, cues = win_trick(engine, state, 2)
        assert "mission-accomplished" not in names(cues)  # Cid on 4 of 5 is not yet enough
    state, cues = win_trick(engine, state, 2)  # 6th trick of 11: the round stops here
    assert names(cues) == ["card-accepted", "your-turn"] * 3 + [
        "card-accepted",
        "trick-won",
        "mission-accomplished",
        "round-won",
    ]  # no your-turn at the end: the next round starts with mission choices, not a card
    done = next(c for c in cues if c.name == "mission-accomplished")
    assert done.text == "C.A.T. accomplish their mission: Ann won 1 and Cid won 5 (1/5)."
    assert next(c for c in cues if c.name == "round-won").data["winners"] == [0, 2]
    view = engine.public_view(state)
    assert view["rounds"][0]["winners"] == [0, 2] and view["rounds"][0]["outcome"] == "accomplished"
    assert view["rounds"][0]["tricks_won"] == [1, 0, 5, 0]
    assert view["teams"][CAT]["tiles_left"] == ["2/4", "3/3"]
    assert view["teams"][CAT]["tiles_removed"] == ["1/5"]
    assert view["teams"][BIRD]["tiles_removed"] == []
    assert [p["score"] for p in view["players"]] == [1, 0, 1, 0]
    # A fresh round: next start player, no missions, no cards, but the deciding trick is still shown.
    assert view["round"] == 2 and view["start_seat"] == 1 and view["leader"] == 1
    assert view["played"] == [] and view["trick"] == [] and view["tricks_won"] == [0, 0, 0, 0]
    assert [t["mission"] for t in view["teams"]] == [None, None]
    assert view["last_trick"]["round"] == 1 and view["last_trick"]["winner"] == 2
    assert view["turn"] is None and view["prompt"]["tap"] is False


@pytest.mark.rule("ST-19", "ST-20")
def test_sabotage_ends_the_round_at_once_and_the_rivals_complete(engine: SpyTeam) -> None:
    state = start(engine)  # Ann aims for 1 trick; B.I.R.D. on 3/3
    state, cues = win_trick(engine, state, 0)
    assert names(cues)[-1] == "your-turn"  # exactly on 1: fine so far
    state, cues = win_trick(engine, state, 0)  # Ann's 2nd trick: over target after 2 of 11 tricks
    sabotage = next(c for c in cues if c.name == "mission-sabotaged")
    assert sabotage.seat == 0
    assert sabotage.text == (
        "C.A.T.'s mission is sabotaged: Ann won 2 tricks aiming for 1. B.I.R.D. complete their mission."
    )
    assert "mission-accomplished" not in names(cues)
    assert next(c for c in cues if c.name == "round-won").data["winners"] == [1, 3]
    view = engine.public_view(state)
    assert view["rounds"] == [
        {
            "round": 1,
            "winners": [1, 3],
            "reason": sabotage.text,
            "team": "B.I.R.D.",
            "tile": "3/3",
            "outcome": "sabotaged",
            "tricks_won": [2, 0, 0, 0],
            "targets": [1, 3, 5, 3],
            "missions": ["1/5", "3/3"],
        }
    ]
    assert view["teams"][BIRD]["tiles_removed"] == ["3/3"]  # the rivals remove the tile *they* chose
    assert view["teams"][CAT]["tiles_left"] == ["1/5", "2/4", "3/3"]
    assert [p["score"] for p in view["players"]] == [0, 1, 0, 1]


@pytest.mark.rule("ST-19")
def test_going_over_on_the_high_target_is_sabotage_too(engine: SpyTeam) -> None:
    state = start(engine, cat=(0, "2/4", 4), bird=(1, "1/5", 5))  # Bob aims for 5, Dee for 1
    for _ in range(5):
        state, cues = win_trick(engine, state, 1)
    assert "mission-sabotaged" not in names(cues)  # Bob on 5, Dee on 0: not over, not done
    state, cues = win_trick(engine, state, 1)
    assert next(c for c in cues if c.name == "mission-sabotaged").seat == 1
    assert state.teams[CAT].tiles_removed == ["2/4"] and state.rounds[0].winners == [0, 2]


@pytest.mark.rule("ST-10")
def test_a_removed_tile_is_refused_in_later_rounds(engine: SpyTeam) -> None:
    state = start(engine, bird=(1, "2/4", 2))
    state, _ = win_trick(engine, state, 0)
    state, _ = win_trick(engine, state, 0)  # C.A.T. sabotaged: B.I.R.D. removes 2/4
    assert state.teams[BIRD].tiles_left == ["1/5", "3/3"]
    refused(engine, state, mission(3, "2/4", 4), "B.I.R.D. has already completed the 2/4 mission")
    actions = [a for a in engine.public_view(state)["prompt"]["actions"] if a["type"] == "mission"]
    assert {a["tile"] for a in actions if a["seat"] == 1} == {"1/5", "3/3"}
    assert {a["tile"] for a in actions if a["seat"] == 0} == {"1/5", "2/4", "3/3"}
    state, _ = step(engine, state, mission(0, "2/4", 2))  # C.A.T. still has its own 2/4
    assert state.teams[CAT].mission is not None and state.teams[CAT].mission.tile == "2/4"


@pytest.mark.rule("ST-21")
def test_start_player_passes_left_each_round(engine: SpyTeam) -> None:
    state = engine.setup(list(NAMES), {"start": 3})
    starts = [state.start_seat]
    for victim in (0, 2):  # C.A.T. is sabotaged twice: B.I.R.D. removes two tiles
        state, _ = sabotage_round(engine, state, victim)
        starts.append(state.start_seat)
    assert starts == [3, 0, 1]
    assert state.round == 3 and state.leader == 1
    state, _ = step(engine, state, mission(0, "1/5", 1))
    state, _ = step(engine, state, mission(1, "3/3", 3))
    assert engine.public_view(state)["prompt"]["text"] == "Bob: lead the first trick"


@pytest.mark.rule("ST-4", "ST-22")
def test_the_game_ends_when_a_team_removes_its_third_tile(engine: SpyTeam) -> None:
    state = engine.setup(list(NAMES), {})
    for victim in (0, 2):
        state, cues = sabotage_round(engine, state, victim)
        assert "game-won" not in names(cues)
    assert state.teams[BIRD].tiles_removed == ["1/5", "2/4"]
    state, cues = sabotage_round(engine, state, 0)
    assert names(cues)[-3:] == ["mission-sabotaged", "round-won", "game-won"]
    won = cues[-1]
    assert won.data["winners"] == [1, 3] and won.text == "B.I.R.D. (Bob and Dee) win the game"
    view = engine.public_view(state)
    assert engine.is_over(state) and engine.winners(state) == (1, 3) and view["winners"] == [1, 3]
    assert engine.outcome(state) == Outcome((1, 3), "B.I.R.D. (Bob and Dee) win the game")
    assert view["round"] == 3 and len(view["rounds"]) == 3
    assert [p["score"] for p in view["players"]] == [0, 3, 0, 3]
    assert view["teams"][BIRD]["tiles_left"] == []
    assert view["turn"] is None
    assert view["prompt"] == {"text": "Game over: B.I.R.D. win", "seat": None, "tap": False, "actions": []}
    refused(engine, state, {"type": "tap", "card": cid("r1")}, "The game is over")
    refused(engine, state, mission(0, "1/5", 1), "The game is over")


def test_public_view_is_plain_json(engine: SpyTeam) -> None:
    state = start(engine)
    state, _ = play(engine, state, "r5", "b24", "r9", "r2", "r10")
    view = engine.public_view(state)
    assert json.loads(json.dumps(view)) == view
    assert view["trick"] == [{"seat": 2, "card": cid("r10"), "name": "Red 10", "colour": "red", "number": 10}]
    assert view["played"] == [cid(s) for s in ("r5", "b24", "r9", "r2", "r10")]
    assert view["turn"] == 3 and view["prompt"]["text"] == "Dee: play a card"
    assert set(view) >= {"game", "status", "round", "players", "prompt", "rounds", "winners"}


def test_apply_never_changes_the_given_state(engine: SpyTeam) -> None:
    state = start(engine)
    before = copy.deepcopy(state)
    after, _ = play(engine, state, "r5", "b24", "r9", "r2")
    assert state == before and after != before


# Data validation.


def _raw(data: GameData) -> dict[str, Any]:
    """The shipped data as the raw TOML dict `parse_game` reads."""
    return copy.deepcopy(data.to_json())


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda raw: raw.update({key: value})


def _card(index: int, card: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda raw: raw["cards"].__setitem__(index, card)


# Each way to spoil the shipped data, by name.
BREAKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "missing card": lambda raw: raw["cards"].pop(),
    "three colours": _card(
        -1, {"id": "spy-team/green-24", "name": "Green 24", "colour": "green", "number": 24}
    ),
    "number 25": _card(-1, {"id": "spy-team/blue-25", "name": "Blue 25", "colour": "blue", "number": 25}),
    "id mismatch": lambda raw: raw["cards"][0].update(number=2),
    "no colour": lambda raw: raw["cards"][0].pop("colour"),
    "tile sum": _set("tiles", ["1/5", "2/3", "3/3"]),
    "tile shape": _set("tiles", ["1-5", "2/4", "3/3"]),
    "tile twice": _set("tiles", ["1/5", "5/1", "3/3"]),
    "no tiles": lambda raw: raw.pop("tiles"),
    "one team": lambda raw: raw.update(teams=raw["teams"][:1]),
    "neighbours": _set("teams", [{"name": "C.A.T.", "seats": [0, 1]}, {"name": "B.I.R.D.", "seats": [2, 3]}]),
    "seat 4": _set("teams", [{"name": "C.A.T.", "seats": [0, 2]}, {"name": "B.I.R.D.", "seats": [2, 4]}]),
    "players": _set("max_players", 5),
}


def _broken(data: GameData, how: str) -> dict[str, Any]:
    raw = _raw(data)
    BREAKS[how](raw)
    return raw


@pytest.mark.parametrize(
    ("how", "match"),
    [
        ("missing card", "48 cards in 2 colours, not 47 in 2"),
        ("three colours", "48 cards in 2 colours, not 48 in 3"),
        ("number 25", "number from 1 to 24"),
        ("id mismatch", "says it is red 2; its id must match"),
        ("no colour", "has no colour"),
        ("tile sum", "'2/3' must be two numbers of at least 1 adding up to 6"),
        ("tile shape", "'1-5' is not a mission tile"),
        ("tile twice", "'5/1' appears twice"),
        ("no tiles", "'tiles' must be a list"),
        ("one team", "exactly two"),
        ("neighbours", "must sit opposite"),
        ("seat 4", "must cover seats 0 to 3"),
        ("players", "exactly 4 players"),
    ],
)
def test_broken_data_raises_data_error(data: GameData, how: str, match: str) -> None:
    parsed = parse_game(_broken(data, how), "spy-team.toml")
    with pytest.raises(DataError, match=match):
        SpyTeam(parsed)


def test_a_red_card_missing_its_twin_is_caught(data: GameData) -> None:
    raw = _raw(data)
    # Swap Red 24 for a second-colour card that keeps 48 cards and 2 colours but breaks 1..24.
    raw["cards"] = [c for c in raw["cards"] if c["id"] != "spy-team/red-24"]
    raw["cards"].append({"id": "spy-team/blue-0", "name": "Blue 0", "colour": "blue", "number": 0})
    with pytest.raises(DataError, match="number from 1 to 24"):
        SpyTeam(parse_game(raw, "spy-team.toml"))


def test_the_shipped_data_round_trips(data: GameData) -> None:
    assert SpyTeam(parse_game(_raw(data), "spy-team.toml")).data.extra == data.extra


# Property: random legal games.


@pytest.mark.rule("ST-4", "ST-5", "ST-23")
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_legal_games(engine: SpyTeam, data: st.DataObject) -> None:
    first = data.draw(st.integers(0, 3), label="start")
    state = engine.setup(list(NAMES), {"start": first})
    all_cards = sorted(engine.data.cards)
    for round_number in range(1, 6):  # each round one team removes a tile: 5 rounds at most
        assert state.round == round_number and state.status == "playing"
        # Deal: 11 cards each, 4 sit out. The engine never learns this.
        deck = data.draw(st.permutations(all_cards), label="deck")
        hands = {seat: list(deck[11 * seat : 11 * seat + 11]) for seat in range(4)}
        # Missions: a few choices and changes, from the prompt's own actions.
        for _ in range(data.draw(st.integers(2, 5), label="mission inputs")):
            action = data.draw(st.sampled_from(engine.legal_actions(state)))
            state, _ = engine.apply(state, action.to_event())
        for team in state.teams:
            if team.mission is None:
                action = next(a for a in engine.legal_actions(state) if a.seat == team.seats[0])
                state, _ = engine.apply(state, action.to_event())
        targets = engine.targets(state)
        assert all(t is not None for t in targets)
        removed_before = [len(team.tiles_removed) for team in state.teams]
        tiles_chosen = [team.mission.tile for team in state.teams if team.mission is not None]

        tricks: list[int] = []
        while state.round == round_number and state.status == "playing":
            turn = engine.public_view(state)["turn"]
            assert hands[turn], "a player ran out of cards: the round outlived 11 tricks"
            card = hands[turn].pop(data.draw(st.integers(0, len(hands[turn]) - 1), label="card"))
            event: dict[str, Any] = {"type": "tap", "card": card}
            if data.draw(st.booleans(), label="seat reader"):
                event["seat"] = turn
            state, cues = engine.apply(state, event)
            for cue in cues:
                if cue.name == "trick-won":
                    assert state.last_trick is not None
                    plays = state.last_trick.cards
                    index, _ = strongest([engine.data.cards[p.card] for p in plays])
                    assert cue.seat == plays[index].seat
                    tricks.append(cue.seat)
        # The round ended within 11 tricks, with every trick complete.
        assert 1 <= len(tricks) <= 11
        assert sum(len(h) for h in hands.values()) == 44 - 4 * len(tricks)
        won = [tricks.count(seat) for seat in range(4)]
        result = state.rounds[-1]
        assert result.round == round_number and result.tricks_won == won
        # Exactly one team removed exactly one tile: the tile it chose this round.
        gained = [len(team.tiles_removed) - removed_before[i] for i, team in enumerate(state.teams)]
        assert sorted(gained) == [0, 1]
        winner_team = gained.index(1)
        assert state.teams[winner_team].tiles_removed[-1] == tiles_chosen[winner_team]
        assert result.winners == sorted(state.teams[winner_team].seats)
        # Why: either the winners hit both targets, or a rival went over; the other side is neither.
        loser_team = 1 - winner_team
        over = [s for s in range(4) if won[s] > targets[s]]
        exact = {i: all(won[s] == targets[s] for s in state.teams[i].seats) for i in (0, 1)}
        if result.outcome == "accomplished":
            assert exact[winner_team] and not over
        else:
            assert len(over) == 1 and over[0] in state.teams[loser_team].seats
            assert not exact[winner_team]
        assert not exact[loser_team]
        assert tricks[-1] in (over or list(state.teams[winner_team].seats))  # the last trick decided it
        # Scores are the tiles each team removed.
        view = engine.public_view(state)
        for player in view["players"]:
            team = state.teams[engine.team_of(state, player["seat"])]
            assert player["score"] == len(team.tiles_removed)
        assert sum(len(team.tiles_removed) for team in state.teams) == round_number
        if engine.is_over(state):
            break
        assert view["start_seat"] == view["leader"] == (first + round_number) % 4  # passed left
        assert view["played"] == [] and view["tricks_won"] == [0, 0, 0, 0]
    assert engine.is_over(state)
    champion = next(i for i, team in enumerate(state.teams) if not team.tiles_left)
    assert state.winners == sorted(state.teams[champion].seats)
    assert 3 <= len(state.rounds) <= 5


@pytest.mark.rule("ST-5", "ST-6", "ST-11", "ST-13")
def test_hands_the_deal_and_the_swap_stay_at_the_table(engine: SpyTeam) -> None:
    """The companion never sees a hand: the deal, the colours and order in the stands and the partners'
    swap need no input, and any card not yet played this round is taken from the seat whose turn it
    is, whichever end of the hand (or the set-aside pile) it came from."""
    state = start(engine)
    view = engine.public_view(state)
    assert view["turn"] == 0 and view["prompt"]["tap"] is True
    assert view["prompt"]["text"] == "Ann: lead the first trick"  # no step for the swap
    assert {a["type"] for a in view["prompt"]["actions"]} == {"mission", "pick"}
    assert not {"hand", "hands", "deck", "set_aside"} & set(view)
    # Whatever the cards, each tap is the card of the seat whose turn it is.
    state, cues = play(engine, state, "b2", "r24", "b1", "r3")
    assert [c.seat for c in cues if c.name == "card-accepted"] == [0, 1, 2, 3]
    assert engine.public_view(state)["last_trick"]["winner"] == 0  # Blue 2 leads: blue wins
