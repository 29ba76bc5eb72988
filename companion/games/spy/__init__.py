"""SPY: the companion as referee of a game of secret Spy Bases.

Each player holds one colour's cards in a secret order. When a player spies, the owner of the spied
card taps it; the companion knows whose turn it is (the spier) and, from the card's colour, whose card
it is (the owner), and answers as the rulebook demands:

- a Safe or Top Secret that is not the owner's Exposure Target: its type only ("It's a Safe");
- the Exposure Target (Safe 1, Safe 2, Top Secret 1, Top Secret 2, in that order): revealed for good;
  once Top Secret 2 is revealed its owner is out;
- an unlit Bomb: now lit (TSSSsss), and nobody learns which bomb;
- a lit Bomb: BOOM, the spier is out; the owner shows that bomb to everybody (so the cue names it),
  then it goes back lit and hidden;
- a card already face up: said so, and nothing changes.

Spying ends the turn; a player may also pass (they may have only moved their Spy). A player who drops
a card is out. The last player left wins.

The companion keeps the secrets the players' hands would keep: `public_view` and the cues never name
the number (nor the id) of a card that is not face up, nor which bomb is lit; only the `boom` cue
names the bomb that went off, which the rulebook has the owner show to the table. Movement is not tracked:
it is public (declared aloud) and needs no referee.

The package: `rules` (the card list, checked and indexed by colour once; the Exposure Target order),
`state` (the state, secrets included, and what it says: colours in play, the next player, who won),
`engine` (setup, claiming colours, spying, passing, players out), `view` (the prompt and the public
view, which name no secret).

Inputs, as documented in ``docs/rules/spy.md``:

- ``{"type": "tap", "card": "spy/red-safe-1"}``: during setup a Spy card claims its colour for the
  seat the prompt asks (or for ``"seat"`` if the event carries one); during play the spied card,
  tapped by its owner (any ``"seat"`` is ignored: the colour names the owner);
- ``{"type": "claim", "seat": 0, "colour": "green"}``: claim a colour without its Spy card;
- ``{"type": "pass"}`` (optionally ``"seat"``, which must be the current player): end the turn
  without spying;
- ``{"type": "eliminate", "seat": 2}``: that player dropped a card and is out (that player's seat
  button held);
- ``{"type": "pick", "seat": 0}``: setup, the asked seat's button pressed: show the next free colour,
  which the held button then claims.

Options of `setup`: ``{"start": seat}``, the youngest player, who takes the first turn (default 0).
"""

from companion.games.spy.engine import Spy
from companion.games.spy.rules import EXPOSURE_LABELS, EXPOSURE_ORDER, Base, SpyRules, parse_rules
from companion.games.spy.state import SpyState

__all__ = ["EXPOSURE_LABELS", "EXPOSURE_ORDER", "Base", "Spy", "SpyRules", "SpyState", "parse_rules"]
