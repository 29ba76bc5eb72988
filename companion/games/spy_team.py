"""Spy Team: two teams of two, trick taking against a secret-free mission target.

The companion follows the rules in ``docs/rules/spy-team.md``. In short: each round both teams pick
one of their remaining mission tiles (``"1/5"``, ``"2/4"``, ``"3/3"``) and who aims for which number;
then the four players play tricks. The strongest card of a trick is the highest of the lead card's
colour, or the lowest when all four cards share a colour (Camouflage). The round stops the moment a
team hits both its targets exactly (mission accomplished) or one of its players goes over target
(sabotage: the rival team completes its mission instead). The completing team removes its tile; the
first team to remove all three wins.

Inputs (events), all plain dicts as the journal stores them:

- ``{"type": "mission", "seat": 0, "tile": "1/5", "target": 1}``: seat 0 aims for 1 trick, its
  teammate for the tile's other number (5). Either teammate may send it, and may send another one to
  change the team's choice, until the first card of the round is played.
- ``{"type": "tap", "card": "spy-team/red-17"}`` (optionally ``"seat": 2``): the card of the seat whose
  turn it is.

What the companion cannot see: the hands, the card swap between teammates before the first trick,
the rule that cards leave a hand from either end only, and which 4 cards sit out the round. Those stay
physical; the engine only ever learns the cards that are played face up.

Why a round always ends by the 11th trick (each player holds 11 cards, so this matters): while a
round goes on, no player is over target and no team has both players exactly on target, so each
team has won at most 6 - 1 = 5 tricks (its targets add up to 6, and reaching 6 without anyone over
means both are exactly on target). Both teams together have then won at most 10 tricks; the 11th trick
pushes one team to 6 or more, which ends the round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

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
    with_story,
)
from companion.games.catalog import Card, DataError, GameData

PLAYERS = 4
HAND = 11  # cards dealt to each player; 4 of the 48 sit out every round
TILE_TOTAL = 6  # both numbers of a mission tile add up to this
_TILE = re.compile(r"^(\d+)/(\d+)$")


# State. Plain dataclasses: the base class deep-copies them before every event, and equality
# compares them field by field, which the tests use to prove a refused input changed nothing.


@dataclass
class Mission:
    """A team's choice for the round: the tile and each teammate's target (seat -> tricks)."""

    tile: str
    targets: dict[int, int]


@dataclass
class Team:
    """One team: its seats (opposite each other), its tiles and this round's mission, if chosen."""

    name: str
    seats: tuple[int, int]
    tiles_left: list[str]
    tiles_removed: list[str] = field(default_factory=list)
    mission: Mission | None = None


@dataclass
class Play:
    """One card on the table: who played it."""

    seat: int
    card: str


@dataclass
class TrickResult:
    """A finished trick, kept for the scoreboard."""

    round: int
    cards: list[Play]
    winner: int
    camouflage: bool


@dataclass
class RoundResult:
    """A finished round: the team that completed its mission, and why."""

    round: int
    team: str
    winners: list[int]
    tile: str
    outcome: Literal["accomplished", "sabotaged"]
    reason: str
    tricks_won: list[int]


@dataclass
class SpyTeamState:
    """Everything the companion knows about a game of Spy Team.

    `trick` holds the cards of the trick in progress in play order; `played` every card id played this
    round (the trick in progress included), so a card tapped twice is caught. `tricks_won` is per seat
    and per round. `last_trick` survives into the next round so the board can still show the trick
    that decided the previous one.
    """

    players: list[str]
    teams: list[Team]
    round: int = 1
    start_seat: int = 0
    leader: int = 0
    trick: list[Play] = field(default_factory=list)
    played: list[str] = field(default_factory=list)
    tricks_won: list[int] = field(default_factory=lambda: [0] * PLAYERS)
    last_trick: TrickResult | None = None
    rounds: list[RoundResult] = field(default_factory=list)
    status: Status = Status.PLAYING
    winners: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the story, trick by trick (`told` cues)


