"""Spy Team: two teams of two, trick taking against a secret-free mission target.

The companion follows the rules in ``docs/rules/spy-team.md``. In short: each round both teams pick
one of their remaining mission tiles (``"1/5"``, ``"2/4"``, ``"3/3"``) and who aims for which number;
then the four players play tricks. The strongest card of a trick is the highest of the lead card's
colour, or the lowest when all four cards share a colour (Camouflage). The round stops the moment a
team hits both its targets exactly (mission accomplished) or one of its players goes over target
(sabotage: the rival team completes its mission instead). The completing team removes its tile; the
first team to remove all three wins.

The package: `rules` (the game data, parsed once; a tile's numbers; the strongest card of a trick),
`state` (the state and what it says: teams, turn, targets), `engine` (setup, the missions, the
tricks, the end of a round), `view` (the mission choices, the prompt and the public view).

Inputs (events), all plain dicts as the journal stores them:

- ``{"type": "mission", "seat": 0, "tile": "1/5", "target": 1}``: seat 0 aims for 1 trick, its
  teammate for the tile's other number (5). Either teammate may send it, and may send another one to
  change the team's choice, until the first card of the round is played. A held seat button sends
  the mission its team's buttons show;
- ``{"type": "pick", "seat": 2}``: a press of that seat's button: its team's buttons show the team's
  next mission (in the prompt's text); nothing is settled;
- ``{"type": "tap", "card": "spy-team/red-17"}`` (optionally ``"seat": 2``): the card of the seat whose
  turn it is.

Options of `setup`: ``{"start": seat}``, the first start player (default 0).

What the companion cannot see: the hands, the card swap between teammates before the first trick,
the rule that cards leave a hand from either end only, and which 4 cards sit out the round. Those stay
physical; the engine only ever learns the cards that are played face up.

Why a round always ends by the 11th trick (each player holds 11 cards, so this matters): while a
round goes on, no player is over target and no team has both players exactly on target, so each
team has won at most 6 - 1 = 5 tricks (its targets add up to 6, and reaching 6 without anyone over
means both are exactly on target). Both teams together have then won at most 10 tricks; the 11th trick
pushes one team to 6 or more, which ends the round.
"""

from companion.games.spy_team.engine import SpyTeam
from companion.games.spy_team.rules import SpyTeamRules, parse_rules, parse_tile, strongest
from companion.games.spy_team.state import Mission, Play, RoundResult, SpyTeamState, Team, TrickResult

__all__ = [
    "Mission",
    "Play",
    "RoundResult",
    "SpyTeam",
    "SpyTeamRules",
    "SpyTeamState",
    "Team",
    "TrickResult",
    "parse_rules",
    "parse_tile",
    "strongest",
]
