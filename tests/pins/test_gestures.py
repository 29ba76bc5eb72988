"""Issue 21: every prompt of SPY and Spy Team is answered with taps, seat buttons and Next, and the
button grammar is never ambiguous: at every prompt of random games, each gesture (a seat button
pressed or held, Next) means at most one input, no press or bump puts a player out or ends a round,
and every choice the tablet offers can be reached with the buttons."""

from __future__ import annotations

import random
from typing import Any

import pytest

from companion.games import build_engines
from companion.games.base import Action, Engine, Event, GameError
from companion.games.catalog import load_catalog
from companion.pins.buttons import next_choice, seat_choices

ENGINES = build_engines(load_catalog())
SEEDS = range(12)


def gestures(engine: Engine[Any], state: Any, seats: int) -> dict[str, list[Action]]:
    """What each gesture may post now, as `TableButtons` reads the prompt."""
    actions = engine.legal_actions(state)
    found: dict[str, list[Action]] = {"next": [a for a in [next_choice(actions)] if a is not None]}
    for seat in range(seats):
        found[f"press seat-{seat}"] = seat_choices(actions, seat, hold=False)
        found[f"hold seat-{seat}"] = seat_choices(actions, seat, hold=True)
    return found


def settled(view: dict[str, Any]) -> tuple[Any, ...]:
    """What a press must never change: who is out, the rounds played, whether the game is over."""
    return (
        tuple(p.get("eliminated") for p in view["players"]),
        len(view["rounds"]),
        view["status"] == "game-over",
    )


def reachable(engine: Engine[Any], state: Any, seat: int) -> set[tuple[tuple[str, Any], ...]]:
    """Every input the holds of `seat` can give, stepping its presses through the choices."""
    found = set()
    for _ in range(12):
        held = seat_choices(engine.legal_actions(state), seat, hold=True)
        found |= {tuple(sorted(a.to_event().items())) for a in held if a.hold}
        pressed = [a for a in seat_choices(engine.legal_actions(state), seat, hold=False) if a.type == "pick"]
        if not pressed:
            break
        state, _ = engine.apply(state, pressed[0].to_event())
    return found


def check_prompt(engine: Engine[Any], state: Any, seats: int) -> None:
    before = settled(engine.public_view(state))
    for gesture, choices in gestures(engine, state, seats).items():
        assert len(choices) <= 1, (gesture, choices)  # one gesture, one input
        for action in choices:
            if not gesture.startswith("hold"):
                assert not action.confirm and not action.hold, (gesture, action)
                after, _ = engine.apply(state, action.to_event())
                assert settled(engine.public_view(after)) == before, (gesture, action)
    # Putting a player out is a hold, never a press; and everything the tablet offers a button gives.
    for action in engine.legal_actions(state):
        if action.confirm:
            assert action.hold and action.seat is not None, action
    tablet = {tuple(sorted(a.to_event().items())) for a in engine.legal_actions(state) if a.tablet}
    by_buttons: set[tuple[tuple[str, Any], ...]] = set()
    for seat in range(seats):
        by_buttons |= reachable(engine, state, seat)
        by_buttons |= {
            tuple(sorted(a.to_event().items()))
            for a in seat_choices(engine.legal_actions(state), seat, False)
        }
    by_buttons |= {tuple(sorted(a.to_event().items())) for a in gestures(engine, state, seats)["next"]}
    assert tablet <= by_buttons, tablet - by_buttons


def random_game(game: str, players: list[str], seed: int, steps: int = 150) -> int:
    """Play a random game, checking every prompt; the number of prompts checked."""
    engine = ENGINES[game]
    rng = random.Random(seed)
    cards = sorted(engine.data.cards)
    state = engine.setup(players, {})
    checked = 0
    for _ in range(steps):
        check_prompt(engine, state, len(players))
        checked += 1
        if engine.is_over(state):
            break
        state = random_input(engine, state, cards, rng)
    return checked


def random_input(engine: Engine[Any], state: Any, cards: list[str], rng: random.Random) -> Any:
    """One accepted input: mostly card taps, sometimes a button's or the tablet's action."""
    for _ in range(200):
        actions = engine.legal_actions(state)
        event: Event
        if actions and rng.random() < 0.3:
            event = rng.choice(actions).to_event()
            if event["type"] == "eliminate" and rng.random() < 0.95:
                continue  # fewer drops, longer games
        else:
            event = {"type": "tap", "card": rng.choice(cards)}
        try:
            state, _ = engine.apply(state, event)
        except GameError:
            continue
        return state
    raise AssertionError("no input accepted")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("count", [2, 3, 4])
def test_every_spy_prompt_has_one_input_per_gesture(count: int, seed: int) -> None:
    assert random_game("spy", ["Ann", "Bob", "Cy", "Di"][:count], seed) > count


@pytest.mark.parametrize("seed", SEEDS)
def test_every_spy_team_prompt_has_one_input_per_gesture(seed: int) -> None:
    assert random_game("spy-team", ["Ann", "Bob", "Cid", "Dee"], seed, steps=300) > 10
