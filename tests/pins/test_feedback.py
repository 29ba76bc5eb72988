"""The feedback layer on gpiozero's mock pins: every cue's LED and buzzer pattern (values and timings,
read back from the pins), the rest state that follows the prompt, bursts, cuts, the sound settings.

Every cue plays once, all at the same time on separate mock boards (`played`), so checking all of
them costs the time of the longest pattern, not of their sum. Patterns play in real time: a check
that fails only because a thread ran late on a busy machine plays that cue again, once.
"""

from __future__ import annotations

import functools
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from gpiozero import LED
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.core.config import ConfigError
from companion.core.cues import CUE_NAMES, Cue
from companion.pins.devices import DEFAULT_PINS, PinLayout
from companion.pins.feedback import Feedback, Sound, beeps, rest_of
from companion.pins.patterns import AMBER, BLUE, GREEN, PATTERNS, SILENT, Pattern

DOCS = Path(__file__).resolve().parents[2] / "docs" / "feedback.md"
# Timing slack. A change is never early (the player waits for each deadline). On a busy machine a
# thread may wake late now and then, so one change may be up to STALL late; but most are on time
# (their median lateness within TOL), which a wrong duration anywhere in a pattern would break.
EARLY = 0.02
TOL = 0.03
STALL = 0.4
PLAYERS = [{"seat": seat, "name": name} for seat, name in enumerate(["Ann", "Bob", "Cy", "Di", "Eve"])]
VIEW = {
    "status": "playing",
    "players": PLAYERS,
    "winners": [],
    "prompt": {"seat": 0, "tap": True, "actions": []},
}
TARGET = 2  # the cue's seat
WINNERS = [1, 3]  # data["winners"] of round-won and game-won
LOW, HIGH = 220.0, 3520.0  # the passive buzzer's range (A3..A7)

Timeline = list[tuple[float, Any]]


class TonePin(MockPWMPin):
    """gpiozero's MockPWMPin, also recording every frequency change. Its `states` only record the
    duty cycle, which stays at 0.5 from one note to the next, so the notes are read from here."""

    def __init__(self, factory: Any, info: Any) -> None:
        super().__init__(factory, info)
        self.tones: list[tuple[float, float | None]] = []

    def _set_frequency(self, value: float | None) -> None:
        super()._set_frequency(value)
        self.tones.append((time.monotonic(), value))


@dataclass
class Rig:
    """One Feedback on its own mock board, with the pins it drives."""

    factory: MockFactory
    feedback: Feedback
    t0: float = 0.0

    @classmethod
    def build(cls, pins: dict[str, Any] | None = None, **kwargs: Any) -> Rig:
        factory = MockFactory(pin_class=TonePin)
        return cls(factory, Feedback(PinLayout.parse(pins), pin_factory=factory, **kwargs))

    def pin(self, number: int) -> TonePin:
        return self.factory.pin(number)  # type: ignore[return-value]

    def seat(self, seat: int) -> TonePin:
        return self.pin(DEFAULT_PINS["seat_leds"][seat])

    def status(self, channel: int) -> TonePin:
        return self.pin(DEFAULT_PINS["status_led"][channel])

    @property
    def buzzer(self) -> TonePin:
        return self.pin(DEFAULT_PINS["buzzer"])

    def settle(self, view: dict[str, Any] = VIEW) -> None:
        self.feedback("state", view)
        assert self.feedback.wait_idle()

    def mark(self) -> None:
        """From now on: the recordings start here (t0)."""
        for number in [*DEFAULT_PINS["seat_leds"], *DEFAULT_PINS["status_led"], DEFAULT_PINS["buzzer"]]:
            pin = self.pin(number)
            pin.clear_states()
            pin.tones.clear()
        self.t0 = time.monotonic()

    def cue(self, name: str, seat: int | None = TARGET, **data: Any) -> None:
        self.feedback("cue", Cue(name, seat=seat, data=data))

    def transitions(self, pin: TonePin) -> Timeline:
        """The pin's changes since `mark`, as (seconds after t0, value). MockPin timestamps each
        change relative to the one before, starting from `clear_states`."""
        out, at = [], 0.0
        for state in pin.states[1:]:
            at += state.timestamp
            out.append((at, state.state))
        return out

    def tones(self) -> Timeline:
        return changes([(at - self.t0, tone) for at, tone in self.buzzer.tones], initial=None)


