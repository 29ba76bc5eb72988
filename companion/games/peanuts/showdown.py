"""The showdown of Mission for Peanuts: ranking the shown hands when the deck runs out.

Best combination first, then the fewest notches on Role and hand, then the fewest notches in the
discard pile (face-down cards included). A tie that survives all three shares the round
(docs/rules/peanuts.md says why).
"""

from __future__ import annotations

from typing import Any

from companion.games.peanuts.rules import PeanutsRules
from companion.games.peanuts.state import PeanutsState, listing

NOT_FOUND = 10**6  # the combination rank of a showdown hand without any combination


def pile_notches(rules: PeanutsRules, state: PeanutsState, seat: int) -> int:
    """The notches of `seat`'s discard pile, face-down cards included (an unknown one is asked
    before a result is kept, see `rounds.settle_showdown`)."""
    return sum(rules.notches(d.card) for d in state.piles[seat] if d.card is not None)


def result(winners: list[int], reason: str, decided_by: str, piles_counted: list[int]) -> dict[str, Any]:
    return {"winners": winners, "reason": reason, "decided_by": decided_by, "piles_counted": piles_counted}


def rank(rules: PeanutsRules, state: PeanutsState) -> dict[str, Any]:
    """The showdown's result: winners, reason, what decided it, whose discard piles were counted."""
    names = state.players
    combo: dict[int, tuple[int, str] | None] = {}
    notches: dict[int, int] = {}
    for seat, card in state.shown.items():
        role = state.roles[seat]
        assert role is not None
        combo[seat] = rules.combination(role, card)
        notches[seat] = rules.notches(role) + rules.notches(card)

    def rank_of(seat: int) -> int:
        found = combo[seat]
        return found[0] if found else NOT_FOUND

    best = min(rank_of(s) for s in combo)
    group = sorted(s for s in combo if rank_of(s) == best)
    if best == NOT_FOUND:
        lead = "Nobody holds a combination"
    else:
        held = {s: found[1] for s in group if (found := combo[s]) is not None}
        if len(group) == 1:
            return result(
                group, f"{names[group[0]]} wins the showdown with {held[group[0]]}.", "combination", []
            )
        lead = listing([f"{names[s]} ({held[s]})" for s in group]) + " hold equal combinations"
    return _by_notches(rules, state, group, notches, lead)


def _by_notches(
    rules: PeanutsRules, state: PeanutsState, group: list[int], notches: dict[int, int], lead: str
) -> dict[str, Any]:
    """Equal combinations (or none): the fewest notches on Role and hand, then in the discard pile."""
    names = state.players
    low = min(notches[s] for s in group)
    tied = [s for s in group if notches[s] == low]
    if len(tied) == 1:
        reason = f"{lead}; {names[tied[0]]} has the fewest notches on Role and hand ({low})."
        return result(tied, reason, "notches", [])

    piles = {s: pile_notches(rules, state, s) for s in tied}
    fewest = min(piles.values())
    final = [s for s in tied if piles[s] == fewest]
    lead = f"{lead}; {listing([names[s] for s in tied])} tie on {low} notches"
    if len(final) == 1:
        reason = f"{lead}; {names[final[0]]} has the fewest notches in the discard pile ({fewest})."
        return result(final, reason, "discards", tied)
    reason = f"{lead} and {fewest} in the discard pile: {listing([names[s] for s in final])} share the round."
    return result(final, reason, "tie", tied)