def parse_tile(tile: str) -> tuple[int, int]:
    """The two targets of a tile name such as ``"1/5"``; ValueError if it is not ``a/b``."""
    match = _TILE.match(tile)
    if match is None:
        raise ValueError(f'{tile!r} is not a mission tile like "1/5"')
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True)
class SpyTeamRules:
    """The game data this engine plays, checked and parsed once (`parse_rules`)."""

    tiles: tuple[str, ...]  # the mission tiles each team starts with, in the data's order
    teams: tuple[tuple[str, tuple[int, int]], ...]  # (name, its two seats, lower first)


def parse_rules(data: GameData) -> SpyTeamRules:
    """Refuse data this engine cannot play: it needs the 48 cards (two colours, 1 to 24 each),
    mission tiles ``a/b`` with a + b = 6, and two teams of two opposite seats."""
    where = f"game data for {data.game!r}"
    if data.game != SpyTeam.game:
        raise DataError(f"{where}: this is not {SpyTeam.game!r} data")
    if data.min_players != PLAYERS or data.max_players != PLAYERS:
        raise DataError(f"{where}: Spy Team is for exactly {PLAYERS} players")
    _check_cards(data, where)
    return SpyTeamRules(_tiles(data.extra.get("tiles"), where), _teams(data.extra.get("teams"), where))


def _check_cards(data: GameData, where: str) -> None:
    by_colour: dict[str, set[int]] = {}
    for card in data.cards.values():
        colour, number = card.get("colour"), card.get("number")
        if not isinstance(colour, str) or not colour:
            raise DataError(f"{where}: card {card.id} has no colour")
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 24:
            raise DataError(f"{where}: card {card.id} needs a number from 1 to 24")
        if card.id != f"{data.game}/{colour}-{number}":
            raise DataError(f"{where}: card {card.id} says it is {colour} {number}; its id must match")
        by_colour.setdefault(colour, set()).add(number)  # ids are unique, so no duplicates here
    if len(data.cards) != 48 or len(by_colour) != 2:
        raise DataError(
            f"{where}: there must be 48 cards in 2 colours, not {len(data.cards)} in {len(by_colour)}"
        )
    for colour, numbers in by_colour.items():
        if numbers != set(range(1, 25)):
            raise DataError(f"{where}: the {colour} cards must be numbered 1 to 24 exactly once")


def _tiles(tiles: Any, where: str) -> tuple[str, ...]:
    if not isinstance(tiles, list) or not tiles or not all(isinstance(t, str) for t in tiles):
        raise DataError(f'{where}: \'tiles\' must be a list of mission tiles such as ["1/5", "2/4", "3/3"]')
    shapes: set[tuple[int, int]] = set()
    for tile in tiles:
        try:
            a, b = parse_tile(tile)
        except ValueError as error:
            raise DataError(f"{where}: {error}") from None
        if a < 1 or b < 1 or a + b != TILE_TOTAL:
            raise DataError(
                f"{where}: mission tile {tile!r} must be two numbers of at least 1 adding up to 6"
            )
        shape = (min(a, b), max(a, b))
        if shape in shapes:
            raise DataError(f"{where}: mission tile {tile!r} appears twice")
        shapes.add(shape)
    return tuple(tiles)


def _teams(teams: Any, where: str) -> tuple[tuple[str, tuple[int, int]], ...]:
    if not isinstance(teams, list) or len(teams) != 2:
        raise DataError(f"{where}: there must be exactly two [[teams]]")
    parsed: list[tuple[str, tuple[int, int]]] = []
    for team in teams:
        name, seats = _team(team, where)
        if name in (n for n, _ in parsed):
            raise DataError(f"{where}: each team needs its own name")
        parsed.append((name, seats))
    if {s for _, seats in parsed for s in seats} != set(range(PLAYERS)):
        raise DataError(f"{where}: the two teams must cover seats 0 to 3 between them")
    return tuple(parsed)


def _team(team: Any, where: str) -> tuple[str, tuple[int, int]]:
    name = team.get("name") if isinstance(team, dict) else None
    seats = team.get("seats") if isinstance(team, dict) else None
    if not isinstance(name, str) or not name:
        raise DataError(f"{where}: each team needs its own name")
    if (
        not isinstance(seats, list)
        or len(seats) != 2
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in seats)
    ):
        raise DataError(f"{where}: team {name} needs two seats")
    if abs(seats[0] - seats[1]) != 2:  # teammates never sit side by side
        raise DataError(f"{where}: team {name} must sit opposite each other: seats 0 and 2, or 1 and 3")
    return name, (min(seats), max(seats))