def changes(timeline: Timeline, initial: Any) -> Timeline:
    """Only the entries that change the value (the first compared with `initial`)."""
    out: Timeline = []
    last = initial
    for at, value in timeline:
        if value != last:
            out.append((at, value))
            last = value
    return out


def assert_timeline(
    actual: Timeline, expected: Timeline, what: str, until: float | None = None
) -> list[float]:
    """Same values in the same order, each change at its expected time (at most EARLY before and
    STALL after); returns how late each change came, for `assert_on_time`."""
    if until is not None:
        actual = [(at, value) for at, value in actual if at <= until]
    values = [value for _, value in actual]
    wanted = [value for _, value in expected]
    assert len(values) == len(wanted), f"{what}: {values} != {wanted}"
    late: list[float] = []
    for (at, value), (want_at, want) in zip(actual, expected, strict=True):
        if isinstance(want, float) and value is not None:
            assert value == pytest.approx(want, rel=1e-6), f"{what}: {value} != {want}"
        else:
            assert value == want, f"{what}: {actual} != {expected}"
        late.append(at - want_at)
        assert late[-1] >= -EARLY, f"{what}: change to {value} at {at:.3f}s, before {want_at:.3f}s"
        if late[-1] > STALL:
            raise Late(f"{what}: change to {value} at {at:.3f}s, expected {want_at:.3f}s")
    return late


class Late(AssertionError):
    """The pattern was right but a thread ran late: worth a second try."""


def once_more_if_late(test: Callable[[], None]) -> Callable[[], None]:
    """For the tests that play patterns in real time: a second try if only a timing failed."""

    @functools.wraps(test)
    def run() -> None:
        try:
            test()
        except Late:
            test()

    return run


def assert_on_time(late: list[float], what: str) -> None:
    if late and statistics.median(late) > TOL:  # (a wink of the colour shown anyway changes nothing)
        raise Late(f"{what}: most changes came late: {sorted(late)}")


def clamp(tone: float) -> float:
    return min(max(tone, LOW), HIGH)


def expected_tones(pattern: Pattern) -> Timeline:
    timeline, at = [], 0.0
    for tone, seconds in pattern.tune:
        timeline.append((at, None if tone is None else clamp(tone)))
        at += seconds
    timeline.append((at, None))
    return changes(timeline, initial=None)


def expected_beeps(pattern: Pattern) -> Timeline:
    timeline, at = [], 0.0
    for on, seconds in beeps(pattern.tune):
        timeline.append((at, float(on)))
        at += seconds
    timeline.append((at, 0.0))
    return changes(timeline, initial=0.0)


def expected_lights(pattern: Pattern, targets: set[int]) -> list[Timeline]:
    """Five seat LEDs, then the red, green and blue legs, from the rest state (seat 0, green)."""
    rest = {0}
    seats: list[Timeline] = [[] for _ in range(5)]
    status: Timeline = []
    at = 0.0
    for which, colour, seconds in pattern.lights:
        lit = {"rest": rest, "target": targets, "all": set(range(5)), "none": set()}.get(which, {which})
        for seat in range(5):
            seats[seat].append((at, float(seat in lit)))
        if colour is not None:
            status.append((at, colour))
        at += seconds
    for seat in range(5):
        seats[seat].append((pattern.seconds, float(seat in rest)))
    status.append((pattern.seconds, GREEN))
    legs = [changes([(t, colour[leg]) for t, colour in status], initial=GREEN[leg]) for leg in range(3)]
    return [changes(timeline, initial=float(seat in rest)) for seat, timeline in enumerate(seats)] + legs


def targets_for(name: str) -> set[int]:
    return set(WINNERS) if name in ("round-won", "game-won") else {TARGET}


def play_cue(rig: Rig, name: str) -> None:
    if name in ("round-won", "game-won"):
        rig.cue(name, seat=None, winners=WINNERS)
    else:
        rig.cue(name)


@dataclass
class Played:
    seats: list[Timeline]
    legs: list[Timeline]
    tones: Timeline
    buzzer: Timeline  # the buzzer pin's on/off (active) or duty (passive) changes


