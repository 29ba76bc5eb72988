"""The Mission for Peanuts engine: what the companion is asked (setup, the queries, the prompt and the
public view) and where each input goes.

Each step of the turn's queue (`companion.games.peanuts.state`) is answered by one handler, found in
`STEPS` by its `StepKind`: the round's deal, showdown and end in `rounds`, a turn's draw and card
played in `turn`, the steps the Roles' ASSIST and DEPLOY queue in `roles` (where `ASSIST` and `DEPLOY`
find each Role's action), the Assassin check and the elimination in `elimination`. A "Finding the
Family" claim (`claim`) is an overlay on the steps that follow a draw. Inputs are listed in
`companion.games.peanuts` and docs/rules/peanuts.md.
"""

from __future__ import annotations

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
    told,
)
from companion.games.catalog import GameData
from companion.games.peanuts.claim import on_claim, start_claim
from companion.games.peanuts.elimination import on_assassin_check, on_eliminate
from companion.games.peanuts.moves import StepHandler
from companion.games.peanuts.roles import (
    on_agent_discard,
    on_direction,
    on_face_down,
    on_informant_draw,
    on_seer_draw,
    on_spy_found,
    on_spy_swap,
    on_take_back,
    on_target,
    on_trade,
)
from companion.games.peanuts.rounds import deal, end_turn, on_flip, on_reveal, on_round_over, on_showdown
from companion.games.peanuts.rules import PeanutsRules, parse_rules
from companion.games.peanuts.state import PeanutsState, StepKind, listing, place
from companion.games.peanuts.turn import on_act, on_draw
from companion.games.peanuts.view import prompt as view_prompt
from companion.games.peanuts.view import public_view as view_public


class Peanuts(Engine[PeanutsState]):
    """The Mission for Peanuts scorekeeper. Pure: `apply` returns a new state and the cues."""

    game = "peanuts"
    # Every input may name the seat that answers ("seat"); where a seat is the choice, that is it.
    action_keys = {
        kind: frozenset({"seat", *keys})
        for kind, keys in {
            "draw": (),
            "assist": (),
            "deploy": (),
            "target": (),
            "trade": ("seats",),
            "direction": ("direction",),
            "take-back": ("index",),
            "browse": ("index",),
            "spy-found": ("found",),
            "assassin": ("received",),
            "done": (),
            "claim-family": (),
            "cancel-claim": (),
            "next-round": (),
        }.items()
    }
    options = (
        SetupOption("start", "Start player", "seat", 0),
        SetupOption("target", "Peanut Points to win", "int"),
    )

    def __init__(self, data: GameData) -> None:
        self.rules: PeanutsRules = parse_rules(data)
        super().__init__(data)

    def option_defaults(self, players: int) -> dict[str, Any]:
        return {**super().option_defaults(players), "target": self.rules.targets[players]}

    # Queries ---------------------------------------------------------------

    def deck_size(self, players: int) -> int:
        """Cards in the deck right after the deal, for a table of `players`."""
        return self.rules.deck_size(players)

    def notches(self, card_id: str) -> int:
        return self.rules.notches(card_id)

    def combination(self, first: str, second: str) -> tuple[int, str] | None:
        """The combination two cards make (in either order), as (rank, name), or None."""
        return self.rules.combination(first, second)

    def _place(self, state: PeanutsState, card_id: str) -> str | None:
        return place(state, card_id)

    def status(self, state: PeanutsState) -> Status:
        return state.status

    def outcome(self, state: PeanutsState) -> Outcome | None:
        if state.status is not Status.GAME_OVER:
            return None
        names = listing([state.players[s] for s in state.winners])
        return Outcome(tuple(state.winners), f"{names} reached {state.target} Peanut Points")

    def prompt(self, state: PeanutsState) -> Prompt:
        return view_prompt(self.rules, state)

    def public_view(self, state: PeanutsState) -> dict[str, Any]:
        return view_public(self.rules, state, self.outcome(state))

    def turn_number(self, state: PeanutsState) -> int:
        return state.turns

    # Setup -----------------------------------------------------------------

    def setup(self, players: list[str], options: dict[str, Any]) -> PeanutsState:
        """A new game: the first round's deal is done and each seat must tap its Role."""
        names = check_players(players, self.data.min_players, self.data.max_players)
        options = dict(options or {})
        unknown = sorted(set(options) - {"start", "target"})
        if unknown:
            raise GameError(f"Unknown option {unknown[0]!r}: the options are 'start' and 'target'.")
        start = seat_of(options, len(names), "start") if "start" in options else 0
        target = options.get("target", self.rules.targets[len(names)])
        if isinstance(target, bool) or not isinstance(target, int) or target < 1:
            raise GameError("'target' must be a whole number of Peanut Points, 1 or more.")
        state = PeanutsState(players=names, target=target, scores=[0] * len(names))
        deal(self.rules, state, start)
        return state

    # Applying inputs -------------------------------------------------------

    def _apply(self, state: PeanutsState, event: Event) -> list[Cue]:
        if state.status is Status.GAME_OVER:
            raise GameError("The game is over.")
        cues: list[Cue] = []
        if state.claim is not None:
            on_claim(self, state, event, cues)
        elif event["type"] == "claim-family":
            start_claim(self, state, event, cues)
        else:
            step = state.steps[0]
            STEPS[step.kind](self, state, step, event, cues)
        if state.status is Status.PLAYING and not state.steps:
            end_turn(state, cues)
        self._tell(state, cues)
        return cues

    def _tell(self, state: PeanutsState, cues: list[Cue]) -> None:
        """Log what `cues` told the table (public: no cue names a hidden card); a round's result
        with its number and the winning hand, as shown at the showdown."""
        for cue in cues:
            if cue.name == "round-won":
                round_number = state.rounds[-1]["round"]
                state.log.append(sentence(f"Round {round_number} won: {cue.text}"))
                state.log += self._winning_hands(state, state.rounds[-1]["winners"])
            else:
                state.log += told([cue])

    def _winning_hands(self, state: PeanutsState, winners: list[int]) -> list[str]:
        """The winners' Role and shown card (the showdown shows both to everybody)."""
        lines = []
        for seat in winners:
            role, card = state.roles[seat], state.shown.get(seat)
            if role is not None and card is not None:
                names = (self.data.cards[role].name, self.data.cards[card].name)
                lines.append(f"Winning hand: {state.players[seat]}'s {names[0]} (Role) and {names[1]}.")
        return lines


# Who answers each step. Every StepKind has a handler (a test checks it).
STEPS: dict[StepKind, StepHandler] = {
    StepKind.REVEAL: on_reveal,
    StepKind.DRAW: on_draw,
    StepKind.ACT: on_act,
    StepKind.TARGET: on_target,
    StepKind.TRADE: on_trade,
    StepKind.DIRECTION: on_direction,
    StepKind.FACE_DOWN: on_face_down,
    StepKind.TAKE_BACK: on_take_back,
    StepKind.SPY_FOUND: on_spy_found,
    StepKind.ASSASSIN_CHECK: on_assassin_check,
    StepKind.ELIMINATE: on_eliminate,
    StepKind.AGENT_DISCARD: on_agent_discard,
    StepKind.SEER_DRAW: on_seer_draw,
    StepKind.INFORMANT_DRAW: on_informant_draw,
    StepKind.SPY_SWAP: on_spy_swap,
    StepKind.SHOWDOWN: on_showdown,
    StepKind.FLIP: on_flip,
    StepKind.ROUND_OVER: on_round_over,
}
