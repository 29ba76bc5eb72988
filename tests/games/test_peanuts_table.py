"""Mission for Peanuts at the table: every prompt answered with card taps, seat buttons and Next only
(docs/rules/peanuts.md, "At the table").

A seat button posts exactly the `Action.to_event()` of the prompt's one non-confirm action whose
`seat` is that seat (companion/pins/buttons.py), Next the `primary` action's; a tap may carry the
seat of the reader it was made on. `GestureTable` plays the seeded real-card games of
`tests.games.test_peanuts.Table` with those gestures alone, making the same choices with the same
cards, and must end with the same results as the games played with the tablet's actions.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from companion.games.base import Action, GameError, Prompt
from companion.games.peanuts import PeanutsState, StepKind
from tests.games.test_peanuts import DATA, ENGINE, Game, Table, check_hidden_cards, cid, cid_list, role_of

# The steps where a single tap may put a player out or end a round, because the rules make that
# card do it: the hand of an eliminated player (the Assassin received, the Spy found), the last
# hand shown at a showdown or the last card turned over for it, the third card of a claim.
DECISIVE_TAPS = {"eliminate", "assassin-check", "spy-found", "showdown", "flip", "claim"}


def classify(state: PeanutsState, event: dict[str, Any]) -> str:
    """How an input can be given, from the public prompt alone: "tap" (a card tap the prompt
    expects), "button" (a seat button or Next posts exactly this event) or "tablet"."""
    prompt = ENGINE.prompt(state)
    if event["type"] == "tap":
        return "tap" if prompt.tap else "tablet"
    if event in [action.to_event() for action in buttons(prompt).values()]:
        return "button"
    return "tablet"


def buttons(prompt: Prompt) -> dict[int | str, Action]:
    """What each button posts now: the seats' one non-confirm action each, and Next ("next")."""
    found: dict[int | str, Action] = {}
    seats = Counter(a.seat for a in prompt.actions if a.seat is not None and not a.confirm)
    for action in prompt.actions:
        if action.seat is not None and not action.confirm and seats[action.seat] == 1:
            found[action.seat] = action
    primary = [a for a in prompt.actions if a.primary]
    if len(primary) == 1:
        found["next"] = primary[0]
    return found