def strongest(cards: list[Card]) -> tuple[int, bool]:
    """The index of the strongest of a trick's cards (in play order) and whether it is Camouflage.

    Normally the highest number of the lead card's colour wins; cards of the other colour never do.
    When all the cards share a colour (Camouflage), the lowest number wins instead. Numbers are unique
    within a colour, so there is never a tie.
    """
    lead = cards[0]["colour"]
    if all(card["colour"] == lead for card in cards):
        return min(range(len(cards)), key=lambda i: cards[i]["number"]), True
    in_colour = [i for i, card in enumerate(cards) if card["colour"] == lead]
    return max(in_colour, key=lambda i: cards[i]["number"]), False


class SpyTeam(Engine[SpyTeamState]):
    """The Spy Team rules engine. Pure: see `companion.games.base.Engine`."""

    game = "spy-team"
    action_keys = {"mission": frozenset({"seat", "tile", "target"})}
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
        else:
            raise GameError(f"Spy Team has no action '{kind}'.")
        return cues

    def _mission(self, state: SpyTeamState, event: Event) -> list[Cue]:
        """A team chooses (or changes) its tile and who aims for which number."""
        seat = seat_of(event, PLAYERS)
        team = state.teams[self.team_of(state, seat)]
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
        mate = self.teammate(state, seat)
        other = numbers[1] if target == numbers[0] else numbers[0]

        ready_before = self.missions_ready(state)
        team.mission = Mission(tile=tile, targets={seat: target, mate: other})
        cues = [
            Cue(
                "card-accepted",
                seat=seat,
                text=self.mission_label(state, team, seat, tile, target),
                data={"team": team.name, "tile": tile, "targets": self._targets_json(team.mission)},
            )
        ]
        state.log += told(cues)
        if not ready_before and self.missions_ready(state):
            # The prompt moves from the host to the leader: that seat should notice.
            leader = state.players[state.leader]
            cues.append(Cue("your-turn", seat=state.leader, text=f"{leader} leads the first trick"))
        return cues

    def _tap(self, state: SpyTeamState, event: Event) -> list[Cue]:
        """A card played face up by the seat whose turn it is."""
        card = self.card(event)
        waiting = [team.name for team in state.teams if team.mission is None]
        if waiting:
            raise GameError(
                # The team names end in a full stop already ("B.I.R.D."): don't add a second one.
                f"Choose the missions before playing a card: waiting for {' and '.join(waiting)}".rstrip(".")
                + "."
            )
        turn = self.turn(state)
        assert turn is not None  # playing, missions chosen
        if event.get("seat") is not None:
            seat = seat_of(event, PLAYERS)
            if seat != turn:
                raise GameError(f"It is {state.players[turn]}'s turn, not {state.players[seat]}'s.")
        if card.id in state.played:
            raise GameError(f"{card.name} was already played this round.")

        state.trick.append(Play(seat=turn, card=card.id))
        state.played.append(card.id)
        state.log.append(f"{state.players[turn]} played {card.name}.")
        cues = [
            Cue(
                "card-accepted",
                seat=turn,
                text=f"{state.players[turn]} plays {card.name}",
                data={"card": card.id},
            )
        ]
        if len(state.trick) < PLAYERS:
            nxt = (turn + 1) % PLAYERS
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
            # 11 tricks always decide a round (see the module docstring); more would be a bug.
            assert len(state.played) < PLAYERS * HAND, "a round outlived its 11 tricks"
            cues.append(Cue("your-turn", seat=winner, text=f"{name} leads the next trick"))
            return cues
        return cues + self._end_round(state, *decided)

    def _decide(
        self, state: SpyTeamState, winner: int
    ) -> tuple[int, Literal["accomplished", "sabotaged"], Cue] | None:
        """Whether the trick just won by `winner` ends the round: (completing team, how, cue).

        Only the winner's count changed, so only the winner's team can change status: before this
        trick neither team was over target nor exactly on target (else the round would have ended),
        and the rival team's counts are untouched. Hence at most one team is ever decided at once.
        """
        own = self.team_of(state, winner)
        team = state.teams[own]
        assert team.mission is not None
        targets = team.mission.targets
        if state.tricks_won[winner] > targets[winner]:
            rival = state.teams[1 - own]
            text = (
                f"{team.name}'s mission is sabotaged: {state.players[winner]} won "
                f"{state.tricks_won[winner]} tricks aiming for {targets[winner]}. "
                f"{rival.name} complete their mission."
            )
            cue = Cue(
                "mission-sabotaged",
                seat=winner,
                text=text,
                data={"team": team.name, "completed_by": rival.name, "tile": team.mission.tile},
            )
            return 1 - own, "sabotaged", cue
        if all(state.tricks_won[s] == targets[s] for s in team.seats):
            a, b = team.seats
            text = (
                f"{team.name} accomplish their mission: {state.players[a]} won {targets[a]} and "
                f"{state.players[b]} won {targets[b]} ({team.mission.tile})."
            )
            cue = Cue("mission-accomplished", text=text, data={"team": team.name, "tile": team.mission.tile})
            return own, "accomplished", cue
        return None

    def _end_round(
        self, state: SpyTeamState, completing: int, outcome: Literal["accomplished", "sabotaged"], cue: Cue
    ) -> list[Cue]:
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
            state.winners = winners
            cues.append(
                Cue(
                    "game-won",
                    text=f"{team.name} ({self.pair(state, team)}) win the game",
                    data={"winners": winners, "team": team.name},
                )
            )
            state.log += told(cues[-1:])
            return cues
        # A new round: the start player passes left, missions are chosen afresh.
        state.round += 1
        state.start_seat = (state.start_seat + 1) % PLAYERS
        state.leader = state.start_seat
        state.trick = []
        state.played = []
        state.tricks_won = [0] * PLAYERS
        for each in state.teams:
            each.mission = None
        return cues

    # Queries.

    def team_of(self, state: SpyTeamState, seat: int) -> int:
        """The index in `state.teams` of the team that seat plays for."""
        return next(i for i, team in enumerate(state.teams) if seat in team.seats)

    def teammate(self, state: SpyTeamState, seat: int) -> int:
        """The seat of `seat`'s partner."""
        a, b = state.teams[self.team_of(state, seat)].seats
        return b if seat == a else a

    def missions_ready(self, state: SpyTeamState) -> bool:
        """Whether both teams have chosen a mission this round."""
        return all(team.mission is not None for team in state.teams)

    def turn(self, state: SpyTeamState) -> int | None:
        """The seat expected to play a card, or None (missions missing, or the game is over)."""
        if state.status is not Status.PLAYING or not self.missions_ready(state):
            return None
        return (state.leader + len(state.trick)) % PLAYERS

    def targets(self, state: SpyTeamState) -> list[int | None]:
        """Each seat's target this round (None until its team chose)."""
        result: list[int | None] = [None] * PLAYERS
        for team in state.teams:
            if team.mission is not None:
                for seat, target in team.mission.targets.items():
                    result[seat] = target
        return result

    def pair(self, state: SpyTeamState, team: Team) -> str:
        a, b = team.seats
        return f"{state.players[a]} and {state.players[b]}"

    def mission_label(self, state: SpyTeamState, team: Team, seat: int, tile: str, target: int) -> str:
        """How a mission choice reads: ``"C.A.T.: Ann takes 1, Cid takes 5 (1/5)"``."""
        a, b = parse_tile(tile)
        if a == b:
            return f"{team.name}: {self.pair(state, team)} take {a} each ({tile})"
        mate = self.teammate(state, seat)
        other = b if target == a else a
        return (
            f"{team.name}: {state.players[seat]} takes {target}, {state.players[mate]} takes {other} ({tile})"
        )

    def mission_actions(self, state: SpyTeamState) -> list[Action]:
        """Every legal mission action now: each team, each tile it has left, each distinct way round.

        The action names the team's first seat; ``3/3`` has only one way round. Empty once the first
        card of the round is played (missions are fixed) or when the game is over.
        """
        if state.status is not Status.PLAYING or state.played:
            return []
        actions: list[Action] = []
        for team in state.teams:
            seat = team.seats[0]
            for tile in team.tiles_left:
                for target in dict.fromkeys(parse_tile(tile)):  # distinct, in order
                    label = self.mission_label(state, team, seat, tile, target)
                    fields = {"seat": seat, "tile": tile, "target": target}
                    actions.append(Action("mission", label, fields, seat=seat))
        return actions

    def status(self, state: SpyTeamState) -> Status:
        return state.status

    def outcome(self, state: SpyTeamState) -> Outcome | None:
        if state.status is not Status.GAME_OVER:
            return None
        team = state.teams[self.team_of(state, state.winners[0])]
        return Outcome(tuple(state.winners), f"{team.name} ({self.pair(state, team)}) win the game")

    def prompt(self, state: SpyTeamState) -> Prompt:
        """What the table expects next (see `companion.games.base`)."""
        if state.status is Status.GAME_OVER:
            team = state.teams[self.team_of(state, state.winners[0])]
            return Prompt(f"Game over: {team.name} win")
        actions = tuple(self.mission_actions(state))
        waiting = [team.name for team in state.teams if team.mission is None]
        if waiting:
            return Prompt(
                f"Round {state.round}: {' and '.join(waiting)}, choose your mission", None, False, actions
            )
        turn = self.turn(state)
        assert turn is not None
        name = state.players[turn]
        if not state.trick:
            text = f"{name}: lead the first trick" if not state.played else f"{name}: lead the next trick"
        else:
            text = f"{name}: play a card"
        return Prompt(text, turn, True, actions)

    @staticmethod
    def _targets_json(mission: Mission) -> dict[str, int]:
        # JSON object keys are strings; say so here rather than let the encoder do it silently.
        return {str(seat): target for seat, target in sorted(mission.targets.items())}

    def _play_json(self, play: Play) -> dict[str, Any]:
        card = self.data.cards[play.card]
        return {
            "seat": play.seat,
            "card": card.id,
            "name": card.name,
            "colour": card["colour"],
            "number": card["number"],
        }

    def public_view(self, state: SpyTeamState) -> dict[str, Any]:
        """Everything about the game is public except the hands, which the companion never sees."""
        players = []
        for seat, name in enumerate(state.players):
            team = state.teams[self.team_of(state, seat)]
            players.append(
                {
                    "seat": seat,
                    "name": name,
                    "score": len(team.tiles_removed),
                    "eliminated": False,
                    "team": team.name,
                }
            )
        teams = [
            {
                "name": team.name,
                "seats": list(team.seats),
                "tiles_left": list(team.tiles_left),
                "tiles_removed": list(team.tiles_removed),
                "mission": None
                if team.mission is None
                else {"tile": team.mission.tile, "targets": self._targets_json(team.mission)},
            }
            for team in state.teams
        ]
        last = state.last_trick
        view = {
            "game": self.game,
            "status": state.status.value,
            "round": state.round,
            "players": players,
            "prompt": self.prompt(state).to_json(),
            "rounds": [
                {
                    "round": r.round,
                    "winners": list(r.winners),
                    "reason": r.reason,
                    "team": r.team,
                    "tile": r.tile,
                    "outcome": r.outcome,
                    "tricks_won": list(r.tricks_won),
                }
                for r in state.rounds
            ],
            "winners": list(state.winners),
            "teams": teams,
            "start_seat": state.start_seat,
            "leader": state.leader,
            "turn": self.turn(state),
            "trick": [self._play_json(play) for play in state.trick],
            "tricks_won": list(state.tricks_won),
            "targets": self.targets(state),
            "last_trick": None
            if last is None
            else {
                "round": last.round,
                "cards": [self._play_json(play) for play in last.cards],
                "winner": last.winner,
                "camouflage": last.camouflage,
            },
            "played": list(state.played),
        }
        return with_story(view, state.log, self.outcome(state))
