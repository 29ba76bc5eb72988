"""The Mission for Peanuts engine: setup, the steps of a turn, the claim and the end of a round.

Each step of the turn's queue (`companion.games.peanuts.state`) is answered by one handler, found in
`STEPS` by its `StepKind`; each Role's ASSIST and DEPLOY by one method, found in `ASSIST` and
`DEPLOY` by its role. Inputs are listed in `companion.games.peanuts` and docs/rules/peanuts.md.
"""

from __future__ import annotations

from collections.abc import Callable
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
from companion.games.catalog import Card, GameData
from companion.games.peanuts import view
from companion.games.peanuts.rules import FAMILY, PeanutsRules, parse_rules
from companion.games.peanuts.showdown import rank
from companion.games.peanuts.state import (
    CLAIM_STEPS,
    Discard,
    PeanutsState,
    Step,
    StepKind,
    active,
    clockwise,
    could_hold,
    family_unreachable,
    immune,
    listing,
    next_active,
    pickable,
    place,
    role_at,
    spy_unreachable,
)


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
        return view.prompt(self.rules, state)

    def public_view(self, state: PeanutsState) -> dict[str, Any]:
        return view.public_view(self.rules, state, self.outcome(state))

    # Setup and rounds ------------------------------------------------------

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
        self._deal(state, start)
        return state

    def _deal(self, state: PeanutsState, start: int) -> None:
        """A round's setup: 2 cards each (the Spy never dealt), one of them face down as the Role."""
        n = len(state.players)
        state.status = Status.SETUP
        state.start = state.turn = start
        state.set_aside = self.rules.set_aside_card if self.rules.sets_aside(n) else None
        state.deck = self.rules.deck_size(n)
        state.roles = [None] * n
        state.piles = [[] for _ in range(n)]
        state.hands = [1] * n
        state.may_hold_spy = [False] * n  # the Spy is never dealt
        state.eliminated = [False] * n
        state.shown = {}
        state.claim = None
        state.extra_turn = False
        state.result = None
        state.steps = [Step(StepKind.REVEAL, seat) for seat in clockwise(n, start)]

    def _begin_turn(self, state: PeanutsState, seat: int, *, extra: bool = False) -> None:
        state.turn = seat
        state.turns += 1
        state.steps = [Step(StepKind.DRAW, seat, {"extra": extra})]

    def _end_turn(self, state: PeanutsState, cues: list[Cue]) -> None:
        """The turn's queue is empty: showdown if the deck is out, else the next (or extra) turn."""
        extra, state.extra_turn = state.extra_turn, False
        if state.deck == 0:
            self._start_showdown(state, cues)
        elif extra and not state.eliminated[state.turn]:
            cues.append(Cue("extra-turn", state.turn, f"{state.players[state.turn]} takes another turn."))
            self._begin_turn(state, state.turn, extra=True)
        else:
            self._begin_turn(state, next_active(state, state.turn))

    def _win_round(self, state: PeanutsState, winners: list[int], reason: str, cues: list[Cue]) -> None:
        """Score the round; end the game if somebody reached the target."""
        for seat in winners:
            state.scores[seat] += 1
        state.rounds.append({"round": state.round, "winners": list(winners), "reason": reason})
        state.claim = None
        state.steps = []
        cues.append(Cue("round-won", winners[0] if len(winners) == 1 else None, reason, {"winners": winners}))
        champions = [s for s, points in enumerate(state.scores) if points >= state.target]
        if champions:
            state.status = Status.GAME_OVER
            state.winners = champions
            names = listing([state.players[s] for s in champions])
            cues.append(
                Cue("game-won", champions[0] if len(champions) == 1 else None, f"{names} won the game!")
            )
            return
        # The winner starts the next round; of tied winners, the first clockwise from the player who
        # ended the round (see docs/rules/peanuts.md).
        n = len(state.players)
        state.start = next(s for s in clockwise(n, state.turn + 1) if s in winners)
        state.steps = [Step(StepKind.ROUND_OVER, None)]

    # ------------------------------------------------------------------ what the table knows

    # Everything the table may be told (prompt, cue, refusal) is decided from what the whole table
    # sees. The face-down cards the companion recorded never decide anything but the showdown's
    # discard count: a tap of one is taken as proof that the record was wrong, never refused.

    def _unplaced(self, state: PeanutsState, event: Event) -> Card:
        """The tapped card, refused if the table sees it somewhere else.

        A card the companion recorded face down is accepted: the physical card is the truth, so the
        face-down card is another one and its record becomes unknown (asked at the showdown if the
        discard piles decide). Refusing would tell the table where that card lies."""
        card = self.card(event)
        where = place(state, card.id)
        if where is not None:
            raise GameError(f"{self.card_label(card)} is {where}: it cannot be here.")
        for pile in state.piles:
            for discard in pile:
                if discard.card == card.id:
                    discard.card = None
        return card

    def _discard_face_up(self, state: PeanutsState, seat: int, card_id: str, cues: list[Cue]) -> None:
        """A card goes face up to `seat`'s pile, except the Spy, which goes back into the deck."""
        if self.rules.role(card_id) == "spy":
            state.deck += 1
            cues.append(
                Cue("shuffle-in", seat, "The Spy goes back into the deck: shuffle it in.", {"card": card_id})
            )
        else:
            state.piles[seat].append(Discard(card_id, True))

    # ------------------------------------------------------------------ applying inputs

    def _apply(self, state: PeanutsState, event: Event) -> list[Cue]:
        if state.status is Status.GAME_OVER:
            raise GameError("The game is over.")
        cues: list[Cue] = []
        if state.claim is not None:
            self._on_claim(state, event, cues)
        elif event["type"] == "claim-family":
            self._start_claim(state, event, cues)
        else:
            step = state.steps[0]
            STEPS[step.kind](self, state, step, event, cues)
        if state.status is Status.PLAYING and not state.steps:
            self._end_turn(state, cues)
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

    def turn_number(self, state: PeanutsState) -> int:
        return state.turns

    def _refuse(self, state: PeanutsState) -> GameError:
        return GameError(f"Not now. {self.prompt(state).text}")

    def _expect(
        self, state: PeanutsState, step: Step, event: Event, *types: str, by_seat: bool = True
    ) -> None:
        """Refuse an input of another type, or (`by_seat`: its "seat" names who answers rather than
        whom it picks) from another seat than the one asked."""
        if event["type"] not in types:
            raise self._refuse(state)
        if not by_seat or step.seat is None or "seat" not in event:
            return
        if seat_of(event, len(state.players)) != step.seat:
            raise GameError(f"It is {state.players[step.seat]}'s move. {self.prompt(state).text}")

    def _flag(self, event: Event, key: str) -> bool:
        value = event.get(key)
        if not isinstance(value, bool):
            raise GameError(f"'{key}' must be true or false.")
        return value

    # Setup -----------------------------------------------------------------

    def _on_reveal(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        if event["type"] != "tap":
            raise self._refuse(state)
        seat = seat_of(event, len(state.players)) if "seat" in event else step.seat
        assert seat is not None
        if state.roles[seat] is not None:
            raise GameError(f"{state.players[seat]} has already shown their Role.")
        card = self._unplaced(state, event)
        if self.rules.role(card.id) == "spy":
            raise GameError("The Spy is never dealt: it went back into the deck after the deal.")
        state.roles[seat] = card.id
        state.steps = [s for s in state.steps if s.seat != seat]
        cues.append(
            Cue("card-revealed", seat, f"{state.players[seat]}'s Role: {card.name}", {"card": card.id})
        )
        if not state.steps:
            state.status = Status.PLAYING
            self._begin_turn(state, state.start)

    # A turn ----------------------------------------------------------------

    def _on_draw(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "draw")
        if state.deck == 0:
            raise GameError("The deck is empty: there is nothing to draw.")
        seat = state.turn
        state.deck -= 1
        state.hands[seat] += 1
        state.may_hold_spy[seat] = True
        state.steps[0] = Step(StepKind.ACT, seat)
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} draws a card."))

    def _on_act(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap", "assist", "deploy")
        seat = state.turn
        if event["type"] == "tap":
            card = self._unplaced(state, event)
            step.info["card"] = card.id
            cues.append(Cue("card-accepted", seat, f"{state.players[seat]} plays the {card.name}."))
            return
        card_id = step.info.get("card")
        if card_id is None:
            raise GameError("First tap the card you play.")
        card = self.rules.cards[card_id]
        state.steps.pop(0)
        state.hands[seat] -= 1
        name = state.players[seat]
        if event["type"] == "assist":
            self._discard_face_up(state, seat, card_id, cues)
            cues.append(
                Cue(
                    "card-accepted",
                    seat,
                    f"{name} discards the {card.name} for its ASSIST.",
                    {"card": card_id},
                )
            )
            self._run(ASSIST, self.rules.role(card_id), state, seat, cues)
        else:
            old = state.roles[seat]
            assert old is not None
            state.roles[seat] = card_id
            self._discard_face_up(state, seat, old, cues)
            cues.append(
                Cue(
                    "card-revealed", seat, f"{name} deploys the {card.name} as their Role.", {"card": card_id}
                )
            )
            self._run(DEPLOY, self.rules.role(card_id), state, seat, cues)

    def _run(
        self, table: dict[str, RoleAction], role: str, state: PeanutsState, seat: int, cues: list[Cue]
    ) -> None:
        """Carry out `role`'s ASSIST or DEPLOY (`table`); a role without one does nothing."""
        action = table.get(role)
        if action is not None:
            action(self, state, seat, cues)

    def _void(self, state: PeanutsState, seat: int, why: str, cues: list[Cue]) -> None:
        """The FAQ: an action that cannot be carried out in full is ignored as a whole."""
        cues.append(Cue("card-accepted", seat, f"Nothing happens: {why}.", {"void": True}))

    # ASSIST actions --------------------------------------------------------

    def _telepath_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        state.extra_turn = True
        name = state.players[seat]
        cues.append(Cue("card-accepted", seat, f"Everyone else shows {name} their hand; {name} plays again."))

    def _seer_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        if state.deck == 0:
            self._void(state, seat, "the deck is empty", cues)
            return
        state.steps.insert(0, Step(StepKind.FACE_DOWN, seat, {"look": min(3, state.deck)}))

    def _informant_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        seats = pickable(self.rules, state, seat, "trade", self_ok=True)
        if len(seats) < 2:
            self._void(state, seat, "fewer than two players can trade hands", cues)
            return
        state.steps.insert(0, Step(StepKind.TRADE, seat, {"seats": seats}))

    def _handler_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        state.steps.insert(0, Step(StepKind.DIRECTION, seat))

    def _agent_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        seats = pickable(self.rules, state, seat, "discard", self_ok=False)
        if not seats:
            self._void(state, seat, "no other player can be made to discard their hand", cues)
        elif state.deck == 0:
            self._void(state, seat, "the deck is empty, so the Agent cannot draw", cues)
        else:
            state.steps.insert(0, Step(StepKind.TARGET, seat, {"effect": "agent", "seats": seats}))

    def _secret_police_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        seats = pickable(self.rules, state, seat, "secret-police", self_ok=False)
        if not seats:
            self._void(state, seat, "no other player can be picked by the Secret Police", cues)
            return
        state.steps.insert(0, Step(StepKind.TARGET, seat, {"effect": "secret-police", "seats": seats}))

    # DEPLOY actions --------------------------------------------------------

    def _spy_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        if state.deck == 0:
            self._void(state, seat, "the deck is empty, so the Spy stays", cues)
            return
        state.steps.insert(0, Step(StepKind.SPY_SWAP, seat))

    def _seer_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        count = min(2, state.deck)
        if count == 0:
            self._void(state, seat, "the deck is empty", cues)
            return
        state.deck -= count
        state.hands[seat] += count
        state.may_hold_spy[seat] = True
        state.steps.insert(0, Step(StepKind.SEER_DRAW, seat, {"count": count}))

    def _informant_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        if state.deck == 0:
            self._void(state, seat, "the deck is empty", cues)
            return
        # The player draws the top card; until they put a card back on top (`done`) they hold Role +
        # 2 cards. The FAQ counts this DEPLOY as a draw, but with the Informant as Role two cards
        # cannot make the family, so no claim is offered here (see `family_unreachable`).
        state.deck -= 1
        state.hands[seat] += 1
        state.may_hold_spy[seat] = True
        state.steps.insert(0, Step(StepKind.INFORMANT_DRAW, seat))
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} draws the top card."))

    def _handler_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        if not any(state.piles):
            self._void(state, seat, "no discard pile holds a card", cues)
            return
        state.steps.insert(0, Step(StepKind.TAKE_BACK, seat))

    def _agent_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        seats = [s for s in active(state) if s != seat and role_at(self.rules, state, s) in ASSIST]
        if not seats:
            self._void(state, seat, "no other player's Role has an ASSIST", cues)
            return
        state.steps.insert(0, Step(StepKind.TARGET, seat, {"effect": "agent-deploy", "seats": seats}))

    # Answers to the steps --------------------------------------------------

    def _on_target(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "target", by_seat=False)
        seat = state.turn
        target = seat_of(event, len(state.players))
        effect = step.info["effect"]
        if target not in step.info["seats"]:
            raise GameError(self._why_not(state, seat, target, effect))
        state.steps.pop(0)
        name, other = state.players[seat], state.players[target]
        cues.append(Cue("card-accepted", target, f"{name} picks {other}."))
        if effect == "agent":
            state.deck -= 1  # the Agent's player draws first (safe, even the Assassin)
            state.hands[seat] += 1
            state.may_hold_spy[seat] = True
            state.steps.insert(0, Step(StepKind.AGENT_DISCARD, target, {"by": seat}))
        elif effect == "secret-police":
            state.steps.insert(0, Step(StepKind.SPY_FOUND, seat, {"target": target}))
        elif effect == "handler-trade":
            # The hand card goes to the deck, the top card to the hand: the deck count stays.
            state.may_hold_spy[target] = True
            state.steps[0:0] = self._assassin_checks(state, [target])
        else:  # "agent-deploy": the ASSIST of the picked player's Role, carried out by `seat`
            role_card = state.roles[target]
            assert role_card is not None
            self._run(ASSIST, self.rules.role(role_card), state, seat, cues)

    def _why_not(self, state: PeanutsState, seat: int, target: int, effect: str) -> str:
        name = state.players[target]
        if state.eliminated[target]:
            return f"{name} is out of this round."
        if target == seat:
            return "You must pick another player."
        role = state.roles[target]
        role_name = self.rules.name(role) if role else "?"
        if effect == "agent-deploy":
            return f"{name}'s Role ({role_name}) has no ASSIST to use."
        return f"{name}'s Role ({role_name}) protects them from that."

    def _assassin_checks(self, state: PeanutsState, seats: list[int]) -> list[Step]:
        """Ask each player who received a card whether it was the Assassin (a Telepath Role is safe)."""
        return [
            Step(StepKind.ASSASSIN_CHECK, s) for s in seats if not immune(self.rules, state, s, "assassin")
        ]

    def _on_trade(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "trade")
        seats = event.get("seats")
        if not (isinstance(seats, list) and len(seats) == 2):
            raise GameError("'seats' must list the two players who trade hands.")
        a, b = (seat_of({"seat": s}, len(state.players)) for s in seats)
        if a == b:
            raise GameError("Two different players must trade hands.")
        for s in (a, b):
            if s not in step.info["seats"]:
                raise GameError(self._why_not(state, -1, s, "trade"))
        state.steps.pop(0)
        state.hands[a], state.hands[b] = state.hands[b], state.hands[a]
        state.may_hold_spy[a], state.may_hold_spy[b] = state.may_hold_spy[b], state.may_hold_spy[a]
        cues.append(
            Cue("card-accepted", state.turn, f"{state.players[a]} and {state.players[b]} trade hands.")
        )
        state.steps[0:0] = self._assassin_checks(state, [a, b])

    def _on_direction(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "direction")
        direction = event.get("direction")
        if direction not in ("left", "right"):
            raise GameError('\'direction\' must be "left" or "right".')
        seats = active(state)
        shift = 1 if direction == "left" else -1
        moved = {seats[(k + shift) % len(seats)]: state.roles[s] for k, s in enumerate(seats)}
        for s, role in moved.items():
            state.roles[s] = role
        state.steps.pop(0)
        cues.append(Cue("card-accepted", state.turn, f"Every Role moves one seat to the {direction}."))

    def _on_face_down(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        seat = state.turn
        card = self._unplaced(state, event)
        state.steps.pop(0)
        state.deck -= 1
        state.piles[seat].append(Discard(card.id, False))
        # No name, no id: the whole table hears this cue.
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} discards a card face down."))

    def _taken_back(self, state: PeanutsState, event: Event) -> tuple[int, int]:
        """The discarded card the Handler picks, as (owner, index in the pile)."""
        n = len(state.players)
        if event["type"] == "tap":  # a face-up card only: a face-down one is picked by its number
            card = self.card(event)
            found = [
                (s, i)
                for s in range(n)
                for i, d in enumerate(state.piles[s])
                if d.face_up and d.card == card.id
            ]
            if not found:
                raise GameError("Tap a card lying face up in a discard pile, or pick a card by its number.")
            return found[0]
        owner = seat_of(event, n)
        index = event.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(state.piles[owner]):
            raise GameError(f"{state.players[owner]}'s discard pile has no card number {index}.")
        return owner, index

    def _on_take_back(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "take-back", "tap", by_seat=event["type"] == "tap")
        owner, index = self._taken_back(state, event)
        discard = state.piles[owner].pop(index)
        state.deck += 1
        state.steps.pop(0)
        if discard.face_up and discard.card is not None:
            what, data = f"the {self.rules.name(discard.card)}", {"card": discard.card}
        else:
            what, data = "a face-down card", {}
        cues.append(
            Cue(
                "shuffle-in",
                owner,
                f"{what.capitalize()} from {state.players[owner]}'s pile goes into the deck: shuffle it in.",
                data,
            )
        )
        seats = pickable(self.rules, state, state.turn, "trade", self_ok=True)
        state.steps.insert(0, Step(StepKind.TARGET, state.turn, {"effect": "handler-trade", "seats": seats}))

    def _on_spy_found(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "spy-found")
        found = self._flag(event, "found")
        target = step.info["target"]
        if found and not could_hold(self.rules, state, "spy"):  # only what everyone sees, see `_place`
            raise GameError("The Spy cannot be in that hand: it is in sight on the table.")
        why = spy_unreachable(state, target)
        if found and why:
            raise GameError(f"{why}.")
        state.steps.pop(0)
        if found:
            state.extra_turn = True
            state.steps.insert(0, Step(StepKind.ELIMINATE, target, {"role": "spy"}))
            cues.append(
                Cue(
                    "card-accepted",
                    target,
                    f"The Secret Police found the Spy: {state.players[target]} is out.",
                )
            )
        else:
            cues.append(Cue("card-accepted", target, "No Spy there."))

    def _on_assassin_check(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "assassin", "tap")
        if event["type"] == "assassin" and not self._flag(event, "received"):
            state.steps.pop(0)
            cues.append(Cue("card-accepted", step.seat, "No Assassin."))
            return
        if not could_hold(self.rules, state, "assassin"):  # only what everyone sees, see `_place`
            raise GameError("No Assassin can be in that hand: every Assassin is in sight on the table.")
        state.steps[0] = Step(StepKind.ELIMINATE, step.seat, {"role": "assassin"})
        if event["type"] == "tap":  # the tap of the Assassin is the answer and the discard at once
            self._on_eliminate(state, state.steps[0], event, cues)

    def _on_eliminate(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        seat = step.seat
        assert seat is not None
        card = self._unplaced(state, event)
        wanted = step.info["role"]
        if self.rules.role(card.id) != wanted:
            raise GameError(
                f"{state.players[seat]} must tap their hand card: the {self.rules.role_names[wanted]}."
            )
        state.steps.pop(0)
        state.hands[seat] = 0
        self._discard_face_up(state, seat, card.id, cues)
        state.eliminated[seat] = True
        cues.append(
            Cue("player-eliminated", seat, f"{state.players[seat]} is out of this round.", {"card": card.id})
        )
        left = active(state)
        if len(left) == 1:
            self._win_round(state, left, f"{state.players[left[0]]} is the last player standing.", cues)

    def _on_agent_discard(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        target, by = step.seat, step.info["by"]
        assert target is not None
        card = self._unplaced(state, event)
        state.steps.pop(0)
        state.hands[target] -= 1
        self._discard_face_up(state, target, card.id, cues)
        # Then the target takes one card of the Agent player's hand: that one may be the Assassin.
        state.hands[target] += 1
        state.hands[by] -= 1
        state.may_hold_spy[target] = state.may_hold_spy[by]
        cues.append(
            Cue(
                "card-accepted",
                target,
                f"{state.players[target]} discards the {card.name}, takes a card from {state.players[by]}.",
                {"card": card.id},
            )
        )
        state.steps[0:0] = self._assassin_checks(state, [target])

    def _on_seer_draw(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "done")
        count = step.info["count"]
        state.deck += count
        state.hands[state.turn] -= count
        state.steps.pop(0)
        cues.append(Cue("card-accepted", state.turn, f"{count} card(s) go under the deck."))

    def _on_informant_draw(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "done")
        state.deck += 1
        state.hands[state.turn] -= 1
        state.steps.pop(0)
        cues.append(Cue("card-accepted", state.turn, "A card goes back on top of the deck."))

    def _on_spy_swap(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        seat = state.turn
        card = self._unplaced(state, event)
        spy = state.roles[seat]
        state.roles[seat] = card.id  # the deck gives one card and takes the Spy: its count stays
        state.steps.pop(0)
        cues.append(Cue("shuffle-in", seat, "The Spy goes into the deck: shuffle it in.", {"card": spy}))
        cues.append(
            Cue("card-revealed", seat, f"{state.players[seat]}'s new Role: {card.name}", {"card": card.id})
        )

    # The end of a round ----------------------------------------------------

    def _start_showdown(self, state: PeanutsState, cues: list[Cue]) -> None:
        n = len(state.players)
        state.steps = [
            Step(StepKind.SHOWDOWN, s) for s in clockwise(n, state.turn + 1) if not state.eliminated[s]
        ]
        cues.append(Cue("showdown", None, "The deck is empty: everyone still in shows their hand."))

    def _on_showdown(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        if event["type"] != "tap":
            raise self._refuse(state)
        seat = seat_of(event, len(state.players)) if "seat" in event else step.seat
        if seat not in [s.seat for s in state.steps]:
            raise GameError("That player is not showing a hand now.")
        assert seat is not None
        card = self._unplaced(state, event)
        state.shown[seat] = card.id
        state.steps = [s for s in state.steps if s.seat != seat]
        cues.append(
            Cue("card-revealed", seat, f"{state.players[seat]} shows the {card.name}.", {"card": card.id})
        )
        if not state.steps:
            self._settle_showdown(state, cues)

    def _settle_showdown(self, state: PeanutsState, cues: list[Cue]) -> None:
        """Rank the shown hands. If the discard piles decide and a pile holds a face-down card whose
        record proved wrong (`_unplaced`), its owner first turns it over and taps it (`flip`)."""
        result = rank(self.rules, state)
        flips = [
            Step(StepKind.FLIP, seat, {"index": index})
            for seat in result["piles_counted"]
            for index, discard in enumerate(state.piles[seat])
            if discard.card is None
        ]
        if flips:
            state.steps = flips
            return
        state.result = result
        self._win_round(state, result["winners"], result["reason"], cues)

    def _on_flip(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        seat, index = step.seat, step.info["index"]
        assert seat is not None
        card = self._unplaced(state, event)
        state.piles[seat][index].card = card.id  # it stays a back on the scoreboard: only totals show
        state.steps.pop(0)
        cues.append(
            Cue("card-accepted", seat, f"{state.players[seat]}'s face-down card #{index + 1} is counted.")
        )
        if not state.steps:
            self._settle_showdown(state, cues)

    def _on_round_over(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "next-round")
        state.round += 1
        self._deal(state, state.start)
        cues.append(Cue("card-accepted", None, f"Round {state.round}: show your Roles."))

    # Finding the Family ----------------------------------------------------

    def _start_claim(self, state: PeanutsState, event: Event, cues: list[Cue]) -> None:
        step = state.steps[0] if state.steps else None
        if step is None or step.kind not in CLAIM_STEPS:
            raise GameError(
                "Finding the Family can only be claimed by the current player right after a draw."
            )
        if "seat" in event and seat_of(event, len(state.players)) != state.turn:
            raise GameError(f"Only {state.players[state.turn]} has just drawn.")
        why = family_unreachable(self.rules, state, state.turn)
        if why:
            raise GameError(f"Finding the Family cannot succeed now: {why}.")
        state.claim = []
        cues.append(
            Cue("card-accepted", state.turn, f"{state.players[state.turn]} claims Finding the Family!")
        )

    def _on_claim(self, state: PeanutsState, event: Event, cues: list[Cue]) -> None:
        seat = state.turn
        name = state.players[seat]
        if event["type"] == "cancel-claim":
            state.claim = None
            cues.append(Cue("card-accepted", seat, f"{name} withdraws the claim."))
            return
        if event["type"] != "tap":
            raise self._refuse(state)
        if "seat" in event and seat_of(event, len(state.players)) != seat:
            raise GameError(f"Only {name} taps the cards of the claim.")
        assert state.claim is not None
        # The cards of a claim come from a hidden hand: until the third one wins, nothing the table
        # is told names them (a refusal only names a card everyone sees elsewhere). A card recorded
        # face down is not refused: the physical card is the truth (see `_unplaced`).
        card = self.card(event)
        own_role = state.roles[seat]
        where = None if card.id == own_role else place(state, card.id)
        if where is not None:
            raise GameError(f"False claim: {self.card_label(card)} is {where}.")
        role = self.rules.role(card.id)
        if role not in FAMILY or any(self.rules.role(c) == role for c in state.claim):
            raise GameError("False claim: tap one Spy, one Telepath and one Assassin.")
        from_hand = sum(1 for c in [*state.claim, card.id] if c != own_role)
        if from_hand > state.hands[seat]:
            raise GameError(f"False claim: {name} holds only {state.hands[seat]} card(s) besides their Role.")
        state.claim.append(card.id)
        tapped = len(state.claim)
        cues.append(Cue("card-accepted", seat, f"{name}: {tapped} of 3 cards tapped.", {"tapped": tapped}))
        if tapped == 3:
            cards = list(state.claim)  # the round is won: all three are shown now
            cues.append(Cue("family-found", seat, f"{name} brought the Forgers together!", {"cards": cards}))
            self._win_round(
                state, [seat], f"{name} found the family: the Spy, the Telepath and the Assassin.", cues
            )

    # ------------------------------------------------------------------ what the table sees


StepHandler = Callable[[Peanuts, PeanutsState, Step, Event, list[Cue]], None]
RoleAction = Callable[[Peanuts, PeanutsState, int, list[Cue]], None]

# Who answers each step. Every StepKind has a handler (a test checks it).
STEPS: dict[StepKind, StepHandler] = {
    StepKind.REVEAL: Peanuts._on_reveal,
    StepKind.DRAW: Peanuts._on_draw,
    StepKind.ACT: Peanuts._on_act,
    StepKind.TARGET: Peanuts._on_target,
    StepKind.TRADE: Peanuts._on_trade,
    StepKind.DIRECTION: Peanuts._on_direction,
    StepKind.FACE_DOWN: Peanuts._on_face_down,
    StepKind.TAKE_BACK: Peanuts._on_take_back,
    StepKind.SPY_FOUND: Peanuts._on_spy_found,
    StepKind.ASSASSIN_CHECK: Peanuts._on_assassin_check,
    StepKind.ELIMINATE: Peanuts._on_eliminate,
    StepKind.AGENT_DISCARD: Peanuts._on_agent_discard,
    StepKind.SEER_DRAW: Peanuts._on_seer_draw,
    StepKind.INFORMANT_DRAW: Peanuts._on_informant_draw,
    StepKind.SPY_SWAP: Peanuts._on_spy_swap,
    StepKind.SHOWDOWN: Peanuts._on_showdown,
    StepKind.FLIP: Peanuts._on_flip,
    StepKind.ROUND_OVER: Peanuts._on_round_over,
}

# Each Role's ASSIST and DEPLOY. A role not listed has none: the Spy and the Assassin are discarded
# with no ASSIST; three DEPLOYs only protect (see `IMMUNE_TO`).
ASSIST: dict[str, RoleAction] = {
    "telepath": Peanuts._telepath_assist,
    "seer": Peanuts._seer_assist,
    "informant": Peanuts._informant_assist,
    "handler": Peanuts._handler_assist,
    "agent": Peanuts._agent_assist,
    "secret-police": Peanuts._secret_police_assist,
}
DEPLOY: dict[str, RoleAction] = {
    "spy": Peanuts._spy_deploy,
    "seer": Peanuts._seer_deploy,
    "informant": Peanuts._informant_deploy,
    "handler": Peanuts._handler_deploy,
    "agent": Peanuts._agent_deploy,
}
