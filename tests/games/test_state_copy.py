"""`copy_state`, the copy `Engine.apply` makes before every event, against `copy.deepcopy`.

It keeps no memo, so it is only right for states that never hold one mutable object in two places
(deepcopy would keep the two places one object; `copy_state` makes two). Every game is played here,
at every player count, by seeded random inputs, and every state reached is checked for that.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from enum import Enum
from typing import Any

import pytest

from companion.games.base import Engine, GameError, Status, copy_state
from companion.games.packs import playable_games

ENGINES = playable_games()[0]
IMMUTABLE = (str, int, float, bool, bytes, type(None), Enum)


def mutable_parts(value: Any, path: str = "state") -> list[tuple[str, Any]]:
    """Every mutable object in `value` (itself included), with where it sits."""
    if isinstance(value, IMMUTABLE):
        return []
    found: list[tuple[str, Any]] = [] if isinstance(value, tuple) else [(path, value)]
    if isinstance(value, list | tuple):
        items = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    elif isinstance(value, dict):
        items = [(f"{path}[{key!r}]", item) for key, item in value.items()]
    elif dataclasses.is_dataclass(value):
        items = [(f"{path}.{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value)]
    else:
        raise AssertionError(f"{path} is a {type(value).__name__}: not plain data")
    for where, item in items:
        found += mutable_parts(item, where)
    return found


def shared(state: Any) -> list[str]:
    """The places that hold a mutable object some other place holds too."""
    first: dict[int, str] = {}
    twice = []
    for where, part in mutable_parts(state):
        if id(part) in first:
            twice.append(f"{where} is {first[id(part)]}")
        first.setdefault(id(part), where)
    return twice


def played_states(engine: Engine[Any], players: int, seed: int, steps: int = 150) -> list[Any]:
    """The states a random game goes through: each step the first card tap, in a shuffled order,
    that the rules accept, or if none is, a random legal action (taps first: SPY's actions end it)."""
    rng = random.Random(seed)
    state = engine.setup([f"P{n}" for n in range(players)], {})
    states = [state]
    taps = [{"type": "tap", "card": card} for card in engine.data.cards]
    for _ in range(steps):
        if engine.status(state) is Status.GAME_OVER:
            break
        actions = [action.to_event() for action in engine.legal_actions(state)]
        candidates = rng.sample(taps, len(taps)) + rng.sample(actions, len(actions))
        for event in candidates:
            try:
                state, _ = engine.apply(state, event)
            except GameError:
                continue
            states.append(state)
            break
        else:
            break  # nothing is accepted: the game waits on something random play cannot give
    return states


GAMES = [(game, players) for game, engine in ENGINES.items() for players in engine.players]


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_no_state_of_a_played_game_holds_a_mutable_object_twice(game: str, players: int) -> None:
    engine = ENGINES[game]
    for seed in range(5):
        states = played_states(engine, players, seed)
        over = engine.status(states[-1]) is Status.GAME_OVER
        assert over or len(states) > 20, f"{game} with {players}: random play stuck after {len(states)}"
        for number, state in enumerate(states):
            assert shared(state) == [], f"{game}, seed {seed}, state {number}"
            copied = copy_state(state)
            assert copied == state == copy.deepcopy(state)
            assert not {id(part) for _, part in mutable_parts(copied)} & {
                id(part) for _, part in mutable_parts(state)
            }, "the copy shares a mutable object with the state"


def test_the_check_finds_a_shared_object() -> None:
    """The check above can fail: a list held in two places is found."""
    log = ["Ann played."]
    assert shared({"log": log, "story": log}) == ["state['story'] is state['log']"]


@dataclasses.dataclass
class Plain:
    items: list[int]
    status: Status = Status.PLAYING


@dataclasses.dataclass(slots=True)
class Slotted:
    items: list[int]


class Other:
    def __init__(self) -> None:
        self.items = [1]


def test_copy_state_is_deep_and_hands_what_it_does_not_know_to_deepcopy() -> None:
    value = {"plain": Plain([1, 2]), "slotted": Slotted([3]), "other": Other(), "pair": ([4], 5)}
    copied = copy_state(value)
    assert copied["plain"] == value["plain"] and copied["slotted"] == value["slotted"]
    for name in ("plain", "slotted", "other"):
        assert copied[name] is not value[name] and copied[name].items is not value[name].items
        assert copied[name].items == value[name].items
    assert copied["pair"] == ([4], 5) and copied["pair"][0] is not value["pair"][0]
    assert copied["plain"].status is Status.PLAYING