Plays = dict[tuple[str, str], Played]


def play_all(keys: list[tuple[str, str]]) -> Plays:
    """Play each (cue, buzzer type) on its own mock board, all at the same time, and read back
    what the pins did."""
    rigs = {(name, kind): Rig.build({"buzzer_type": kind}) for name, kind in keys}
    try:
        for rig in rigs.values():
            rig.settle()
        for (name, _), rig in rigs.items():
            rig.mark()
            play_cue(rig, name)
        for rig in rigs.values():
            assert rig.feedback.wait_idle(timeout=10)
        return {key: snapshot(rig, key) for key, rig in rigs.items()}
    finally:
        for rig in rigs.values():
            rig.feedback.close()


def snapshot(rig: Rig, key: tuple[str, str]) -> Played:
    # Every pattern begins with a note. Timings count from it: many players waking at once on a
    # busy machine may start a little late, which is not what these tests are about (how soon a cue
    # starts is checked by the cut test).
    buzzer = rig.transitions(rig.buzzer)
    start = buzzer[0][0] if buzzer else 0.0
    assert start < STALL, f"{key} started {start:.3f}s late"

    def shifted(timeline: Timeline) -> Timeline:
        return [(at - start, value) for at, value in timeline]

    return Played(
        [shifted(rig.transitions(rig.seat(seat))) for seat in range(5)],
        [shifted(rig.transitions(rig.status(leg))) for leg in range(3)],
        shifted(rig.tones()),
        shifted(buzzer),
    )


@pytest.fixture(scope="module")
def played() -> Plays:
    """Every cue played once on a passive and once on an active buzzer, all at the same time."""
    return play_all([(name, kind) for name in sorted(CUE_NAMES) for kind in ("passive", "active")])


def check(played: Plays, name: str, kind: str, test: Callable[[Played], None]) -> None:
    """Run `test` on what the pins did; if a timing fails, play that cue once more, alone, and test
    that. The notes and the LED states must be right both times; only a late thread on a busy test
    machine gets a second chance."""
    try:
        test(played[name, kind])
    except Late:
        test(play_all([(name, kind)])[name, kind])


# The table of patterns


def test_every_cue_has_a_pattern_or_an_explicit_silent_entry() -> None:
    assert set(PATTERNS) == set(CUE_NAMES)
    for name, pattern in PATTERNS.items():
        assert isinstance(pattern, Pattern), name
        assert pattern is SILENT or pattern.tune or pattern.lights, f"{name}: empty but not SILENT"
        assert pattern.sound and pattern.light, f"{name}: say in words what it does (for the docs)"


def test_the_docs_show_every_cue() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = text.split("| cue | LEDs | buzzer | length | meaning |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \|", table, flags=re.MULTILINE)
    assert sorted(rows) == sorted(CUE_NAMES)
    for name, meaning in CUE_NAMES.items():  # the page says what the code does
        pattern = PATTERNS[name]
        row = f"| `{name}` | {pattern.light} | {pattern.sound} | {pattern.seconds:.2f} s | {meaning} |"
        assert row in table, f"docs/feedback.md: the row of {name} should read {row}"


def test_patterns_are_short_and_the_hiss_is_a_second_and_a_half() -> None:
    assert all(pattern.seconds <= 1.6 for pattern in PATTERNS.values())
    assert PATTERNS["bomb-lit"].seconds == pytest.approx(1.5, abs=0.02)


# Every cue, as the pins saw it


@pytest.mark.parametrize("name", sorted(CUE_NAMES))
def test_each_cue_plays_its_tune_on_a_passive_buzzer(played: Plays, name: str) -> None:
    def test(result: Played) -> None:
        assert result.tones, f"{name} made no sound"
        assert_on_time(assert_timeline(result.tones, expected_tones(PATTERNS[name]), f"{name} tones"), name)

    check(played, name, "passive", test)


@pytest.mark.parametrize("name", sorted(CUE_NAMES))
def test_each_cue_degrades_to_beeps_on_an_active_buzzer(played: Plays, name: str) -> None:
    def test(result: Played) -> None:
        assert result.tones == []  # on/off only: no frequency ever set
        assert result.buzzer[0] == (0.0, 1.0)  # it starts with a beep (the timings count from it)
        assert_on_time(assert_timeline(result.buzzer, expected_beeps(PATTERNS[name]), f"{name} beeps"), name)

    check(played, name, "active", test)