class GestureTable(Table):
    """The seeded real-card game of `Table`, the same choices and the same cards, each input given
    with a tap, a seat button or Next. `per_seat`: every tap carries the seat of its reader. The
    random generator is drawn exactly as `Table` draws it, so both play the same game."""

    def __init__(self, players: int, seed: int, *, per_seat: bool = False) -> None:
        self.per_seat = per_seat
        self.drawn = False  # the turn's card is drawn, the companion is told by the first play
        self.browsing = False  # the Handler's take-back is under way: the card is already gone
        self.kinds: Counter[str] = Counter()
        self.played: set[tuple[str, str]] = set()  # (role, "assist" | "deploy") played by gestures
        super().__init__(players, seed)

    # The gestures.

    def send(self, event: dict[str, Any]) -> None:
        kind = classify(self.state, event)
        assert kind != "tablet", f"{event} needs the tablet: {ENGINE.prompt(self.state)}"
        self.kinds[kind] += 1
        super().send(event)

    def tap_by(self, seat: int | None, card: str) -> None:
        """A card tapped on `seat`'s reader (per seat) or the shared one."""
        if self.per_seat and seat is not None:
            self.tap(card, seat=seat)
        else:
            self.tap(card)

    def press(self, button: int | str) -> None:
        """A seat button (a seat) or Next ("next"): post what it posts, as companion/pins/buttons.py."""
        action = buttons(ENGINE.prompt(self.state)).get(button)
        assert action is not None, f"button {button} does nothing: {ENGINE.prompt(self.state)}"
        self.send(action.to_event())

    def check(self, cues: list[Any]) -> None:
        if not self.browsing:
            super().check(cues)

    def play(self, limit: int = 5000) -> None:
        while self.state.status != "game-over":
            assert self.inputs < limit, "the game does not end"
            if self.rng.random() < 0.05:
                self.try_the_impossible()
            step = self.state.steps[0]
            kind = "act" if self.drawn else step.kind
            getattr(self, "on_" + kind.replace("-", "_"))(step)

    def loop_turn(self) -> None:
        """What `Table.play` draws between two inputs, where the tablet needs one more input."""
        if self.rng.random() < 0.05:
            self.try_the_impossible()

    # The player's moves.

    def on_reveal(self, step: Any) -> None:
        seat = self.rng.choice([s.seat for s in self.state.steps])
        if not self.per_seat:  # a shared reader: the seats in the order the prompt asks
            seat = self.state.steps[0].seat
        self.roles[seat] = self.chosen[seat]
        self.tap_by(seat, self.chosen[seat])

    def on_showdown(self, step: Any) -> None:
        seat = self.rng.choice([s.seat for s in self.state.steps])
        if not self.per_seat:
            seat = self.state.steps[0].seat
        self.tap_by(seat, self.hands[seat][0])

    def on_draw(self, step: Any) -> None:
        self.draw(self.state.turn)  # the companion hears of it with the turn's first input
        self.drawn = True

    def claim(self) -> bool:
        """As `Table.claim`: the claimer's own seat button, the cards, Next to withdraw."""
        seat = self.state.turn
        cards = self.family(seat)
        offered = buttons(ENGINE.prompt(self.state)).get(seat) is not None
        if not cards:
            part = self.family(seat, partial=True)
            if part and offered and self.rng.random() < 0.2:
                self.press(seat)
                for card in part:
                    self.tap_by(seat, card)
                self.press("next")
            return False
        assert offered, "the family is held, yet the claim is not offered"
        self.press(seat)
        for card in cards:
            self.tap_by(seat, card)
        assert self.state.rounds[-1]["winners"] == [seat]
        self.kinds["family"] += 1
        return True

    def on_act(self, step: Any) -> None:
        self.drawn = False  # whatever is sent next tells the companion of the draw
        if self.claim():
            return
        seat = self.state.turn
        card = self.rng.choice(self.hands[seat])
        how = self.rng.choice(["assist", "deploy"])
        old = self.roles[seat]
        assert old is not None
        self.played.add((role_of(card), how))
        if how == "assist":
            self.tap_by(seat, card)
            self.hands[seat].remove(card)
            self.received = {}
            self.discard_face_up(seat, card)
            self.press("next")
            return
        role_first = self.inputs % 2 == 0  # both orders, without drawing on the generator
        self.tap_by(seat, old if role_first else card)
        self.hands[seat].remove(card)
        self.received = {}
        self.roles[seat] = card
        self.discard_face_up(seat, old)
        if role_of(card) == "informant" and self.deck:
            self.draw(seat)
        if role_of(card) == "seer":
            for _ in range(min(2, len(self.deck))):
                self.draw(seat)
        self.tap_by(seat, card if role_first else old)

    def on_seer_draw(self, step: Any) -> None:
        if self.claim():
            return
        hand = self.hands[self.state.turn]
        for _ in range(step.info["count"]):
            self.deck.insert(0, hand.pop(self.rng.randrange(len(hand))))
        self.press("next")

    def on_informant_draw(self, step: Any) -> None:
        if self.claim():
            return
        hand = self.hands[self.state.turn]
        self.deck.append(hand.pop(self.rng.randrange(len(hand))))
        self.press("next")

    def on_face_down(self, step: Any) -> None:
        card = self.rng.choice(self.deck[-3:])
        self.deck.remove(card)
        self.piles[self.state.turn].append((card, False))
        self.tap_by(self.state.turn, card)

    def on_trade(self, step: Any) -> None:
        pairs = [a for a in ENGINE.legal_actions(self.state) if a.type == "trade"]
        a, b = self.rng.choice(pairs).to_event()["seats"]
        first, second = (a, b) if self.inputs % 2 else (b, a)
        self.press(first)
        self.hands[a], self.hands[b] = self.hands[b], self.hands[a]
        self.received = {a: self.hands[a][0], b: self.hands[b][0]}
        self.press(second)

    def on_direction(self, step: Any) -> None:
        direction = self.pass_roles()
        # The neighbour the Roles move to; with two players left both ways are the same move.
        ways = {a.fields["direction"]: a.seat for a in ENGINE.legal_actions(self.state)}
        neighbour = ways[direction] if ways[direction] is not None else ways["left"]
        assert neighbour is not None
        self.press(neighbour)

    def on_target(self, step: Any) -> None:
        self.press(self.pick_target(step))

    def on_agent_discard(self, step: Any) -> None:
        if self.claim():
            return
        self.tap_by(*self.agent_swap(step))

    def on_spy_found(self, step: Any) -> None:
        target = step.info["target"]
        if not any(role_of(c) == "spy" for c in self.hands[target]):
            self.press("next")
            return
        self.loop_turn()  # the tablet answers, then the hand is tapped: one input more
        self.eliminated_by_tap(target, self.state.turn)

    def on_assassin_check(self, step: Any) -> None:
        got = self.received.get(step.seat)
        if got is None or role_of(got) != "assassin":
            self.press("next")
            return
        if self.rng.random() < 0.5:  # the tablet's "yes", then the tap
            self.loop_turn()
        self.eliminated_by_tap(step.seat, step.seat)

    def eliminated_by_tap(self, seat: int, reader: int) -> None:
        """The hand card of a player out (the Assassin received, the Spy found), tapped at once."""
        assert len(self.hands[seat]) == 1
        card = self.hands[seat].pop()
        self.discard_face_up(seat, card)
        self.out[seat] = True
        self.tap_by(reader, card)

    def on_eliminate(self, step: Any) -> None:
        self.eliminated_by_tap(step.seat, step.seat)

    def on_spy_swap(self, step: Any) -> None:
        seat = self.state.turn
        top, spy = self.deck.pop(), self.roles[seat]
        assert spy is not None
        self.roles[seat] = top
        self.shuffle_in(spy)
        self.tap_by(seat, top)

    def on_take_back(self, step: Any) -> None:
        """The owner's seat button, Next to the card, the owner's button again (or a face-up tap)."""
        actions = [a for a in ENGINE.legal_actions(self.state) if a.type == "take-back"]
        event = self.rng.choice(actions).to_event()
        owner, index = event["seat"], event["index"]
        card, up = self.piles[owner].pop(index)
        self.shuffle_in(card)
        if up and self.rng.random() < 0.5:
            self.tap_by(self.state.turn, card)
            return
        self.browsing = True
        self.press(owner)
        while self.state.steps[0].info["index"] != index:
            self.press("next")
        self.browsing = False
        self.press(owner)

    def on_round_over(self, step: Any) -> None:
        self.deal()
        self.press("next")


