"""SPY x FAMILY: Mission for Peanuts through the web API, as the table plays it: Roles shown by
tapping them, cards played by tapping them, choices posted as actions, to a winner with three, four
and five players. Also: refusals journal nothing, undo takes back an elimination, and the live event
stream never names a card that lies face down."""

from __future__ import annotations

import json
from typing import Any

from companion.appliance.daemon import Daemon
from tests.conftest import AUTH, column, open_event_stream, state
from tests.games.test_peanuts import ENGINE, NAMES, Table, X
from tests.games.test_peanuts_table import GestureTable

Cues = list[dict[str, Any]]
Step = tuple[dict[str, Any], list[str]]

# ------------------------------------------------------------------------------------------ helpers


def start(client: Any, players: list[str], **options: Any) -> dict[str, Any]:
    response = client.post(
        "/api/games", json={"game": "peanuts", "players": players, "options": options}, headers=AUTH
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def send(client: Any, step: dict[str, Any], status: int = 200) -> dict[str, Any]:
    """One input: `{"tap": "seer-1"}` (optionally with "seat") goes to /api/taps as
    "peanuts/seer-1", anything else to /api/actions. Checks the status; returns the JSON answer."""
    if "tap" in step:
        body = {"card": f"peanuts/{step['tap']}", **{k: v for k, v in step.items() if k != "tap"}}
        response = client.post("/api/taps", json=body, headers=AUTH)
    else:
        response = client.post("/api/actions", json=step, headers=AUTH)
    assert response.status_code == status, (step, response.get_json())
    return response.get_json()


def play(client: Any, cues: Cues, script: list[Step]) -> dict[str, Any]:
    """Send each input; check the cues it played (leaving out `your-turn`, of which there is at most
    one) and return the last view."""
    view: dict[str, Any] = {}
    for step, expected in script:
        before = len(cues)
        view = send(client, step)
        names = [cue["cue"] for cue in cues[before:]]
        assert names.count("your-turn") <= 1, (step, names)
        assert [n for n in names if n != "your-turn"] == expected, (step, names)
    return view


def tap(card: str, *expected: str, **fields: Any) -> Step:
    return {"tap": card, **fields}, list(expected)


def act(kind: str, *expected: str, **fields: Any) -> Step:
    return {"type": kind, **fields}, list(expected)


def turn(card: str, how: str, *expected: str) -> list[Step]:
    """The current player draws, taps `card` and uses it for its ASSIST or DEPLOY."""
    played = "card-revealed" if how == "deploy" else "card-accepted"
    return [act("draw", "card-accepted"), tap(card, "card-accepted"), act(how, played, *expected)]


def reveal(*cards: str) -> list[Step]:
    return [tap(card, "card-revealed") for card in cards]


def pile(view: dict[str, Any], seat: int) -> list[str | None]:
    """A discard pile as the scoreboard shows it: short ids, None for a face-down card."""
    discards = view["players"][seat]["discards"]
    return [d["card"].removeprefix("peanuts/") if d["face_up"] else None for d in discards]


def journaled(daemon: Daemon) -> int:
    return len(list(daemon.journal.entries()))


def of(cues: Cues, name: str) -> list[dict[str, Any]]:
    return [cue for cue in cues if cue["cue"] == name]


# ------------------------------------------------------------------------------- games to a winner


def test_three_player_game_to_its_winner(client: Any, cues: Cues) -> None:
    """Three rounds to the default target of 3: a showdown decided by the discard piles, Finding the
    Family, and a last player standing."""
    view = start(client, ["Ann", "Bob", "Cy"])
    assert (view["target"], view["deck_count"], view["set_aside"]["card"]) == (3, 13, "peanuts/assassin-2")

    # Round 1: Ann starts. Face-down discards, a Secret Police that finds nobody, an Agent, an extra
    # turn, and the deck runs out.
    view = play(
        client,
        cues,
        [
            *reveal("seer-1", "handler-1", "agent-1"),
            *turn("seer-2", "assist"),
            tap("informant-1", "card-accepted"),  # Ann: face down
            *turn("secret-police-1", "deploy"),  # Bob: the Handler goes to his pile
            *turn("informant-2", "deploy", "card-accepted"),  # Cy draws one...
            act("done", "card-accepted"),  # ...and puts one back on top
            *turn("assassin-1", "assist"),  # Ann: no ASSIST
            *turn("secret-police-2", "assist"),
            act("target", "card-accepted", seat=0),
            act("spy-found", "card-accepted", found=False),
            *turn("secret-police-3", "deploy"),  # Cy
            *turn("informant-3", "deploy", "card-accepted"),  # Ann: the same
            act("done", "card-accepted"),
            *turn("agent-2", "assist"),  # Bob
            act("target", "card-accepted", seat=2),
            tap("handler-3", "card-accepted"),  # Cy discards, takes one of Bob's cards
            act("assassin", "card-accepted", received=False),
            *turn("secret-police-4", "assist"),  # Cy: Bob's Secret Police Role keeps him safe
            act("target", "card-accepted", seat=0),
            act("spy-found", "card-accepted", found=False),
            *turn("telepath-1", "assist", "card-accepted", "extra-turn"),  # Ann
        ],
    )
    assert view["turn"] == 0 and view["prompt"]["step"] == "draw" and view["deck_count"] == 1
    assert pile(view, 0) == ["seer-2", None, "assassin-1", "seer-1", "telepath-1"]
    view = play(client, cues, [*turn("agent-3", "assist", "card-accepted", "showdown")])  # nothing to draw
    assert view["deck_count"] == 0 and view["prompt"]["step"] == "showdown" and view["prompt"]["seat"] == 1
    send(client, {"type": "draw"}, 409)  # the deck is empty: the showdown is on
    view = play(
        client,
        cues,
        [
            tap("spy-1", "card-revealed", seat=1),
            tap("telepath-2", "card-revealed", seat=0),
            tap("handler-2", "card-revealed", "round-won", seat=2),
        ],
    )
    shown = {hand["seat"]: hand for hand in view["showdown"]["hands"]}
    assert [shown[s]["notches"] for s in range(3)] == [5, 5, 7]  # no combination anywhere
    assert [shown[s]["combination"] for s in range(3)] == [None, None, None]
    # Ann and Bob tie on notches; the piles decide, the face-down Informant counted (2+3+2+2+2+3).
    assert [shown[s]["discard_notches"] for s in range(3)] == [14, 10, None]
    assert view["showdown"]["winners"] == [1] and view["showdown"]["decided_by"] == "discards"
    assert column(view, "score") == [0, 1, 0]
    assert view["prompt"]["actions"] == [
        {"type": "next-round", "label": "Deal round 2", "primary": True, "confirm": False}
    ]
    assert of(cues, "round-won")[-1]["data"] == {"winners": [1]}

    # Round 2: Bob (the winner) starts and finds the family at once, his Telepath Role one of them.
    view = play(client, cues, [act("next-round", "card-accepted")])
    assert view["round"] == 2 and view["status"] == "setup" and view["prompt"]["seat"] == 1
    assert view["deck_count"] == 13 and view["showdown"] is None and pile(view, 0) == []
    view = play(
        client,
        cues,
        [
            *reveal("telepath-1", "seer-1", "handler-1"),  # Bob, Cy, Ann
            act("draw", "card-accepted"),
            act("claim-family", "card-accepted"),
            tap("telepath-1", "card-accepted"),
        ],
    )
    assert view["claim"] == {"seat": 1, "tapped": 1} and view["prompt"]["step"] == "claim"
    send(client, {"tap": "seer-1"}, 409)  # Cy's Role: a false claim, and the claim stays open
    view = play(
        client,
        cues,
        [tap("spy-1", "card-accepted"), tap("assassin-1", "card-accepted", "family-found", "round-won")],
    )
    assert column(view, "score") == [0, 2, 0] and view["claim"] is None and view["status"] == "playing"

    # Round 3: Bob's Secret Police finds the Spy in Cy's hand; on his extra turn his Informant makes
    # Ann take the Assassin: he is the last player standing and reaches the target.
    view = play(
        client,
        cues,
        [
            act("next-round", "card-accepted"),
            *reveal("informant-1", "seer-1", "agent-1"),
            *turn("secret-police-2", "assist"),  # Bob: nobody has drawn yet, so no Spy in Cy's hand
            act("target", "card-accepted", seat=2),
            act("spy-found", "card-accepted", found=False),
            *turn("secret-police-3", "assist"),  # Cy
            act("target", "card-accepted", seat=0),
            act("spy-found", "card-accepted", found=False),
            *turn("secret-police-4", "assist"),  # Ann
            act("target", "card-accepted", seat=2),
            act("spy-found", "card-accepted", found=False),
            *turn("secret-police-1", "assist"),  # Bob: Cy has drawn since the deal
            act("target", "card-accepted", seat=2),
            act("spy-found", "card-accepted", found=True),
        ],
    )
    assert view["extra_turn"] and (view["prompt"]["step"], view["prompt"]["seat"]) == ("eliminate", 2)
    view = play(
        client,
        cues,
        [
            tap("spy-1", "shuffle-in", "player-eliminated", "extra-turn"),
            *turn("informant-2", "assist"),
            act("trade", "card-accepted", seats=[0, 1]),
            tap("assassin-1", "player-eliminated", "round-won", "game-won", seat=0),
        ],
    )
    assert view["status"] == "game-over" and view["winners"] == [1]
    assert column(view, "score") == [0, 3, 0]
    assert column(view, "eliminated") == [True, False, True]
    assert [r["winners"] for r in view["rounds"]] == [[1], [1], [1]]
    assert "last player standing" in view["rounds"][-1]["reason"]
    assert view["prompt"]["step"] == "game-over" and view["prompt"]["actions"] == []
    assert [cue["seat"] for cue in of(cues, "player-eliminated")] == [2, 0]
    assert of(cues, "game-won")[0]["text"] == "Bob won the game!"
    assert state(client) == view
    send(client, {"type": "next-round"}, 409)  # the game is over


def test_four_player_game_to_its_winner(daemon: Daemon, client: Any, cues: Cues) -> None:
    """Target 2 (the default with four players): a showdown won on a combination, then Finding the
    Family. One Assassin is set aside all game."""
    view = start(client, ["Ann", "Bob", "Cy", "Dee"])
    assert (view["target"], view["deck_count"], view["set_aside"]["card"]) == (2, 11, "peanuts/assassin-2")
    send(client, {"tap": "assassin-2"}, 409)  # set aside: no Role can be it
    view = play(
        client,
        cues,
        [
            *reveal("informant-1", "seer-1", "handler-1", "assassin-1"),
            *turn("agent-2", "assist"),  # Ann draws the Spy; her Agent has Cy take it
            act("target", "card-accepted", seat=2),
            tap("seer-2", "card-accepted"),  # Cy discards his hand and takes one of Ann's cards
            act("assassin", "card-accepted", received=False),
            *turn("secret-police-1", "assist"),  # Bob finds the Spy in Cy's hand
            act("target", "card-accepted", seat=2),
            act("spy-found", "card-accepted", found=True),
            tap("spy-1", "shuffle-in", "player-eliminated", "extra-turn"),
            *turn("telepath-1", "deploy"),  # Bob's extra turn: the Seer goes to his pile
        ],
    )
    assert column(view, "eliminated") == [False, False, True, False] and view["turn"] == 3
    assert column(view, "protected_from") == [[], ["assassin"], [], ["discard", "trade"]]
    assert view["deck_count"] == 8  # 11, Ann -2 (her draws), Bob -2, the Spy +1
    view = play(
        client,
        cues,
        [
            *turn("agent-3", "assist"),  # Dee: Ann discards, takes one of Dee's cards
            act("target", "card-accepted", seat=0),
            tap("informant-2", "card-accepted"),
            act("assassin", "card-accepted", received=False),
            *turn("informant-3", "assist"),  # Ann: Dee's Assassin Role keeps her out of trades
            act("trade", "card-accepted", seats=[0, 1]),  # Bob's Telepath Role: only Ann is asked
            act("assassin", "card-accepted", received=False),
            act("draw", "card-accepted"),  # Bob
        ],
    )
    # Bob's Telepath Role would need an Assassin: one is Dee's Role, the other set aside.
    assert "claim-family" not in [a["type"] for a in view["prompt"]["actions"]]
    send(client, {"type": "claim-family"}, 409)
    view = play(
        client,
        cues,
        [
            tap("handler-2", "card-accepted"),
            act("deploy", "card-revealed"),
            act("take-back", "shuffle-in", seat=0, index=0),  # Ann's Agent into the deck
            act("target", "card-accepted", seat=0),
            act("assassin", "card-accepted", received=False),
            *turn("secret-police-2", "assist"),  # Dee
            act("target", "card-accepted", seat=1),
            act("spy-found", "card-accepted", found=False),
            *turn("secret-police-3", "deploy"),  # Ann
            *turn("agent-1", "assist"),  # Bob: Ann discards the Telepath
            act("target", "card-accepted", seat=0),
            tap("telepath-2", "card-accepted"),
            act("assassin", "card-accepted", received=False),
        ],
    )
    assert view["deck_count"] == 1 and view["turn"] == 3
    assert pile(view, 0) == ["informant-2", "informant-3", "informant-1", "telepath-2"]
    view = play(client, cues, [*turn("secret-police-4", "deploy", "showdown")])
    assert view["prompt"]["seat"] == 0  # from Dee's left, Cy being out
    view = play(
        client,
        cues,
        [
            tap("spy-1", "card-revealed"),
            tap("agent-2", "card-revealed"),
            tap("handler-3", "card-revealed", "round-won"),
        ],
    )
    result = view["showdown"]
    assert [h["combination"] for h in result["hands"]] == [None, f"Handler {X} Agent", None]
    assert result["winners"] == [1] and result["decided_by"] == "combination"
    assert all(h["discard_notches"] is None for h in result["hands"])  # no pile was counted
    assert column(view, "score") == [0, 1, 0, 0]

    before = journaled(daemon)
    view = play(
        client,
        cues,
        [
            act("next-round", "card-accepted"),
            *reveal("telepath-1", "seer-1", "handler-1", "agent-1"),  # Bob first
            act("draw", "card-accepted"),
            act("claim-family", "card-accepted"),
            tap("spy-1", "card-accepted"),
            tap("telepath-1", "card-accepted"),
            tap("assassin-1", "card-accepted", "family-found", "round-won", "game-won"),
        ],
    )
    assert journaled(daemon) == before + 10
    assert view["status"] == "game-over" and view["winners"] == [1]
    assert column(view, "score") == [0, 2, 0, 0]
    assert [r["winners"] for r in view["rounds"]] == [[1], [1]]
    assert view["set_aside"]["card"] == "peanuts/assassin-2"
    assert len(of(cues, "shuffle-in")) == 2 and len(of(cues, "showdown")) == 1
    assert of(cues, "family-found")[0]["seat"] == 1


class ApiTable(Table):
    """The seeded table of tests/games/test_peanuts.py, played through the API: each input is posted, the
    companion's answer must be the engine's view of the same game, with the same cues, and every
    impossible input it tries is refused with a 409 that journals nothing."""

    def __init__(self, daemon: Daemon, client: Any, heard: Cues, players: int, seed: int) -> None:
        super().__init__(players, seed)
        self.daemon, self.client, self.heard = daemon, client, heard
        self.eliminations = 0
        view = start(client, NAMES[:players], start=self.state.start)
        assert view == ENGINE.public_view(self.state)

    def post(self, event: dict[str, Any]) -> Any:
        if event["type"] == "tap":
            body = {k: v for k, v in event.items() if k != "type"}
            return self.client.post("/api/taps", json=body, headers=AUTH)
        return self.client.post("/api/actions", json=event, headers=AUTH)

    def send(self, event: dict[str, Any]) -> None:
        before = len(self.heard)
        response = self.post(event)
        assert response.status_code == 200, (event, response.get_json())
        self.state, cues = ENGINE.apply(self.state, event)
        self.inputs += 1
        self.check(cues)
        assert response.get_json() == ENGINE.public_view(self.state)
        heard = [c["cue"] for c in self.heard[before:] if c["cue"] != "your-turn"]
        assert heard == [c.name for c in cues if c.name != "your-turn"], event

    def try_the_impossible(self) -> None:
        others = [r for s, r in enumerate(self.roles) if r and s != self.state.turn]
        event = {"type": "tap", "card": self.rng.choice(others)} if others else {"type": "draw"}
        if event["type"] == "draw" and self.state.steps and self.state.steps[0].kind == "draw":
            return
        entries, view = journaled(self.daemon), state(self.client)
        response = self.post(event)
        assert response.status_code == 409, (event, response.get_json())
        assert journaled(self.daemon) == entries and state(self.client) == view
        self.refusals += 1

    def on_eliminate(self, step: Any) -> None:
        self.eliminations += 1
        super().on_eliminate(step)


def test_five_player_game_to_its_winners(daemon: Daemon, client: Any, cues: Cues) -> None:
    """A seeded table (real cards moved as the rules say) of five: this seed's game ends with a
    shared round that takes two players to the target together."""
    table = ApiTable(daemon, client, cues, players=5, seed=1806)
    table.play()
    view = state(client)
    assert view == ENGINE.public_view(table.state)
    assert view["status"] == "game-over" and view["winners"] == [2, 3]
    assert column(view, "score") == [0, 1, 2, 2, 0]
    assert view["rounds"][-1]["winners"] == [2, 3] and "share the round" in view["rounds"][-1]["reason"]
    assert sum(column(view, "score")) == sum(len(r["winners"]) for r in view["rounds"])
    assert len(of(cues, "round-won")) == len(view["rounds"])
    won = of(cues, "game-won")
    assert len(won) == 1 and won[0]["seat"] is None and won[0]["text"] == "Cy and Dee won the game!"
    assert len(of(cues, "player-eliminated")) == table.eliminations > 0
    assert table.refusals > 0 and len(of(cues, "error")) == table.refusals
    assert journaled(daemon) == table.inputs + 1  # the start, then every accepted input


# ---------------------------------------------------------------------------- refusals and undo


def test_refused_inputs_answer_409_and_journal_nothing(daemon: Daemon, client: Any, cues: Cues) -> None:
    start(client, ["Ann", "Bob", "Cy", "Dee"])
    play(
        client,
        cues,
        [
            *reveal("informant-1", "assassin-1", "handler-1", "secret-police-1"),
            *turn("seer-2", "assist"),
            tap("telepath-2", "card-accepted"),  # Ann: face down
            act("draw", "card-accepted"),  # Bob
        ],
    )
    entries, view = journaled(daemon), state(client)
    cues.clear()
    refusals = [
        ({"tap": "handler-1"}, "Handler #1 is Cy's Role"),  # a card known elsewhere
        ({"tap": "seer-2"}, "in Ann's discard pile"),
        ({"tap": "assassin-2"}, "set aside"),
        ({"type": "draw"}, "Not now"),  # Bob has drawn already
        ({"type": "assist"}, "First tap"),
        ({"type": "draw", "seat": 2}, "Not now"),
        ({"tap": "spy-9"}, "Unknown card peanuts/spy-9"),  # no such card
    ]
    for step, message in refusals:
        answer = send(client, step, 409)
        assert message in answer["error"], (step, answer)
        assert journaled(daemon) == entries and state(client) == view
    assert "elepath" not in json.dumps(cues)  # nothing named the face-down card
    assert [cue["cue"] for cue in cues] == ["error"] * (len(refusals) - 1) + ["unknown-card"]

    # A false claim is refused and the claim stays open (Bob's Assassin Role may be one of the family);
    # a protected target is refused.
    play(client, cues, [act("claim-family", "card-accepted"), tap("spy-1", "card-accepted")])
    entries, view = journaled(daemon), state(client)
    for step, message in [
        ({"tap": "spy-1"}, "False claim: tap one Spy, one Telepath and one Assassin."),
        ({"tap": "agent-1"}, "False claim: tap one Spy, one Telepath and one Assassin."),  # unnamed
        ({"tap": "handler-1"}, "False claim: Handler #1 is Cy's Role."),  # in sight
    ]:
        assert message in send(client, step, 409)["error"]
        assert journaled(daemon) == entries and state(client) == view
    assert view["claim"] == {"seat": 1, "tapped": 1}
    play(client, cues, [act("cancel-claim", "card-accepted"), tap("secret-police-2", "card-accepted")])
    play(client, cues, [act("assist", "card-accepted")])
    entries, view = journaled(daemon), state(client)
    assert [a["seat"] for a in view["prompt"]["actions"]] == [0, 2]  # Dee's Secret Police Role
    answer = send(client, {"type": "target", "seat": 3}, 409)
    assert "protects them" in answer["error"]
    assert journaled(daemon) == entries and state(client) == view

    # A malformed tap is refused before the table (400), also without a trace.
    response = client.post("/api/taps", json={"card": "peanuts/spy-1", "seat": "two"}, headers=AUTH)
    assert response.status_code == 400 and journaled(daemon) == entries


def test_undo_takes_back_an_elimination(daemon: Daemon, client: Any, cues: Cues) -> None:
    start(client, ["Ann", "Bob", "Cy"])
    play(
        client,
        cues,
        [
            *reveal("seer-1", "handler-1", "agent-1"),
            *turn("informant-1", "assist"),  # Ann makes Bob and Cy trade hands
            act("trade", "card-accepted", seats=[1, 2]),
            act("assassin", "card-accepted", received=False),  # Bob
        ],
    )
    before = state(client)
    assert before["prompt"]["step"] == "assassin-check" and before["prompt"]["seat"] == 2
    view = play(client, cues, [tap("assassin-1", "player-eliminated", seat=2)])  # Cy took the Assassin
    assert column(view, "eliminated") == [False, False, True] and pile(view, 2) == ["assassin-1"]
    assert column(view, "hand_count") == [1, 1, 0] and view["turn"] == 1
    count = journaled(daemon)

    response = client.post("/api/undo", headers=AUTH)
    assert response.status_code == 200
    view = response.get_json()
    assert view.pop("taken_back").startswith("Took back: ")  # what it took back, in players' words
    assert view == before and state(client) == before
    assert column(view, "eliminated") == [False, False, False] and pile(view, 2) == []
    entries = list(daemon.journal.entries())
    assert len(entries) == count + 1  # nothing deleted: the undo is an entry of its own
    assert entries[-1].event == {"type": "undo"}
    assert entries[-2].event == {"type": "tap", "card": "peanuts/assassin-1", "seat": 2}
    assert cues[-1]["cue"] == "undo"

    # The table says "no Assassin" this time: Cy stays in, and Bob plays.
    view = play(client, cues, [act("assassin", "card-accepted", received=False)])
    assert column(view, "eliminated") == [False, False, False] and view["prompt"]["seat"] == 1
    assert client.post("/api/undo").status_code == 401  # and undo needs the token


# ------------------------------------------------------------------------ the event stream's secrets


FACE_DOWN = ("peanuts/informant-1", "peanuts/informant-2")


def shown_cards(view: dict[str, Any]) -> set[str]:
    """Every card id a view shows face up: Roles, face-up discards, the set-aside Assassin, hands
    shown at the showdown."""
    ids = {p["role"]["card"] for p in view.get("players", []) if p.get("role")}
    ids |= {d["card"] for p in view.get("players", []) for d in p.get("discards", []) if d["face_up"]}
    if view.get("set_aside"):
        ids.add(view["set_aside"]["card"])
    for hand in (view.get("showdown") or {}).get("hands", []):
        ids |= {hand["role"]["card"], hand["hand"]["card"]}
    return ids


def face_down_round() -> list[tuple[dict[str, Any], int]]:
    """A three-player round (Ann, Bob, Cy) that Bob wins, and each input's status. Two cards go face
    down (the Informants, which never show in this round): the first is shuffled back by a Handler,
    the second stays in Cy's pile. Refusals on the way must not name them. (Also played on MQTT.)"""
    return [
        ({"tap": "secret-police-1"}, 200),  # Roles: Ann, Bob, Cy
        ({"tap": "telepath-1"}, 200),
        ({"tap": "handler-1"}, 200),
        ({"type": "draw"}, 200),  # Ann: the Seer's ASSIST, Informant 1 face down
        ({"tap": "seer-2"}, 200),
        ({"type": "assist"}, 200),
        ({"tap": "informant-1"}, 200),
        ({"type": "draw"}, 200),  # Bob
        ({"tap": "handler-2"}, 200),
        ({"type": "deploy"}, 200),  # the Telepath to Bob's pile; a card back into the deck
        ({"tap": "informant-1"}, 409),  # a face-down card is picked by its number, not tapped
        ({"type": "take-back", "seat": 0, "index": 1}, 200),  # Ann's face-down card
        ({"type": "target", "seat": 2}, 200),  # Cy swaps his hand for the top card
        ({"type": "assassin", "received": False}, 200),
        ({"type": "draw"}, 200),  # Cy: the other Seer, Informant 2 face down
        ({"tap": "seer-1"}, 200),
        ({"type": "assist"}, 200),
        ({"tap": "informant-2"}, 200),
        ({"type": "draw"}, 200),  # Ann: a Secret Police Role and two cards can't be the family
        ({"type": "claim-family"}, 409),
        ({"tap": "agent-1"}, 200),  # the Agent on Bob
        ({"type": "assist"}, 200),
        ({"type": "target", "seat": 1}, 200),
        ({"tap": "secret-police-2"}, 200),
        ({"type": "assassin", "received": False}, 200),
        ({"type": "draw"}, 200),  # Bob: the Telepath, another turn
        ({"tap": "telepath-2"}, 200),
        ({"type": "assist"}, 200),
        ({"type": "draw"}, 200),  # the Secret Police finds the Spy in Cy's hand
        ({"tap": "secret-police-3"}, 200),
        ({"type": "assist"}, 200),
        ({"type": "target", "seat": 2}, 200),
        ({"type": "spy-found", "found": True}, 200),
        ({"tap": "spy-1"}, 200),  # Cy is out; the Spy is shuffled in
        ({"type": "draw"}, 200),  # Bob's extra turn: the Agent on Ann, who receives the Assassin
        ({"tap": "agent-3"}, 200),
        ({"type": "assist"}, 200),
        ({"type": "target", "seat": 0}, 200),
        ({"tap": "handler-3"}, 200),
        ({"tap": "assassin-1"}, 200),  # Ann is out: Bob is the last player standing
    ]


def test_the_event_stream_never_names_a_face_down_card(daemon: Daemon, client: Any) -> None:
    # The scoreboard's own request. Read in this thread (Flask keeps the request context with the
    # generator): first up to the current state, which means the stream now receives every message...
    response, stream, chunks = open_event_stream(client)

    start(client, ["Ann", "Bob", "Cy"])
    script = face_down_round()
    for step, status in script:
        send(client, step, status)
    final = state(client)
    assert final["rounds"] == [
        {
            "round": 1,
            "winners": [1],
            "reason": "Bob is the last player standing.",
            "how": "last-standing",
            "out": [0, 2],
        }
    ]

    # ...then, once the round is over, everything it queued (fewer messages than the queue holds),
    # up to the round's last cue. A keepalive would mean the queue ran dry before that.
    while '"cue":"round-won"' not in chunks[-1] and not chunks[-1].startswith(": keepalive"):
        chunks.append(next(stream).decode())
    response.close()

    text = "".join(chunks)
    messages = [m for m in text.split("\n\n") if m.startswith("event: ")]
    accepted = sum(status == 200 for _, status in script)
    assert sum(m.startswith("event: state") for m in messages) == 1 + 1 + accepted  # first, start, inputs
    kinds = [json.loads(m.split("data: ", 1)[1])["cue"] for m in messages if m.startswith("event: cue")]
    assert {"error", "shuffle-in", "player-eliminated", "round-won"} <= set(kinds)

    # Neither face-down card is ever named: not its id, not its name (no Informant shows this round),
    # in no state, cue, prompt, action label or error.
    for card in FACE_DOWN:
        assert card not in text
    assert "Informant" not in text and "informant" not in text
    down_counts = []
    for message in messages:
        kind, data = message.split("\n", 1)
        payload = json.loads(data.removeprefix("data: "))
        if kind == "event: state" and payload.get("game"):
            assert not shown_cards(payload) & set(FACE_DOWN)
            backs = [[d for d in p["discards"] if not d["face_up"]] for p in payload["players"]]
            assert all(d == {"face_up": False} for pile_ in backs for d in pile_)
            down_counts.append([len(b) for b in backs])
    assert [0, 0, 1] in down_counts and [1, 0, 0] in down_counts  # the backs were on the stream
    assert down_counts[-1] == [0, 0, 1]

    # The stream did carry the face-up cards by id and name: the check above had something to find.
    assert "peanuts/seer-2" in text and "Handler" in text and "Secret Police" in text


def test_a_game_of_taps_seat_buttons_and_next_through_the_api(client: Any) -> None:
    """A seeded game of tests/games/test_peanuts_table.py, played with taps from each seat's reader,
    seat buttons and Next only (no input is the tablet's), posted to the API input by input: each is
    taken (the impossible ones refused, 409) and the game ends as it ended in the engine."""
    table = GestureTable(3, 16, per_seat=True)
    table.play()
    start(client, NAMES[:3], start=table.log[0].before.start)
    for entry in table.log:
        event = entry.event
        if event["type"] == "tap":
            response = client.post(
                "/api/taps", json={k: v for k, v in event.items() if k != "type"}, headers=AUTH
            )
        else:
            response = client.post("/api/actions", json=event, headers=AUTH)
        assert response.status_code == (409 if entry.after is None else 200), (event, response.get_json())
    final, played = state(client), ENGINE.public_view(table.state)
    assert final["status"] == "game-over" and final["rounds"] == played["rounds"]
    assert any("last player standing" in r["reason"] for r in final["rounds"])