@pytest.mark.parametrize("name", sorted(CUE_NAMES))
def test_each_cue_plays_its_lights(played: Plays, name: str) -> None:
    pattern = PATTERNS[name]
    expected = expected_lights(pattern, targets_for(name))
    labels = [f"seat {seat} LED" for seat in range(5)] + ["red leg", "green leg", "blue leg"]

    def test(result: Played) -> None:
        checked, wanted = [*result.seats, *result.legs], expected
        if name == "reader-lost":  # its status LED blinks on from the start: see the test of its own
            checked, wanted = checked[:5], wanted[:5]
        late: list[float] = []
        for actual, timeline, label in zip(checked, wanted, labels, strict=False):
            late += assert_timeline(actual, timeline, f"{name}: {label}", until=pattern.seconds + STALL)
        assert_on_time(late, name)

    check(played, name, "passive", test)


def test_trick_won_blinks_the_winners_led_three_times_and_no_other(
    played: Plays,
) -> None:
    result = played["trick-won", "passive"]
    assert [value for _, value in result.seats[TARGET]] == [1.0, 0.0] * 3
    for seat in (1, 3, 4):
        assert result.seats[seat] == []
    assert [value for _, value in result.seats[0]] == [0.0, 1.0]  # the prompt's seat, back at the end
    assert [round(tone) for _, tone in result.tones[:-1]] == [1047, 1319, 1568]  # C6, E6, G6
    assert result.tones[-1][1] is None


@pytest.mark.parametrize(("name", "times"), [("round-won", 4), ("game-won", 6)])
def test_round_and_game_won_blink_every_winner(played: Plays, name: str, times: int) -> None:
    result = played[name, "passive"]
    for seat in WINNERS:
        assert [value for _, value in result.seats[seat]] == [1.0, 0.0] * times
    assert result.seats[TARGET] == []
    assert result.seats[4] == []


def test_bomb_lit_is_a_hiss_of_a_second_and_a_half_not_a_beep(played: Plays) -> None:
    tones = played["bomb-lit", "passive"].tones
    sounding = [tone for _, tone in tones if tone is not None]
    assert len(set(sounding)) >= 60  # noise: a new random pitch every few milliseconds
    assert all(2000.0 <= tone <= 3500.0 for tone in sounding)
    assert tones[-1][1] is None and tones[-1][0] == pytest.approx(1.5, abs=STALL)
    steps = [later - at for (at, tone), (later, _) in pairwise(tones) if tone]
    assert statistics.median(steps) < 0.02  # never one held note
    # A random pulse train, not bursts of tones: each pulse is one cycle of its pitch, too short
    # for a pitch to be heard (12 ms bursts warbled on a piezo, issue 16, 11).
    assert all(seconds == pytest.approx(1 / tone) for tone, seconds in PATTERNS["bomb-lit"].tune[:-1] if tone)

    # "TSSSsss": the last third is sparser than the first.
    def silence(start: float, end: float) -> float:
        return sum(
            min(later, end) - max(at, start)
            for (at, tone), (later, _) in pairwise(tones)
            if tone is None and later > start and at < end
        )

    assert silence(1.0, 1.5) > silence(0.0, 0.5) + 0.1


def test_error_flashes_the_status_led_red(played: Plays) -> None:
    red, green, _ = played["error", "passive"].legs
    assert [value for _, value in red] == [1.0, 0.0, 1.0, 0.0]
    assert [value for _, value in green][:1] == [0.0] and green[-1][1] == 1.0  # green again at rest


def test_boom_flashes_every_seat_led(played: Plays) -> None:
    result = played["boom", "passive"]
    for seat in range(1, 5):
        assert [value for _, value in result.seats[seat]] == [1.0, 0.0, 1.0, 0.0]


# The rest state: the prompt on the LEDs