class InOrder(Table):
    """`Table` with the Roles and the showdown's hands tapped in the order the prompt asks, as a
    shared reader gives them (the random generator drawn the same)."""

    def on_reveal(self, step: Any) -> None:
        self.rng.choice([s.seat for s in self.state.steps])
        seat = self.state.steps[0].seat
        self.roles[seat] = self.chosen[seat]
        self.tap(self.chosen[seat], seat=seat)

    def on_showdown(self, step: Any) -> None:
        self.rng.choice([s.seat for s in self.state.steps])
        seat = self.state.steps[0].seat
        self.tap(self.hands[seat][0], seat=seat)


class Pad(Game):
    """A scripted game answered at the table: each input must be a tap the prompt expects or what
    a button posts (`press`: a seat, or "next")."""

    def send(self, event: dict[str, Any]) -> list[str]:
        assert classify(self.state, event) != "tablet", (event, ENGINE.prompt(self.state))
        return super().send(event)

    def press(self, button: int | str) -> list[str]:
        action = buttons(ENGINE.prompt(self.state)).get(button)
        assert action is not None, f"button {button} does nothing: {ENGINE.prompt(self.state)}"
        return self.send(action.to_event())

    def pressable(self) -> set[int | str]:
        return set(buttons(ENGINE.prompt(self.state)))


