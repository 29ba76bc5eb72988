"""SPY x FAMILY: Mission for Peanuts: the companion keeps the public state of every round.

The companion cannot see hands. It knows what the table knows: every Role (face up), every discard
pile in order (face-down cards included, because the player tapped them as they put them down), the
exact number of cards in the deck, how many cards each player holds, who is out, whose turn it is and
the Peanut Points. From that it refuses what cannot be true (a card in sight somewhere else, a
target a Role protects, a false "Finding the Family"), tells the table when the deck runs out, and
scores the showdown. Rules and protocol in our words: ``docs/rules/peanuts.md``.

Secrets: only what the whole table sees decides a prompt, a cue or a refusal. The face-down cards
it recorded count only in the showdown's discard count (as the piles turned over do); a tap that
contradicts such a record is accepted and makes that record unknown. A claim is told by its count
until it wins.

The package: `rules` (the game data, parsed once), `state` (the state, its step queue and what the
table sees), `engine` (the `Peanuts` engine: setup, the queries, and `STEPS`, which finds the handler
of each step), `moves` (what the steps share: checking an input, a card discarded, an action void),
`rounds` (the deal and the Roles shown, the turns begun and ended, the showdown, the round won),
`turn` (the draw, the card played for its ASSIST or DEPLOY), `roles` (each Role's ASSIST and DEPLOY,
and the steps they queue), `elimination` (the receiver's Assassin check, a player out), `claim`
(Finding the Family), `showdown` (ranking the hands), `view` (the prompt and the public view). No
module of the package imports this face.

Inputs (every one may carry ``"seat"``: it must then be the seat the prompt asks, except where a seat
is the choice itself):

- ``{"type": "tap", "card": "peanuts/seer-1"}``: a card, read by the reader. What it means comes
  from the prompt: a Role at the reveal, the card a player plays, a face-down discard, a hand
  discarded on elimination, a hand shown at the showdown, a card of a claim, a face-down card
  turned over when the discard piles decide a showdown and the companion's record of it proved
  wrong...
- ``{"type": "draw"}``: the current player draws the card that begins their turn (the turn's first
  tap or claim implies it).
- ``{"type": "assist"}`` / ``{"type": "deploy"}``: after tapping the played card, discard it for its
  ASSIST or make it the new Role for its DEPLOY (a tap of the player's own Role, before or after
  the card, is a DEPLOY too).
- ``{"type": "target", "seat": 2}``: the player an action picks (in the Informant's trade: the first
  player, then the second, as the seat buttons give them).
- ``{"type": "trade", "seats": [0, 2]}``: the two players the Informant makes trade hands.
- ``{"type": "direction", "direction": "left" | "right"}``: where the Handler passes the Roles
  (left = clockwise = the next seat number).
- ``{"type": "take-back", "seat": 1, "index": 0}``: the discarded card the Handler shuffles back
  (index in that player's pile, oldest first); a tap of a face-up discarded card does the same.
  ``{"type": "browse", "seat": 1, "index": 0}``: which card the owner's seat button takes back now
  (a seat button and Next post it).
- ``{"type": "spy-found", "found": true | false}``: whether the Secret Police saw the Spy (a tap of
  the Spy answers yes and discards it at once).
- ``{"type": "assassin", "received": true | false}``: whether the player asked received the
  Assassin (a tap of the Assassin answers yes and discards it at once).
- ``{"type": "done"}``: the Seer's DEPLOY cards are back under the deck, or the Informant's DEPLOY
  card is back on top.
- ``{"type": "claim-family"}`` then three taps, or ``{"type": "cancel-claim"}``.

Every prompt can also be answered at the table, with taps, seat buttons and Next alone: each seat
has at most one action (`Action.seat`), Next at most one (`primary`); docs/rules/peanuts.md, "At the
table".
- ``{"type": "next-round"}``: deal the next round.

Options of `setup`: ``{"start": seat, "target": points}``.
"""

from companion.games.peanuts.engine import Peanuts
from companion.games.peanuts.state import Discard, PeanutsState, Step, StepKind

__all__ = ["Discard", "Peanuts", "PeanutsState", "Step", "StepKind"]