def test_the_seat_led_follows_the_prompt_and_the_status_shows_what_is_awaited() -> None:
    rig = Rig.build()
    try:
        rig.settle({**VIEW, "prompt": {"seat": 3, "tap": True, "actions": []}})
        assert [rig.seat(seat).state for seat in range(5)] == [0, 0, 0, 1, 0]
        assert tuple(rig.status(leg).state for leg in range(3)) == GREEN
        choice = {"seat": None, "tap": False, "actions": [{"type": "mission", "seat": 0, "label": "x"}]}
        rig.settle({**VIEW, "prompt": choice})
        assert [rig.seat(seat).state for seat in range(5)] == [0] * 5
        assert tuple(rig.status(leg).state for leg in range(3)) == BLUE
        rig.settle(
            {**VIEW, "status": "game-over", "winners": [1, 3], "prompt": {"seat": None, "actions": []}}
        )
        assert [rig.seat(seat).state for seat in range(5)] == [0, 1, 0, 1, 0]  # the winners stay lit
    finally:
        rig.feedback.close()


def test_rest_of_an_idle_table_is_green_and_dark() -> None:
    assert rest_of(None) == rest_of({"status": "idle", "prompt": {"seat": None, "actions": []}})
    assert rest_of(None).seats == frozenset() and rest_of(None).status == GREEN
    assert rest_of(VIEW, reader_lost=True).status == "lost"


@once_more_if_late
def test_reader_lost_blinks_amber_until_the_reader_is_back() -> None:
    rig = Rig.build()
    try:
        rig.settle()
        rig.mark()
        rig.cue("reader-lost", seat=None)
        time.sleep(1.7)  # past the cue's own pattern (0.7 s): the blinking goes on
        red = rig.transitions(rig.status(0))
        assert_on_time(
            assert_timeline(red, [(0.0, 1.0), (0.5, 0.0), (1.0, 1.0), (1.5, 0.0)], "red leg"), "red"
        )
        green = rig.transitions(rig.status(1))
        assert_timeline(green, [(0.0, AMBER[1]), (0.5, 0.0), (1.0, AMBER[1]), (1.5, 0.0)], "green leg")
        rig.cue("reader-back", seat=None)
        assert rig.feedback.wait_idle()
        rig.mark()
        time.sleep(0.6)
        assert tuple(rig.status(leg).state for leg in range(3)) == GREEN
        assert rig.transitions(rig.status(0)) == []  # steady: the blinking stopped
    finally:
        rig.feedback.close()


# Bursts and cuts


def test_a_cue_returns_at_once_even_for_a_long_pattern() -> None:
    rig = Rig.build()
    try:
        rig.settle()
        started = time.monotonic()
        rig.cue("bomb-lit")
        assert time.monotonic() - started < 0.02
    finally:
        rig.feedback.close()


def test_a_newer_cue_cuts_a_long_one_cleanly() -> None:
    rig = Rig.build()
    try:
        rig.settle()
        rig.mark()
        rig.cue("bomb-lit")
        time.sleep(0.5)  # a later input: past the burst window
        sent = time.monotonic() - rig.t0
        rig.cue("card-accepted")
        assert rig.feedback.wait_idle()
        done = time.monotonic() - rig.t0
        tones = rig.tones()
        c7 = PATTERNS["card-accepted"].tune[0][0]
        cut_at = next(at for at, tone in tones if tone == pytest.approx(c7) and at >= sent)
        assert sent <= cut_at <= sent + STALL  # at once, not after the hiss
        after = [tone for at, tone in tones if at > cut_at]
        assert after == [None]  # no more hiss after the blip: the hiss was cut, not resumed
        assert done < sent + PATTERNS["card-accepted"].seconds + STALL < PATTERNS["bomb-lit"].seconds
        assert tuple(rig.status(leg).state for leg in range(3)) == GREEN  # lights back at rest
    finally:
        rig.feedback.close()


@once_more_if_late
def test_the_cues_of_one_input_play_one_after_the_other() -> None:
    rig = Rig.build()
    try:
        rig.settle()
        rig.mark()
        rig.feedback("state", VIEW)  # as the table does: the state, then the burst of cues
        rig.cue("trick-won")
        rig.cue("your-turn")
        assert rig.feedback.wait_idle()
        first = PATTERNS["trick-won"]
        expected = expected_tones(first) + [
            (first.seconds + at, tone) for at, tone in expected_tones(PATTERNS["your-turn"])
        ]
        assert_on_time(assert_timeline(rig.tones(), expected, "trick-won then your-turn"), "burst")
    finally:
        rig.feedback.close()