# ---------------------------------------------------------------------- the gestures, one by one


@pytest.mark.rule("PEA-7", "PEA-8")
def test_the_first_play_of_a_turn_implies_its_draw_and_next_plays_the_assist() -> None:
    game = Pad(3, ["informant-1", "seer-1", "handler-1"])
    assert game.prompt["text"] == "Ann: draw a card, then tap the card you play (DEPLOY: your Role too)."
    assert game.prompt["tap"] and game.pressable() == {"next"}  # Next: the draw alone
    game.tap("agent-1")
    assert game.deck == 12 and game.hand_counts() == [2, 1, 1]
    assert game.view["log"][-2:] == ["Ann draws a card.", "Ann plays the Agent."]
    assert (
        game.prompt["text"]
        == "Ann: the Agent: Next for its ASSIST, or tap your Role (Informant) to DEPLOY it."
    )
    game.tap("seer-2")  # another card: the last tap counts
    assert game.press("next") == ["card-accepted"]  # the Seer's ASSIST
    assert game.prompt["step"] == "face-down" and game.pile(0) == [cid("seer-2")]


@pytest.mark.rule("PEA-10")
def test_deploy_is_a_tap_of_the_role_before_or_after_the_new_card() -> None:
    game = Pad(3, ["informant-1", "seer-1", "handler-1"])
    game.tap("informant-1")  # Ann's own Role: the draw, then a DEPLOY
    assert game.deck == 12 and game.prompt["step"] == "act"
    assert (
        game.prompt["text"]
        == "Ann: tap the card you DEPLOY as your new Role (your Informant again: no DEPLOY)."
    )
    game.tap("informant-1")  # not after all
    assert "DEPLOY: tap your Role (Informant) first" in game.prompt["text"] and game.role(0) == cid(
        "informant-1"
    )
    game.tap("informant-1")
    assert "card-revealed" in game.tap("telepath-1")  # the DEPLOY at once: protection only
    assert game.role(0) == cid("telepath-1") and game.pile(0) == [cid("informant-1")]
    assert game.seat == 1 and game.hand_counts() == [1, 1, 1]
    game.tap("agent-2")  # Bob: the card first, then his Role
    cues = game.tap("seer-1")
    assert "card-revealed" in cues and game.role(1) == cid("agent-2") and game.pile(1) == [cid("seer-1")]
    assert game.prompt["step"] == "target"  # the Agent's DEPLOY: whose ASSIST?
    assert game.prompt["text"].endswith("press their seat button.") and game.pressable() == {0, 2}
    game.refused({"type": "tap", "card": cid("handler-1")}, "Not now")  # a Role tapped now means nothing


@pytest.mark.rule("PEA-33")
def test_the_handler_passes_the_roles_towards_the_neighbour_pressed() -> None:
    game = Pad(4, ["informant-1", "seer-1", "agent-1", "telepath-1"])
    game.tap("handler-1")
    game.press("next")
    assert game.prompt["text"] == (
        "Ann: which way do the Roles move? Bob's seat button (left) or Dee's (right)."
    )
    assert game.pressable() == {1, 3}
    game.press(3)  # towards Dee: to the right
    assert [game.role(s) for s in range(4)] == cid_list("seer-1 agent-1 telepath-1 informant-1")


