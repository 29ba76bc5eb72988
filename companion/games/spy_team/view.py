"""What the table sees of a game of Spy Team: the mission choices, the prompt and the public view.

Everything about the game is public except the hands, which the companion never sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.games.base import Action, Outcome, Prompt, Status, with_story
from companion.games.catalog import Card
from companion.games.spy_team.rules import GAME, parse_tile
from companion.games.spy_team.state import (
    Mission,
    Play,
    RoundResult,
    SpyTeamState,
    Team,
    TrickResult,
    browsing,
    choices,
    pair,
    picked,
    targets,
    team_of,
    teammate,
    turn,
    waiting,
)


def mission_label(state: SpyTeamState, team: Team, seat: int, tile: str, target: int) -> str:
    """How a mission choice reads: ``"C.A.T.: Ann takes 1, Cid takes 5 (1/5)"``."""
    a, b = parse_tile(tile)
    if a == b:
        return f"{team.name}: {pair(state, team)} take {a} each ({tile})"
    mate = teammate(state, seat)
    other = b if target == a else a
    return f"{team.name}: {state.players[seat]} takes {target}, {state.players[mate]} takes {other} ({tile})"


def mission_actions(state: SpyTeamState) -> list[Action]:
    """Every legal mission action now: each team, each tile it has left, each distinct way round.

    The tablet's actions name the team's first seat (``3/3`` has only one way round). For the seat
    buttons, each seat of a team gets a press (`pick`: show the team's next mission) and a hold
    (settle the mission shown). Empty once the first card of the round is played (missions are
    fixed) or when the game is over.
    """
    if state.status is not Status.PLAYING or state.played:
        return []
    actions: list[Action] = []
    for team in state.teams:
        first = team.seats[0]
        for tile, target in choices(team):
            label = mission_label(state, team, first, tile, target)
            fields = {"seat": first, "tile": tile, "target": target}
            actions.append(Action("mission", label, fields, seat=first, button=False))
        tile, target = picked(team)
        label = mission_label(state, team, first, tile, target)
        for seat in team.seats:
            fields = {"seat": first, "tile": tile, "target": target}
            actions.append(Action("mission", label, fields, seat=seat, hold=True, tablet=False))
            actions.append(Action("pick", "Show the next mission", {"seat": seat}, seat=seat, tablet=False))
    return actions


def _picks_text(state: SpyTeamState) -> str:
    """What the teams' seat buttons show now, for the teams still choosing (or changing)."""
    shown = []
    for team in state.teams:
        if browsing(team):
            tile, target = picked(team)
            shown.append(f"{mission_label(state, team, team.seats[0], tile, target)}?")
    return " ".join(shown)


def targets_json(mission: Mission) -> dict[str, int]:
    """A mission's targets by seat. JSON object keys are strings; say so here rather than let the
    encoder do it silently."""
    return {str(seat): target for seat, target in sorted(mission.targets.items())}


def prompt(state: SpyTeamState) -> Prompt:
    """What the table expects next (see `companion.games.base`)."""
    if state.status is Status.GAME_OVER:
        team = state.teams[team_of(state, state.winners[0])]
        return Prompt(f"Game over: {team.name} win")
    actions = tuple(mission_actions(state))
    teams = waiting(state)
    if teams:
        text = (
            f"Round {state.round}: {' and '.join(teams)}, choose your mission: "
            f"press a seat button to pick a mission, hold it to settle. {_picks_text(state)}"
        )
        return Prompt(text, None, False, actions)
    seat = turn(state)
    assert seat is not None
    name = state.players[seat]
    if not state.trick:
        text = f"{name}: lead the first trick" if not state.played else f"{name}: lead the next trick"
        if not state.played and _picks_text(state):
            text += f" (or hold a seat button to change the mission to {_picks_text(state)})"
    else:
        text = f"{name}: play a card"
    return Prompt(text, seat, True, actions)


def public_view(cards: Mapping[str, Card], state: SpyTeamState, outcome: Outcome | None) -> dict[str, Any]:
    """The scoreboard: players, teams, missions, the trick in progress and the last one, the rounds."""
    view = {
        "game": GAME,
        "status": state.status.value,
        "round": state.round,
        "players": [_player_view(state, seat) for seat in range(len(state.players))],
        "prompt": prompt(state).to_json(),
        "rounds": [_round_view(result) for result in state.rounds],
        "winners": list(state.winners),
        "teams": [_team_view(team) for team in state.teams],
        "start_seat": state.start_seat,
        "leader": state.leader,
        "turn": turn(state),
        "trick": [_play_view(cards, play) for play in state.trick],
        "tricks_won": list(state.tricks_won),
        "targets": targets(state),
        "last_trick": None if state.last_trick is None else _trick_view(cards, state.last_trick),
        "played": list(state.played),
    }
    return with_story(view, state.log, outcome)


def _player_view(state: SpyTeamState, seat: int) -> dict[str, Any]:
    team = state.teams[team_of(state, seat)]
    return {
        "seat": seat,
        "name": state.players[seat],
        "score": len(team.tiles_removed),
        "eliminated": False,
        "team": team.name,
    }


def _team_view(team: Team) -> dict[str, Any]:
    return {
        "name": team.name,
        "seats": list(team.seats),
        "tiles_left": list(team.tiles_left),
        "tiles_removed": list(team.tiles_removed),
        "mission": None
        if team.mission is None
        else {"tile": team.mission.tile, "targets": targets_json(team.mission)},
    }


def _round_view(result: RoundResult) -> dict[str, Any]:
    return {
        "round": result.round,
        "winners": list(result.winners),
        "reason": result.reason,
        "team": result.team,
        "tile": result.tile,
        "outcome": result.outcome,
        "tricks_won": list(result.tricks_won),
        # Each seat's target that round, and each team's mission tile (by team): all public.
        "targets": list(result.targets),
        "missions": list(result.missions),
    }


def _trick_view(cards: Mapping[str, Card], trick: TrickResult) -> dict[str, Any]:
    return {
        "round": trick.round,
        "cards": [_play_view(cards, play) for play in trick.cards],
        "winner": trick.winner,
        "camouflage": trick.camouflage,
    }


def _play_view(cards: Mapping[str, Card], play: Play) -> dict[str, Any]:
    card = cards[play.card]
    return {
        "seat": play.seat,
        "card": card.id,
        "name": card.name,
        "colour": card["colour"],
        "number": card["number"],
    }
