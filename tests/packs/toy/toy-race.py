"""The toy game's engine (see toy-race.toml): the smallest game the contract allows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from companion.core.cues import Cue
from companion.games.base import (
    Action,
    Engine,
    Event,
    GameError,
    Outcome,
    Prompt,
    SetupOption,
    Status,
    check_players,
    seat_of,
)


@dataclass
class ToyState:
    players: list[str]
    target: int
    turn: int
    scores: list[int] = field(default_factory=list)
    played: list[str] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)


class ToyRace(Engine[ToyState]):
    game = "toy-race"
    action_keys = {"skip": frozenset()}
    options = (
        SetupOption("target", "Points to win", "int", 5),
        SetupOption("start", "First player", "seat", 0),
    )

    def setup(self, players: list[str], options: dict[str, Any]) -> ToyState:
        names = check_players(players, self.data.min_players, self.data.max_players)
        target = options.get("target", 5)
        if isinstance(target, bool) or not isinstance(target, int) or target < 1:
            raise GameError("'target' must be a whole number of points, at least 1.")
        turn = seat_of({"start": options.get("start", 0)}, len(names), "start")
        return ToyState(names, target, turn, [0] * len(names))

    def _apply(self, state: ToyState, event: Event) -> list[Cue]:
        if state.winners:
            raise GameError("The race is over.")
        if event["type"] == "skip":
            state.turn = (state.turn + 1) % len(state.players)
            return []
        if event["type"] != "tap":
            raise GameError(f"Unknown input {event['type']!r}.")
        card = self.card(event)
        if card.id in state.played:
            raise GameError(f"{card.name} was already played.")
        seat = state.turn
        state.played.append(card.id)
        state.scores[seat] += int(card["number"])
        if state.scores[seat] >= state.target:
            state.winners = [seat]
            return [
                Cue("card-accepted", seat=seat),
                Cue("game-won", seat=seat, text=f"{state.players[seat]} wins the race"),
            ]
        state.turn = (seat + 1) % len(state.players)
        return [Cue("card-accepted", seat=seat)]

    def status(self, state: ToyState) -> Status:
        return Status.GAME_OVER if state.winners else Status.PLAYING

    def outcome(self, state: ToyState) -> Outcome | None:
        return Outcome(tuple(state.winners), "first to the target") if state.winners else None

    def prompt(self, state: ToyState) -> Prompt:
        if state.winners:
            return Prompt("")
        name = state.players[state.turn]
        return Prompt(f"{name}: tap a card", state.turn, True, (Action("skip", f"Skip {name}'s turn"),))

    def public_view(self, state: ToyState) -> dict[str, Any]:
        return {
            "game": self.game,
            "status": self.status(state).value,
            "round": 1,
            "players": [
                {"seat": seat, "name": player, "score": state.scores[seat], "eliminated": False}
                for seat, player in enumerate(state.players)
            ],
            "prompt": self.prompt(state).to_json(),
            "rounds": [],
            "winners": list(state.winners),
            "played": list(state.played),
            "target": state.target,
        }