@pytest.mark.rule("PEA-31")
def test_the_informant_trade_is_two_seat_buttons_in_turn() -> None:
    game = Pad(5, ["seer-1", "assassin-1", "telepath-1", "informant-2", "handler-1"])
    game.tap("informant-1")
    game.press("next")
    assert game.pressable() == {0, 2, 3, 4}  # Bob's Assassin Role: he cannot trade
    assert "press the seat buttons of the two players who trade hands (yours too)" in game.prompt["text"]
    game.press(0)
    assert game.prompt["text"] == "Ann: Ann trades with whom? Their seat button (Ann's again: pick again)."
    game.press(0)  # picked no more
    assert game.prompt["step"] == "trade" and "two players" in game.prompt["text"]
    game.press(3)
    game.press(0)  # Dee and Ann trade
    assert game.prompt["step"] == "assassin-check" and game.seat == 0
    assert game.prompt["text"] == "Ann: did you receive the Assassin? If so, tap it; if not, Next."
    game.press("next")
    assert game.seat == 3
    assert "player-eliminated" in game.tap("assassin-2")  # Dee received it
    assert game.view["players"][3]["eliminated"] and game.pile(3) == [cid("assassin-2")]


@pytest.mark.rule("PEA-34")
def test_a_card_is_taken_back_with_its_owners_seat_button_and_next() -> None:
    game = Pad(5, ["informant-1", "seer-1", "assassin-1", "agent-1", "telepath-1"])
    game.tap("seer-2")
    game.press("next")
    game.tap("agent-2")  # face down in Ann's pile
    game.tap("handler-1")
    game.tap("seer-1")  # Bob deploys the Handler: his Seer goes to his pile
    assert game.prompt["step"] == "take-back" and game.pressable() == {0, 1}
    game.press(0)
    assert game.prompt["text"] == (
        "Bob: Ann's pile, card #1 of 2: Seer. Ann's seat button shuffles it back into the deck, "
        "Next shows the next card."
    )
    game.press("next")
    assert "card #2 of 2: face-down card #2." in game.prompt["text"]
    assert game.pile(0) == [cid("seer-2"), None]
    assert "shuffle-in" in game.press(0)
    assert game.pile(0) == [cid("seer-2")] and game.deck == 8
    game.press(3)  # Dee swaps her hand for the top card
    game.press("next")  # no Assassin
    assert game.seat == 2


@pytest.mark.rule("PEA-37")
def test_the_spy_found_is_its_tap_and_next_says_no_spy() -> None:
    game = Pad(3, ["informant-1", "seer-1", "handler-1"], start=1)
    game.tap("secret-police-2")  # Bob looks at Cy's hand
    game.press("next")
    game.press(2)
    assert game.prompt["text"] == "Bob: does Cy hold the Spy? Next."  # Cy's hand is the deal's
    game.refused({"type": "tap", "card": cid("spy-1")}, "Cy cannot hold the Spy")
    game.press("next")
    game.tap("secret-police-3")  # Cy looks at Bob's
    game.press("next")
    game.press(1)
    assert game.prompt["text"] == "Cy: does Bob hold the Spy? If so, tap it; if not, Next."
    game.refused({"type": "tap", "card": cid("agent-1"), "seat": 1}, "Not now")  # only the Spy
    game.refused({"type": "tap", "card": cid("spy-1"), "seat": 0}, "Cy's move")  # Ann's reader
    cues = game.tap("spy-1", seat=1)  # from Bob's reader: found, and his hand discarded
    assert "player-eliminated" in cues and game.view["players"][1]["eliminated"]
    assert game.deck == 12  # the Spy is back in the deck
    assert game.seat == 2 and game.prompt["text"].startswith("Cy: draw a card (extra turn)")


@pytest.mark.rule("PEA-14", "PEA-17", "PEA-21")
def test_a_round_won_by_the_last_player_standing_with_gestures() -> None:
    game = Pad(3, ["informant-1", "seer-1", "handler-1"], start=1)
    for card, target in (("secret-police-2", 2), ("secret-police-3", 1)):
        game.tap(card)
        game.press("next")
        game.press(target)
        game.press("next")
    game.tap("secret-police-1")
    game.press("next")
    game.press(1)
    game.tap("spy-1")  # Bob is out; Ann plays again
    game.tap("informant-2")
    game.press("next")
    game.press(0)
    game.press(2)
    game.press("next")  # Ann: no Assassin
    cues = game.tap("assassin-1")  # Cy's
    assert {"player-eliminated", "round-won"} <= set(cues)
    assert "last player standing" in game.view["rounds"][0]["reason"]
    assert game.prompt["text"].endswith("Next deals round 2: Ann starts.")
    game.press("next")
    assert game.view["round"] == 2 and game.view["status"] == "setup"