def test_a_new_state_starts_a_new_burst_that_cuts_the_old_one() -> None:
    rig = Rig.build()
    try:
        rig.settle()
        rig.mark()
        rig.cue("game-won", seat=None, winners=WINNERS)
        time.sleep(0.05)  # within the burst window, but the table moved on: a new state came
        rig.feedback("state", VIEW)
        rig.cue("card-accepted")
        assert rig.feedback.wait_idle()
        assert time.monotonic() - rig.t0 < 0.05 + PATTERNS["card-accepted"].seconds + 0.1
    finally:
        rig.feedback.close()


# The buzzer first (issue 22): the first step on the caller's thread, the rest on the worker


def test_first_step_sets_the_buzzer_before_it_returns_and_the_worker_plays_the_rest() -> None:
    rig = Rig.build()
    try:
        rig.settle()
        rig.mark()
        pattern = PATTERNS["trick-won"]
        cue = Cue("trick-won", seat=TARGET)
        rig.feedback.first_step(cue)
        # No thread has had to run: the tone is on the pin when the call returns.
        assert [tone for _, tone in rig.tones()] == [pytest.approx(pattern.tune[0][0])]
        rig.feedback("state", VIEW)  # then the table tells its listeners: the state, the same cue
        rig.feedback("cue", cue)
        assert rig.feedback.wait_idle()
        # Played once, whole, on its own timeline from that first step.
        assert_timeline(rig.tones(), expected_tones(pattern), "trick-won from its first step")
    finally:
        rig.feedback.close()


def test_a_cue_that_starts_at_once_sets_its_first_step_in_the_listener_call() -> None:
    rig = Rig.build({"buzzer_type": "active"})
    try:
        rig.settle()
        rig.mark()
        rig.cue("error")  # a refusal: no first_step call, the listener call is on the table's thread
        assert [value for _, value in rig.transitions(rig.buzzer)] == [1.0]
        assert rig.feedback.wait_idle()
        assert_timeline(rig.transitions(rig.buzzer), expected_beeps(PATTERNS["error"]), "error beeps")
    finally:
        rig.feedback.close()


@once_more_if_late
def test_the_cues_after_a_first_step_play_behind_it_as_one_burst() -> None:
    rig = Rig.build()
    try:
        rig.settle()
        rig.mark()
        first = Cue("trick-won", seat=TARGET)
        rig.feedback.first_step(first)
        rig.feedback("state", VIEW)
        rig.feedback("cue", first)
        rig.cue("your-turn")
        assert rig.feedback.wait_idle()
        expected = expected_tones(PATTERNS["trick-won"]) + [
            (PATTERNS["trick-won"].seconds + at, tone) for at, tone in expected_tones(PATTERNS["your-turn"])
        ]
        assert_on_time(assert_timeline(rig.tones(), expected, "trick-won then your-turn"), "burst")
    finally:
        rig.feedback.close()


def test_a_first_step_cuts_a_long_pattern_and_the_worker_never_overwrites_it() -> None:
    rig = Rig.build()
    try:
        rig.settle()
        rig.cue("bomb-lit")  # a second and a half of hiss, thousands of steps on the worker
        time.sleep(0.3)
        for _ in range(20):  # one new input after the other, mid-hiss
            rig.mark()
            rig.feedback.first_step(Cue("card-accepted"))
            assert [tone for _, tone in rig.tones()] == [pytest.approx(PATTERNS["card-accepted"].tune[0][0])]
            rig.feedback("state", VIEW)
            time.sleep(0.01)
            # No hiss step after the blip: at most the blip's own end.
            assert [tone for _, tone in rig.tones()][1:] in ([], [None]), rig.tones()
            rig.cue("bomb-lit")
            time.sleep(0.05)
        rig.mark()
        rig.feedback.first_step(Cue("card-accepted"))
        rig.feedback("state", VIEW)
        assert rig.feedback.wait_idle()
        assert [tone for _, tone in rig.tones()] == [
            pytest.approx(PATTERNS["card-accepted"].tune[0][0]),
            None,
        ]
    finally:
        rig.feedback.close()


# The sound settings


