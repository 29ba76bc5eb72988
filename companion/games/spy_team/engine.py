"""The Spy Team engine: setup, the missions each round, the tricks, and the end of a round.

Inputs are listed in `companion.games.spy_team` and docs/rules/spy-team.md.
"""

from __future__ import annotations

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
    told,
)
from companion.games.catalog import GameData
from companion.games.spy_team.rules import GAME, HAND, PLAYERS, parse_rules, parse_tile, strongest
from companion.games.spy_team.state import (
    Mission,
    Play,
    RoundOutcome,
    RoundResult,
    SpyTeamState,
    Team,
    TrickResult,
    choices,
    missions_ready,
    pair,
    picked,
    targets,
    team_of,
    teammate,
    turn,
    waiting,
)
from companion.games.spy_team.view import mission_actions, mission_label, prompt, public_view, targets_json

# How a trick decides a round, if it does: (the team completing its mission, how, the cue saying so).
Decision = tuple[int, RoundOutcome, Cue]


class SpyTeam(Engine[SpyTeamState]):
    """The Spy Team rules engine. Pure: see `companion.games.base.Engine`."""

    game = GAME
    action_keys = {"mission": frozenset({"seat", "tile", "target"}), "pick": frozenset({"seat"})}
    options = (SetupOption("start", "Start player", "seat", 0),)

    def __init__(self, data: GameData) -> None:
        self.rules = parse_rules(data)
        super().__init__(data)

    @property
    def tiles(self) -> list[str]:
        """The mission tiles each team starts with, in the data's order."""
        return list(self.rules.tiles)

    # Setup.

    def setup(self, players: list[str], options: dict[str, Any]) -> SpyTeamState:
        """A new game for exactly 4 players, seated clockwise in the given order.

        Options: ``{"start": seat}`` chooses the first start player (seat 0 by default).
        """
        names = check_players(players, PLAYERS, PLAYERS)
        options = options or {}
        if not isinstance(options, dict):
            raise GameError("Options must be a set of named values.")
        unknown = sorted(set(options) - {"start"})
        if unknown:
            raise GameError(f"Spy Team has no option '{unknown[0]}'.")
        start = seat_of({"start": options.get("start", 0)}, PLAYERS, "start")
        teams = [Team(name=name, seats=seats, tiles_left=self.tiles) for name, seats in self.rules.teams]
        return SpyTeamState(players=names, teams=teams, start_seat=start, leader=start)

    # Events.

    def _apply(self, state: SpyTeamState, event: Event) -> list[Cue]:
        if state.status is Status.GAME_OVER:
            raise GameError("The game is over; start a new one to play again.")
        kind = event["type"]
        if kind == "tap":
            cues = self._tap(state, event)
        elif kind == "mission":
            cues = self._mission(state, event)
        elif kind == "pick":
            cues = self._pick(state, event)
        else:
            raise GameError(f"Spy Team has no action '{kind}'.")
        return cues

    # Missions.

    def _mission(self, state: SpyTeamState, event: Event) -> list[Cue]:
        """A team chooses (or changes) its tile and who aims for which number."""
        seat = seat_of(event, PLAYERS)
        team = state.teams[team_of(state, seat)]
        tile, target = self._choice(state, team, event)
        numbers = parse_tile(tile)
        mate = teammate(state, seat)
        other = numbers[1] if target == numbers[0] else numbers[0]

        ready_before = missions_ready(state)
        team.mission = Mission(tile=tile, targets={seat: target, mate: other})
        team.pick = choices(team).index((tile, team.mission.targets[team.seats[0]]))  # the buttons show it
        cues = [
            Cue(
                "card-accepted",
                seat=seat,
                text=mission_label(state, team, seat, tile, target),
                data={"team": team.name, "tile": tile, "targets": targets_json(team.mission)},
            )
        ]
        state.log += told(cues)
        if not ready_before and missions_ready(state):
            # The prompt moves from the host to the leader: that seat should notice.
            leader = state.players[state.leader]
            cues.append(Cue("your-turn", seat=state.leader, text=f"{leader} leads the first trick"))
        return cues

    def _pick(self, state: SpyTeamState, event: Event) -> list[Cue]:
        """A press of a team's seat button: show the team's next mission (a hold settles it)."""
        seat = seat_of(event, PLAYERS)
        team = state.teams[team_of(state, seat)]
        if state.played:
            raise GameError(f"{team.name} can no longer change its mission: the first card is played.")
        team.pick = (team.pick + 1) % len(choices(team))
        tile, target = picked(team)
        text = f"{mission_label(state, team, team.seats[0], tile, target)}? Hold a seat button to settle it"
        return [Cue("card-accepted", seat=seat, text=text, data={"team": team.name, "tile": tile})]

    def _choice(self, state: SpyTeamState, team: Team, event: Event) -> tuple[str, int]:
        """The tile and the sender's target a mission event names, refused unless `team` may take them."""
        if state.played:
            raise GameError(f"{team.name} can no longer change its mission: the first card is played.")
        tile = event.get("tile")
        if not isinstance(tile, str):
            raise GameError('A mission needs a tile such as "1/5".')
        if tile in team.tiles_removed:
            raise GameError(f"{team.name} has already completed the {tile} mission; that tile is gone.")
        if tile not in team.tiles_left:
            raise GameError(f"There is no mission tile {tile}; the tiles are {', '.join(self.tiles)}.")
        target = event.get("target")
        numbers = parse_tile(tile)
        if isinstance(target, bool) or not isinstance(target, int) or target not in numbers:
            choices = " or ".join(str(n) for n in sorted(set(numbers)))
            raise GameError(f"With the {tile} tile a player aims for {choices} tricks, not {target}.")
        return tile, target

    # Tricks.

    def _tap(self, state: SpyTeamState, event: Event) -> list[Cue]:
        """A card played face up by the seat whose turn it is."""
        card = self.card(event)
        teams = waiting(state)
        if teams:
            raise GameError(
                # The team names end in a full stop already ("B.I.R.D."): don't add a second one.
                f"Choose the missions before playing a card: waiting for {' and '.join(teams)}".rstrip(".")
                + "."
            )
        seat = turn(state)
        assert seat is not None  # playing, missions chosen
        if event.get("seat") is not None:
            sender = seat_of(event, PLAYERS)
            if sender != seat:
                raise GameError(f"It is {state.players[seat]}'s turn, not {state.players[sender]}'s.")
        if card.id in state.played:
            raise GameError(f"{card.name} was already played this round.")

        state.trick.append(Play(seat=seat, card=card.id))
        state.played.append(card.id)
        state.log.append(f"{state.players[seat]} played {card.name}.")
        cues = [
            Cue(
                "card-accepted",
                seat=seat,
                text=f"{state.players[seat]} plays {card.name}",
                data={"card": card.id},
            )
        ]
        if len(state.trick) < PLAYERS:
            nxt = (seat + 1) % PLAYERS
            cues.append(Cue("your-turn", seat=nxt, text=f"{state.players[nxt]}: play a card"))
            return cues
        return cues + self._finish_trick(state)

    def _finish_trick(self, state: SpyTeamState) -> list[Cue]:
        """Score the full trick in `state.trick`, then end the round if a mission is decided."""
        cards = [self.data.cards[play.card] for play in state.trick]
        index, camouflage = strongest(cards)
        winner = state.trick[index].seat
        state.last_trick = TrickResult(state.round, list(state.trick), winner, camouflage)
        state.trick = []
        state.tricks_won[winner] += 1
        state.leader = winner

        cues: list[Cue] = []
        name = state.players[winner]
        camouflaged = " (camouflage: the lowest wins)" if camouflage else ""
        state.log.append(
            f"Trick {sum(state.tricks_won)}: {name} won it with {cards[index].name}{camouflaged}."
        )
        if camouflage:
            colour = cards[0]["colour"]
            cues.append(Cue("camouflage", text=f"Camouflage! All four cards are {colour}: the lowest wins"))
        cues.append(
            Cue(
                "trick-won",
                seat=winner,
                text=f"{name} wins the trick with {cards[index].name}",
                data={"card": cards[index].id, "camouflage": camouflage, "tricks": state.tricks_won[winner]},
            )
        )
        decided = self._decide(state, winner)
        if decided is None:
            # 11 tricks always decide a round (see `companion.games.spy_team`); more would be a bug.
            assert len(state.played) < PLAYERS * HAND, "a round outlived its 11 tricks"
            cues.append(Cue("your-turn", seat=winner, text=f"{name} leads the next trick"))
            return cues
        return cues + self._end_round(state, *decided)

    # Rounds.

    def _decide(self, state: SpyTeamState, winner: int) -> Decision | None:
        """Whether the trick just won by `winner` ends the round: (completing team, how, cue).

        Only the winner's count changed, so only the winner's team can change status: before this
        trick neither team was over target nor exactly on target (else the round would have ended),
        and the rival team's counts are untouched. Hence at most one team is ever decided at once.
        """
        own = team_of(state, winner)
        team = state.teams[own]
        assert team.mission is not None
        aims = team.mission.targets
        if state.tricks_won[winner] > aims[winner]:
            rival = state.teams[1 - own]
            text = (
                f"{team.name}'s mission is sabotaged: {state.players[winner]} won "
                f"{state.tricks_won[winner]} tricks aiming for {aims[winner]}. "
                f"{rival.name} complete their mission."
            )
            cue = Cue(
                "mission-sabotaged",
                seat=winner,
                text=text,
                data={"team": team.name, "completed_by": rival.name, "tile": team.mission.tile},
            )
            return 1 - own, "sabotaged", cue
        if all(state.tricks_won[s] == aims[s] for s in team.seats):
            a, b = team.seats
            text = (
                f"{team.name} accomplish their mission: {state.players[a]} won {aims[a]} and "
                f"{state.players[b]} won {aims[b]} ({team.mission.tile})."
            )
            cue = Cue("mission-accomplished", text=text, data={"team": team.name, "tile": team.mission.tile})
            return own, "accomplished", cue
        return None

    def _end_round(self, state: SpyTeamState, completing: int, outcome: RoundOutcome, cue: Cue) -> list[Cue]:
        """The team `completing` removes its tile; then the game ends or a new round begins."""
        team = state.teams[completing]
        assert team.mission is not None
        tile = team.mission.tile
        team.tiles_left.remove(tile)
        team.tiles_removed.append(tile)
        winners = sorted(team.seats)
        state.rounds.append(
            RoundResult(
                round=state.round,
                team=team.name,
                winners=winners,
                tile=tile,
                outcome=outcome,
                reason=cue.text,
                tricks_won=list(state.tricks_won),
                targets=targets(state),
                missions=[each.mission.tile if each.mission else None for each in state.teams],
            )
        )
        cues = [
            cue,
            Cue(
                "round-won",
                text=f"Round {state.round} goes to {team.name}: they remove their {tile} tile",
                data={"winners": winners, "team": team.name, "tile": tile, "round": state.round},
            ),
        ]
        state.log += told(cues)
        if not team.tiles_left:
            state.status = Status.GAME_OVER
            state.winners = list(winners)  # its own list: a state holds no object twice (copy_state)
            cues.append(
                Cue(
                    "game-won",
                    text=f"{team.name} ({pair(state, team)}) win the game",
                    data={"winners": winners, "team": team.name},
                )
            )
            state.log += told(cues[-1:])
            return cues
        _new_round(state)
        return cues

    # Queries. Each calls the function of the same name in `companion.games.spy_team.state` (what the
    # state says) or `companion.games.spy_team.view` (what the table sees): they are pure functions
    # of the state, kept here for the callers that hold an engine.

    def team_of(self, state: SpyTeamState, seat: int) -> int:
        """The index in `state.teams` of the team that seat plays for."""
        return team_of(state, seat)

    def teammate(self, state: SpyTeamState, seat: int) -> int:
        """The seat of `seat`'s partner."""
        return teammate(state, seat)

    def missions_ready(self, state: SpyTeamState) -> bool:
        """Whether both teams have chosen a mission this round."""
        return missions_ready(state)

    def turn(self, state: SpyTeamState) -> int | None:
        """The seat expected to play a card, or None (missions missing, or the game is over)."""
        return turn(state)

    def targets(self, state: SpyTeamState) -> list[int | None]:
        """Each seat's target this round (None until its team chose)."""
        return targets(state)

    def pair(self, state: SpyTeamState, team: Team) -> str:
        return pair(state, team)

    def mission_label(self, state: SpyTeamState, team: Team, seat: int, tile: str, target: int) -> str:
        """How a mission choice reads: ``"C.A.T.: Ann takes 1, Cid takes 5 (1/5)"``."""
        return mission_label(state, team, seat, tile, target)

    def mission_actions(self, state: SpyTeamState) -> list[Action]:
        """Every legal mission action now (see `companion.games.spy_team.view.mission_actions`)."""
        return mission_actions(state)

    def status(self, state: SpyTeamState) -> Status:
        return state.status

    def outcome(self, state: SpyTeamState) -> Outcome | None:
        if state.status is not Status.GAME_OVER:
            return None
        team = state.teams[team_of(state, state.winners[0])]
        return Outcome(tuple(state.winners), f"{team.name} ({pair(state, team)}) win the game")

    def prompt(self, state: SpyTeamState) -> Prompt:
        """What the table expects next (see `companion.games.base`)."""
        return prompt(state)

    def public_view(self, state: SpyTeamState) -> dict[str, Any]:
        """Everything about the game is public except the hands, which the companion never sees."""
        return public_view(self.data.cards, state, self.outcome(state))


def _new_round(state: SpyTeamState) -> None:
    """A new round: the start player passes left, missions are chosen afresh."""
    state.round += 1
    state.start_seat = (state.start_seat + 1) % PLAYERS
    state.leader = state.start_seat
    state.trick = []
    state.played = []
    state.tricks_won = [0] * PLAYERS
    for each in state.teams:
        each.mission = None
        each.pick = 0
