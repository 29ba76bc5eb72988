"""Every game's story: the public log beside the board, the game-over summary, and undo naming what
it took back. The secrecy tests (tests/games/test_spy.py, tests/games/test_peanuts.py) check the whole public
view, the log included; here, what the log says."""

from __future__ import annotations

import contextlib
from pathlib import Path

from companion.games import build_engines
from companion.games.base import GameError
from companion.games.catalog import load_catalog
from companion.table.journal import Journal
from companion.table.table import Table
from tests.games import test_peanuts
from tests.games.test_spy import ENGINE as SPY
from tests.games.test_spy import scripted_game
from tests.spy_team_play import trick_cards

ENGINES = build_engines(load_catalog())
SPY_TEAM = ENGINES["spy-team"]


def test_the_spy_log_tells_every_spy_and_its_public_answer_in_order() -> None:
    state = SPY.setup(["Ann", "Bob", "Cy", "Di"], {})
    for event in scripted_game():
        with contextlib.suppress(GameError):  # a refusal tells no story
            state, _ = SPY.apply(state, event)
    view = SPY.public_view(state)
    assert view["log"] == [
        "Ann plays green.",
        "Bob plays red.",
        "Cy plays purple.",
        "Di plays blue.",
        "Ann spied on Bob: It's a Top Secret.",
        "Bob lit a bomb in Cy's base: TSSSsss.",
        "Cy spied on Di: It's a Safe.",
        "Di exposed Ann's Green Safe 1.",
        "Ann lit a bomb in Cy's base: TSSSsss.",
        "Bob spied Ann's Green Safe 1, already exposed.",
        "Cy passed.",
        "BOOM! Di spied a lit bomb in Cy's base.",  # which bomb: only the boom cue says it
        "Di is out: BOOM.",
        "Ann exposed Bob's Red Safe 1.",
        "Bob exposed Ann's Green Safe 2.",
        "Cy passed.",
        "Ann exposed Bob's Red Safe 2.",
        "Bob exposed Ann's Green Top Secret 1.",
        "Cy exposed Bob's Red Top Secret 1.",
        "Ann exposed Bob's Red Top Secret 2.",
        "Bob is out: Red Top Secret 2 is exposed.",
        "Cy dropped a card and is out.",
        "Ann wins.",
    ]
    assert view["summary"] == ["Ann won: the last spy standing."]


def test_the_spy_team_log_goes_trick_by_trick_and_sums_up_each_round() -> None:
    state = SPY_TEAM.setup(["Ann", "Bob", "Cid", "Dee"], {"start": 0})
    state, _ = SPY_TEAM.apply(state, {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    state, _ = SPY_TEAM.apply(state, {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
    assert SPY_TEAM.public_view(state)["summary"] == []  # none before the game is over
    for _ in range(2):  # Bob, aiming for 1, takes two tricks: B.I.R.D.'s mission is sabotaged
        for card in trick_cards(SPY_TEAM.public_view(state), winner=1):
            state, _ = SPY_TEAM.apply(state, {"type": "tap", "card": card})
    log = SPY_TEAM.public_view(state)["log"]
    assert log[2:7] == [
        "Ann played Red 1.",
        "Bob played Red 24.",
        "Cid played Blue 1.",
        "Dee played Blue 2.",
        "Trick 1: Bob won it with Red 24.",
    ]
    assert log[11] == "Trick 2: Bob won it with Red 23."
    assert log[12].startswith("B.I.R.D.'s mission is sabotaged: Bob won 2 tricks aiming for 1.")
    assert log[13] == "Round 1 goes to C.A.T.: they remove their 1/5 tile."
    assert not any("spy-team/" in line for line in log)  # card names, never ids


def test_the_peanuts_log_tells_each_round_with_its_winning_hand_and_the_summary_the_game() -> None:
    table = test_peanuts.Table(3, 1003)
    table.play()
    view = test_peanuts.ENGINE.public_view(table.state)
    log, rounds = view["log"], view["rounds"]
    assert view["status"] == "game-over" and len(rounds) >= 3
    for result in rounds:
        line = log.index(f"Round {result['round']} won: {result['reason']}")
        if result["reason"].startswith(
            ("Nobody", view["players"][result["winners"][0]]["name"] + " wins the showdown")
        ):
            assert log[line + 1].startswith(
                f"Winning hand: {view['players'][result['winners'][0]]['name']}'s "
            )
    assert "Ann's Role: Telepath." in log and "Bob draws a card." in log
    assert not any("peanuts/" in line for line in log)  # card names, never ids
    assert view["summary"][0] == test_peanuts.ENGINE.outcome(table.state).reason + "."  # type: ignore[union-attr]
    assert view["summary"][1 : 1 + len(rounds)] == [f"Round {r['round']}: {r['reason']}" for r in rounds]
    assert view["summary"][-1].startswith("Final score: Ann ")


def test_undo_names_what_it_took_back(tmp_path: Path) -> None:
    table = Table(Journal(tmp_path / "journal.db"), ENGINES)
    heard: list[str] = []
    table.listeners.append(lambda kind, cue: heard.append(cue.text) if kind == "cue" else None)  # type: ignore[union-attr]
    table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"], {"start": 0})
    table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    table.act({"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    table.tap("spy-team/red-17")
    answer = table.undo()
    assert answer["taken_back"] == "Took back: Ann played Red 17." == heard[-1]
    assert "taken_back" not in table.view()  # the answer says it; the board shows the game
    # The fourth play ends the trick: both lines go.
    for card in ("spy-team/red-17", "spy-team/blue-1", "spy-team/blue-2", "spy-team/blue-3"):
        table.tap(card)
    assert table.undo()["taken_back"] == "Took back: Dee played Blue 3; Trick 1: Ann won it with Red 17."
    table.start("spy", ["Ann", "Bob"])
    assert table.undo()["taken_back"] == "Took back the start of SPY."
    assert table.game == "spy-team"


def test_undo_never_names_a_hidden_spy_card(tmp_path: Path) -> None:
    table = Table(Journal(tmp_path / "journal.db"), ENGINES)
    table.start("spy", ["Ann", "Bob"])
    table.tap("spy/green-spy")
    table.tap("spy/red-spy")
    table.tap("spy/red-safe-2")  # Ann spies on Bob's Safe 2: only its type is said
    taken = table.undo()["taken_back"]
    assert taken == "Took back: Ann spied on Bob: It's a Safe."
    assert "2" not in taken and "red-safe" not in taken