def test_volume_off_keeps_the_buzzer_silent_and_the_lights_on() -> None:
    rig = Rig.build(sound={"enabled": False})
    try:
        rig.settle()
        rig.mark()
        rig.cue("error")
        assert rig.feedback.wait_idle()
        assert rig.tones() == [] and rig.transitions(rig.buzzer) == []
        assert [value for _, value in rig.transitions(rig.status(0))] == [1.0, 0.0, 1.0, 0.0]
    finally:
        rig.feedback.close()


@pytest.mark.parametrize(("hour", "audible"), [(23, False), (3, False), (8, True), (12, True)])
def test_quiet_hours_silence_the_buzzer(hour: int, audible: bool) -> None:
    rig = Rig.build(sound={"quiet_hours": "22:00-08:00"}, clock=lambda: datetime(2024, 5, 1, hour, 0))
    try:
        rig.settle()
        rig.mark()
        rig.cue("card-accepted")
        assert rig.feedback.wait_idle()
        assert bool(rig.tones()) is audible
    finally:
        rig.feedback.close()


def at(hour: int, minute: int) -> Callable[[], datetime]:
    """A clock stopped at hour:minute on a day."""
    return lambda: datetime(2024, 1, 1, hour, minute)


def test_quiet_hours_within_one_day_and_over_midnight() -> None:
    day = Sound.from_config({"quiet_hours": "13:00-15:30"})
    assert not day.audible(at(14, 0)) and day.audible(at(15, 30))
    night = Sound.from_config({"quiet_hours": "22:00-08:00"})
    assert not night.audible(at(22, 0)) and night.audible(at(21, 59))
    assert Sound.from_config({}).audible(at(3, 0))
    assert not Sound.from_config({"enabled": False}).audible(at(12, 0))


def test_the_clock_is_read_only_when_there_are_quiet_hours() -> None:
    def unread() -> datetime:
        raise AssertionError("the clock was read")

    assert Sound.from_config({}).audible(unread)
    assert not Sound.from_config({"enabled": False, "quiet_hours": "13:00-15:30"}).audible(unread)


@pytest.mark.parametrize(
    "sound", [{"quiet_hours": "late"}, {"quiet_hours": 22}, {"enabled": "no"}, {"volume": 3}]
)
def test_a_bad_sound_setting_is_a_config_error(sound: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=r"\[sound\]"):
        Sound.from_config(sound)


# The pins


def test_parts_left_out_are_not_driven() -> None:
    rig = Rig.build({"status_led": [], "buzzer": False, "seat_leds": [5, 6]})
    try:
        assert rig.feedback.buzzer is None and rig.feedback.status_led is None
        rig.settle({**VIEW, "prompt": {"seat": 1, "tap": True, "actions": []}})
        rig.mark()
        rig.cue("trick-won", seat=1)
        assert rig.feedback.wait_idle()
        # Seat 1 is lit at rest (the prompt's seat): off, on, off, on, off, and on again at the end.
        assert [value for _, value in rig.transitions(rig.seat(1))] == [0.0, 1.0] * 3
    finally:
        rig.feedback.close()


def test_close_releases_every_pin() -> None:
    rig = Rig.build()
    rig.feedback.close()
    for number in [*DEFAULT_PINS["seat_leds"], *DEFAULT_PINS["status_led"], DEFAULT_PINS["buzzer"]]:
        LED(number, pin_factory=rig.factory).close()  # would raise GPIOPinInUse if still held


def test_a_cue_without_a_pattern_is_ignored_and_the_player_goes_on(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(PATTERNS, "spied")  # a cue name added without its pattern
    rig = Rig.build()
    try:
        rig.settle()
        rig.cue("spied")
        assert "no feedback pattern for cue 'spied'" in caplog.text
        rig.mark()
        rig.cue("card-accepted")
        assert rig.feedback.wait_idle()
        assert rig.tones()
    finally:
        rig.feedback.close()


def test_close_stops_a_pattern_midway_and_the_player_thread() -> None:
    rig = Rig.build()
    rig.settle()
    rig.cue("bomb-lit")
    time.sleep(0.1)
    started = time.monotonic()
    rig.feedback.close()
    assert time.monotonic() - started < 0.2
    assert not rig.feedback._worker.is_alive()
