"""The SPY referee: setup (each seat claims a colour), then the turns: spying, passing, and a player
out for a dropped card.

Inputs are listed in `companion.games.spy` and docs/rules/spy.md. From the moment a spied card may be a
secret one, no refusal and no cue names it (see `companion.games.spy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.core.cues import Cue
from companion.games.base import (
    Engine,
    Event,
    GameError,
    Outcome,
    Prompt,
    SetupOption,
    Status,
    check_players,
    seat_of,
    sentence,
)
from companion.games.catalog import Card, GameData
from companion.games.spy.rules import GAME, TYPE_ANSWERS, Base, parse_rules
from companion.games.spy.state import SpyState, allowed_colours, next_alive, picked_colour, winner_text
from companion.games.spy.view import prompt, public_view


class Spy(Engine[SpyState]):
    """The SPY referee. Pure: `apply(state, event)` returns a new state and the cues to play."""

    game = GAME
    action_keys = {
        "claim": frozenset({"seat", "colour"}),
        "pass": frozenset({"seat"}),
        "eliminate": frozenset({"seat"}),
        "pick": frozenset({"seat"}),
    }
    options = (SetupOption("start", "Start player (the youngest)", "seat", 0),)

    def __init__(self, data: GameData) -> None:
        self.rules = parse_rules(data)
        super().__init__(data)

    @property
    def bases(self) -> Mapping[str, Base]:
        """Each colour's cards."""
        return self.rules.bases

    # ----------------------------------------------------------------- setup

    def setup(self, players: list[str], options: dict[str, Any]) -> SpyState:
        """A new game: 2 to 4 players, no colour claimed yet. Option ``start``: the first seat."""
        names = check_players(players, self.data.min_players, self.data.max_players)
        options = options or {}
        if not isinstance(options, dict):
            raise GameError('Options must be an object such as {"start": 0}.')
        unknown = sorted(set(options) - {"start"})
        if unknown:
            raise GameError(f"SPY has no option {', '.join(unknown)}; its only option is 'start'.")
        start = seat_of(options, len(names), "start") if "start" in options else 0
        count = len(names)
        return SpyState(
            players=names,
            start=start,
            colours=[None] * count,
            eliminated=[False] * count,
            exposed=[0] * count,
            lit=[[] for _ in range(count)],
            outcomes=[None] * count,
        )

    # ---------------------------------------------------------------- events

    def _apply(self, state: SpyState, event: Event) -> list[Cue]:
        kind = event["type"]
        if kind == "tap":
            card = self.card(event)
            if state.status is Status.SETUP:
                cues = self._claim(state, self._claiming_seat(state, event), card.get("colour"), card)
            else:
                cues = self._spy(state, card)
        elif kind == "claim":
            if state.status is not Status.SETUP:
                raise GameError("Every colour is already claimed: the game is under way.")
            colour = event.get("colour")
            if not isinstance(colour, str):
                raise GameError('A claim needs a colour, such as {"colour": "green"}.')
            cues = self._claim(state, seat_of(event, len(state.players)), colour, None)
        elif kind == "pass":
            cues = self._pass(state, event)
        elif kind == "eliminate":
            cues = self._drop(state, seat_of(event, len(state.players)))
        elif kind == "pick":
            cues = self._pick(state, seat_of(event, len(state.players)))
        else:
            raise GameError(f"SPY has no action {kind!r}: use tap, claim, pass, eliminate or pick.")
        return cues

    def _claiming_seat(self, state: SpyState, event: Event) -> int:
        """The seat a Spy card tapped during setup is for: the event's, else the one the prompt asks."""
        if event.get("seat") is not None:
            return seat_of(event, len(state.players))
        return state.colours.index(None)  # setup means at least one seat has no colour yet

    def _claim(self, state: SpyState, seat: int, colour: str, card: Card | None) -> list[Cue]:
        """`seat` takes `colour` (by its Spy card `card`, or by the control page when None)."""
        name = state.players[seat]
        if card is not None and card.get("kind") != "spy":
            # Never name the card: the player may already have sorted their Spy Base.
            raise GameError(f"Setup first: {name}, tap the Spy card of the colour you play.")
        if colour not in self.bases:
            raise GameError(f"SPY has no colour {colour!r}: choose from {', '.join(self.rules.colours)}.")
        allowed = allowed_colours(self.rules, state)
        if colour not in allowed:
            raise GameError(f"A two-player game is played with {' and '.join(allowed)} only, not {colour}.")
        if state.colours[seat] is not None:
            raise GameError(f"{name} already plays {state.colours[seat]}.")
        if colour in state.colours:
            raise GameError(
                f"{colour.capitalize()} is already {state.players[state.colours.index(colour)]}'s."
            )
        state.colours[seat] = colour
        state.picked = 0  # the next seat's buttons start at the first free colour
        state.log.append(f"{name} plays {colour}.")
        cues = [Cue("card-accepted", seat=seat, text=f"{name} plays {colour}", data={"colour": colour})]
        if None not in state.colours:
            state.status = Status.PLAYING
            state.turn = state.start
        return cues

    def _pick(self, state: SpyState, seat: int) -> list[Cue]:
        """A press of the asked seat's button in setup: show the next free colour (a hold claims it)."""
        if state.status is not Status.SETUP:
            raise GameError("Every colour is already claimed: the game is under way.")
        asked = state.colours.index(None)
        if seat != asked:
            raise GameError(f"{state.players[asked]} chooses a colour now, not {state.players[seat]}.")
        state.picked += 1
        colour = picked_colour(self.rules, state)
        name = state.players[seat]
        return [Cue("card-accepted", seat=seat, text=f"{name}: {colour}? Hold your seat button to play it")]

    def _spy(self, state: SpyState, card: Card) -> list[Cue]:
        """The owner tapped the card the current player spies on; answer it."""
        if state.status is Status.GAME_OVER:
            raise GameError(f"The game is over: {winner_text(state)}.")
        assert state.turn is not None  # playing always has a current player
        spier, colour = state.turn, card.get("colour")
        base = self.bases[colour]
        if card.id in base.extra_bombs and len(state.players) != 2:
            # Named by kind only, so the refusal reads the same whatever card it is.
            raise GameError("That card is an extra bomb, only used in two-player games: it is not in play.")
        if colour not in state.colours:
            raise GameError(f"Nobody plays {colour} in this game: that card is not in play.")
        if card.get("kind") == "spy":
            raise GameError(
                "The Spy card can't be spied: the owner taps the card the spier's Spy faces in their base."
            )
        owner = state.colours.index(colour)
        # From here on the card may be a secret one: refusals must not name it.
        if owner == spier:
            raise GameError(f"{state.players[spier]}, that card is your own: spy on an opponent's card.")
        if state.eliminated[owner]:
            raise GameError(f"{state.players[owner]} is out: their cards can no longer be spied.")
        cues = self._answer(state, card, spier, owner)
        # Spying ends the turn, whether or not the spier survived it.
        if state.status is Status.PLAYING:
            state.turn = next_alive(state, spier)
        return cues

    def _answer(self, state: SpyState, card: Card, spier: int, owner: int) -> list[Cue]:
        """What the owner answers about their `card` that `spier` spied, and what it does."""
        who, whose = state.players[spier], state.players[owner]
        order = self.bases[card.get("colour")].exposure
        cues: list[Cue] = []
        if card.id in order and order.index(card.id) < state.exposed[owner]:
            # Face up already: nothing to learn, but the Spy action is spent (see docs/rules/spy.md).
            text = f"{card.name} is already exposed: nothing new."
            cues.append(_cue("already-exposed", owner, text, spier, owner, card=card))
            self._record(
                state, "already-exposed", spier, owner, f"{who} spied {whose}'s {card.name}, already exposed."
            )
        elif card.id in order and order.index(card.id) == state.exposed[owner]:
            state.exposed[owner] += 1
            text = f"{card.name} is exposed"
            cues.append(_cue("card-revealed", owner, text, spier, owner, card=card))
            self._record(state, "revealed", spier, owner, f"{who} exposed {whose}'s {card.name}.")
            if state.exposed[owner] == len(order):
                cues += self._eliminate(state, owner, f"{whose} is out: {card.name} is exposed")
        elif card.id in order:
            answer = TYPE_ANSWERS[card.get("kind")]
            cues.append(_cue("spied", owner, answer, spier, owner, type=card.get("kind")))
            self._record(state, "spied", spier, owner, f"{who} spied on {whose}: {answer}.")
        elif card.id in state.lit[owner]:
            # The owner shows the lit bomb to every player, then puts it back lit and hidden: the cue
            # (the moment it is shown) names it, the scoreboard's record of the outcome does not.
            shown = f"BOOM! {who} spied {whose}'s lit {card.name}"
            cues.append(_cue("boom", owner, shown, spier, owner, card=card))
            self._record(state, "boom", spier, owner, f"BOOM! {who} spied a lit bomb in {whose}'s base.")
            cues += self._eliminate(state, spier, f"{who} is out: BOOM")
        else:
            state.lit[owner].append(card.id)
            text = f"TSSSsss: a bomb in {whose}'s base is lit"
            cues.append(_cue("bomb-lit", owner, text, spier, owner))
            self._record(state, "bomb-lit", spier, owner, f"{who} lit a bomb in {whose}'s base: TSSSsss.")
        return cues

    def _pass(self, state: SpyState, event: Event) -> list[Cue]:
        """End the current player's turn without spying."""
        if state.status is not Status.PLAYING:
            raise GameError(self._not_playing(state))
        assert state.turn is not None
        if event.get("seat") is not None and seat_of(event, len(state.players)) != state.turn:
            raise GameError(
                f"It is {state.players[state.turn]}'s turn, not {state.players[event['seat']]}'s."
            )
        seat, name = state.turn, state.players[state.turn]
        self._record(state, "pass", seat, None, f"{name} passed.")
        state.turn = next_alive(state, seat)
        return [Cue("card-accepted", seat=seat, text=f"{name} passed")]

    def _drop(self, state: SpyState, seat: int) -> list[Cue]:
        """`seat` dropped a card: out at once, whoever's turn it is."""
        name = state.players[seat]
        if state.status is not Status.PLAYING:
            raise GameError(self._not_playing(state))
        if state.eliminated[seat]:
            raise GameError(f"{name} is already out.")
        self._record(state, "dropped", None, seat, f"{name} dropped a card and is out.")
        cues = self._eliminate(state, seat, f"{name} is out: a card was dropped", logged=True)
        if state.status is Status.PLAYING and state.turn == seat:
            state.turn = next_alive(state, seat)
        return cues

    def _eliminate(self, state: SpyState, seat: int, text: str, logged: bool = False) -> list[Cue]:
        """Put `seat` out (`logged`: the log already says so); if one player is left, they win."""
        state.eliminated[seat] = True
        if not logged:
            state.log.append(sentence(text))
        cues = [Cue("player-eliminated", seat=seat, text=text)]
        alive = [s for s, out in enumerate(state.eliminated) if not out]
        if len(alive) == 1:
            state.status = Status.GAME_OVER
            state.turn = None
            state.winners = alive
            cues.append(Cue("game-won", seat=alive[0], text=f"{state.players[alive[0]]} wins"))
            state.log.append(f"{state.players[alive[0]]} wins.")
        return cues

    def _record(self, state: SpyState, kind: str, spier: int | None, owner: int | None, text: str) -> None:
        """Remember an outcome for the banner and for each player it concerns."""
        outcome = {"kind": kind, "spier": spier, "owner": owner, "text": text}
        state.last_outcome = outcome
        state.log.append(text)
        for seat in {s for s in (spier, owner) if s is not None}:
            state.outcomes[seat] = dict(outcome)  # a dict of its own: a state holds no object twice

    def _not_playing(self, state: SpyState) -> str:
        if state.status is Status.SETUP:
            return "The game has not started: every player must claim a colour first."
        return f"The game is over: {winner_text(state)}."

    # ----------------------------------------------------------------- queries

    def status(self, state: SpyState) -> Status:
        return state.status

    def outcome(self, state: SpyState) -> Outcome | None:
        if state.status is not Status.GAME_OVER:
            return None
        return Outcome(tuple(state.winners), f"{winner_text(state)}: the last spy standing")

    def prompt(self, state: SpyState) -> Prompt:
        return prompt(self.rules, state)

    def public_view(self, state: SpyState) -> dict[str, Any]:
        """The scoreboard: colours, exposure tracks, lit-bomb counts, outcomes. No hidden number."""
        return public_view(self.rules, state, self.outcome(state))


def _cue(
    name: str, seat: int, text: str, spier: int, owner: int, card: Card | None = None, **data: Any
) -> Cue:
    """A spy outcome cue; `card` is given only for a card the table sees (face up, or a bomb going
    off), which may be named."""
    details: dict[str, Any] = {"spier": spier, "owner": owner, **data}
    if card is not None:
        details.update(card=card.id, name=card.name)
    return Cue(name, seat=seat, text=text, data=details)