@pytest.mark.rule("PEA-14")
def test_finding_the_family_is_the_own_seat_button_then_the_cards() -> None:
    game = Pad(3, ["telepath-1", "handler-1", "agent-1"])
    assert game.pressable() == {0, "next"}  # her Telepath Role: the claim may succeed
    assert game.prompt["text"].endswith("Finding the Family: Ann's seat button, then the three cards.")
    game.press(0)  # the claim implies the draw
    assert game.deck == 12 and game.view["log"][-2:] == [
        "Ann draws a card.",
        "Ann claims Finding the Family!",
    ]
    game.tap("assassin-1")
    assert game.prompt["text"] == (
        "Ann: tap the Spy, the Telepath and the Assassin (1 of 3); Next withdraws the claim."
    )
    game.press("next")
    assert game.view["claim"] is None and game.prompt["step"] == "act" and game.pressable() == {0}
    game.press(0)
    game.tap("telepath-1")
    game.tap("assassin-1")
    assert "family-found" in game.tap("spy-1")


def results(table: Table) -> dict[str, Any]:
    state = table.state
    return {"rounds": state.rounds, "scores": state.scores, "winners": state.winners, "turns": state.turns}


# Seeded games of every size; the last three end a round with the last player standing.
GAMES = [(players, seed * 10 + players) for players in (3, 4, 5) for seed in range(10)] + [
    (3, 16),
    (3, 18),
    (3, 21),
]


@pytest.mark.rule("PEA-7", "PEA-8", "PEA-10", "PEA-14", "PEA-17", "PEA-18", "PEA-21")
@pytest.mark.parametrize("per_seat", [False, True], ids=["shared-reader", "reader-per-seat"])
def test_whole_games_with_taps_seat_buttons_and_next_only(per_seat: bool) -> None:
    """The seeded games, played with gestures only after the start, end exactly as the same games
    played with the tablet's actions; together they play every Role's ASSIST and DEPLOY and end
    rounds in every way."""
    played: set[tuple[str, str]] = set()
    kinds: Counter[str] = Counter()
    endings: Counter[str] = Counter()
    for players, seed in GAMES:
        tablet = (Table if per_seat else InOrder)(players, seed)
        tablet.play()
        table = GestureTable(players, seed, per_seat=per_seat)
        table.play()
        assert results(table) == results(tablet), (players, seed)
        assert len(table.state.rounds) > 1
        played |= table.played
        kinds += table.kinds
        endings.update(ending(r["reason"]) for r in table.state.rounds)
    roles = {card["role"] for card in DATA.cards.values()}
    assert played == {(role, how) for role in roles for how in ("assist", "deploy")}
    assert kinds["tap"] > 0 and kinds["button"] > 0 and kinds["tablet"] == 0
    assert set(endings) == {"family", "last standing", "showdown"}, endings


def ending(reason: str) -> str:
    if "found the family" in reason:
        return "family"
    return "last standing" if "last player standing" in reason else "showdown"


def test_no_input_of_random_games_needs_the_tablet() -> None:
    """Every input of the gesture games is a tap the prompt expects or a button's event: 0 need the
    tablet. The same games played through the tablet's actions use it (the count says how much)."""
    counted: Counter[str] = Counter()
    by_tablet: Counter[str] = Counter()
    for players, seed in GAMES[::2]:
        table = GestureTable(players, 500 + seed, per_seat=seed % 2 == 1)
        table.play()
        counted += table.kinds
        tablet = Table(players, 500 + seed)
        tablet.play()
        by_tablet.update(classify(entry.before, entry.event) for entry in tablet.log if entry.after)
    assert counted["tablet"] == 0 and counted["tap"] > 1000 and counted["button"] > 300
    assert by_tablet["tablet"] > 0  # "deploy" after a tap, a trade by its pair, a card by its number


# ---------------------------------------------------------------------- no ambiguity, no accident


def random_game(
    rng: random.Random, players: int, limit: int = 600
) -> list[tuple[PeanutsState, dict[str, Any]]]:
    """A random legal game driven by `legal_actions` and by taps of any card (a random seat now and
    then): every input the engine takes, with the state it was given in."""
    state = ENGINE.setup(["Ann", "Bob", "Cy", "Dee", "Eve"][:players], {"start": rng.randrange(players)})
    taken: list[tuple[PeanutsState, dict[str, Any]]] = []
    cards = sorted(DATA.cards)
    while len(taken) < limit and not ENGINE.is_over(state):
        actions = ENGINE.legal_actions(state)
        if actions and (not ENGINE.prompt(state).tap or rng.random() < 0.5):
            event = rng.choice(actions).to_event()
        else:
            event = {"type": "tap", "card": rng.choice(cards)}
            if rng.random() < 0.3:
                event["seat"] = rng.randrange(players)
        try:
            after, _ = ENGINE.apply(state, event)
        except GameError:
            continue
        taken.append((state, event))
        state = after
    return taken


def out_or_won(before: PeanutsState, after: PeanutsState) -> bool:
    return len(after.rounds) > len(before.rounds) or sum(after.eliminated) > sum(before.eliminated)


@pytest.mark.rule("PEA-16", "PEA-27", "PEA-37")
def test_every_prompt_gives_each_button_one_meaning_and_no_press_puts_anyone_out() -> None:
    """Over random legal games and the seeded gesture games: each seat has at most one non-confirm
    action, there is at most one primary, a confirm action is never a button's; and no input but a
    tap at a step where the rules make that card decide (`DECISIVE_TAPS`) ends a round or puts a
    player out."""
    met: set[str] = set()
    inputs: list[tuple[PeanutsState, dict[str, Any]]] = []
    rng = random.Random(21)
    for game in range(20):
        inputs += random_game(rng, 3 + game % 3)
    for players, seed in GAMES[::4]:
        table = GestureTable(players, 900 + seed, per_seat=True)
        table.play()
        inputs += [(entry.before, entry.event) for entry in table.log if entry.after]
    for before, event in inputs:
        prompt = ENGINE.prompt(before)
        met.add(prompt.step or "")
        seats = Counter(a.seat for a in prompt.actions if a.seat is not None and not a.confirm)
        assert all(count == 1 for count in seats.values()), prompt
        assert sum(a.primary for a in prompt.actions) <= 1, prompt
        assert not any(a.confirm and (a.primary or a.seat is not None) for a in prompt.actions), prompt
        after, _ = ENGINE.apply(before, event)
        if out_or_won(before, after):
            assert event["type"] == "tap" and prompt.step in DECISIVE_TAPS, (prompt, event)
        for action in buttons(prompt).values():  # no press of any button does it either
            assert ENGINE.canonical(action.to_event()) == action.to_event()  # the API takes it as it is
            try:
                pressed, _ = ENGINE.apply(before, action.to_event())
            except GameError:
                raise AssertionError(f"{action} is offered but refused") from None
            assert not out_or_won(before, pressed), (prompt, action)
    assert met >= {kind.value for kind in StepKind} - {"flip"} | {"claim"}


def test_hidden_cards_change_nothing_the_gestures_tell() -> None:
    """The secrecy check of tests/games/test_peanuts.py on the gesture games: a face-down card or a
    withdrawn claim's card swapped with another card out of sight, and every view, cue and refusal
    stays the same (the Secret Police's and the Assassin's questions answered by taps included)."""
    seen: Counter[str] = Counter()
    for players, seed in GAMES[:24:2]:
        table = GestureTable(players, 2000 + seed, per_seat=seed % 2 == 0)
        table.play()
        seen += check_hidden_cards(table, random.Random(seed))
    assert seen["swaps"] > 50 and seen["spy-found"] > 0 and seen["assassin-check"] > 0, seen
