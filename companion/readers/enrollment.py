"""Card enrollment: giving every physical card's tag its identity (see docs/nfc.md).

Enrollment walks a game's deck one card at a time ("tap Red 17"). For each tag tapped it writes the
card id as an NDEF text record when the tag is writable (NTAG21x stickers as sold), and registers the
tag's UID in the card registry in every case, so read-only tags are known too and the registry knows
which cards of a box have a tag. A tag that already belongs to another card (by the registry or by
the card id written on it) is refused unless forced.

The same `Enrollment` runs from the command line (`companion cards enroll`, its own reader) and from
the tablet (`CardDesk`, which borrows the daemon's readers while a session runs); the command
line itself is `companion.appliance.cards_cli`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from companion.core.cues import Cue
from companion.games.catalog import Card, GameData
from companion.readers.registry import Registry, RegistryError, normalize_uid

log = logging.getLogger(__name__)


class EnrollError(Exception):
    """An enrollment request that cannot be carried out; the message says why."""


class TagLike(Protocol):
    """A tag being enrolled: `companion.readers.nfc.NfcTag` on a real reader, `VirtualTag` otherwise."""

    uid: str
    card: str | None  # the card id written on the tag, if any
    # (optional) why the last `write` returned False, e.g. "the tag holds 16 bytes, ... needs 21"
    # write_error: str | None

    @property
    def writable(self) -> bool: ...

    def write(self, card: str) -> bool: ...


class VirtualTag:
    """A tag known only by its UID (typed in, or tapped on the virtual mat): nothing to write."""

    def __init__(self, uid: str, card: str | None = None) -> None:
        self.uid = normalize_uid(uid)
        self.card = card

    @property
    def writable(self) -> bool:
        return False

    def write(self, card: str) -> bool:
        return False


@dataclass(frozen=True)
class EnrollResult:
    status: str  # "enrolled" | "refused" | "skipped"
    card: str
    name: str
    uid: str | None = None
    wrote: bool = False  # the card id was written to the tag just now
    message: str = ""
    warning: str = ""  # enrolled, but not all of it: the card id could not be written on the tag

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "card": self.card,
            "name": self.name,
            "uid": self.uid,
            "wrote": self.wrote,
            "message": self.message,
            "warning": self.warning,
        }


def enroll_tag(registry: Registry, tag: TagLike, card: Card, *, force: bool = False) -> EnrollResult:
    """Make `tag` the tag of `card`: write the card id if the tag takes it, register its UID."""

    def refused(message: str) -> EnrollResult:
        return EnrollResult("refused", card.id, card.name, tag.uid, message=message)

    owner = registry.lookup(tag.uid)
    other = next((c for c in (owner, tag.card) if c is not None and c != card.id), None)
    if other is not None and not force:
        return refused(f"This tag is already {other}: tap {card.name}'s own tag, or force it.")
    wrote, warning, refusal = _write_card_id(tag, card)
    if refusal:
        return refused(refusal)
    registry.register(tag.uid, card.id, ndef=wrote or tag.card == card.id, force=True)
    if warning:
        message = f"{card.name}: UID registered, but {warning}; the UID alone is enough to play it."
    else:
        message = f"{card.name}: {'card id written, UID registered' if wrote else 'UID registered'}."
    return EnrollResult("enrolled", card.id, card.name, tag.uid, wrote, message, warning)


def _write_card_id(tag: TagLike, card: Card) -> tuple[bool, str, str | None]:
    """Put the card's id on the tag where it is missing and the tag takes it: (written, a warning,
    a refusal). A blank tag that did not take it is still enrolled by its UID, with the warning."""
    if tag.card == card.id:
        return False, "", None
    if not tag.writable:
        refusal = f"This tag is read-only and says {tag.card}; it cannot become {card.name}."
        return False, "", refusal if tag.card is not None else None
    if tag.write(card.id):
        return True, "", None
    if tag.card is not None:
        return False, "", f"This tag says {tag.card} and could not be rewritten; keep it still and retry."
    why = getattr(tag, "write_error", None) or "the write did not take"
    return False, f"the card id could not be written on the tag ({why})", None


class Enrollment:
    """A walk through one game's deck: `current` is the card to tap next; `offer` gives it a tag.

    Thread-safe: a reader thread offers tags while the web or the terminal watches `progress`."""

    def __init__(
        self, data: GameData, registry: Registry, *, missing: bool = False, force: bool = False
    ) -> None:
        self.data = data
        self.registry = registry
        self.missing = missing
        self.force = force
        have = registry.enrolled_cards(data.game) if missing else set()
        self.cards: list[Card] = [card for card in data.cards.values() if card.id not in have]
        self.position = 0
        self.enrolled = 0
        self.skipped = 0
        self.last: EnrollResult | None = None
        self.version = 0  # bumped on every change, for watchers
        self._changed = threading.Condition()

    @property
    def current(self) -> Card | None:
        return self.cards[self.position] if self.position < len(self.cards) else None

    @property
    def finished(self) -> bool:
        return self.position >= len(self.cards)

    def offer(self, tag: TagLike) -> EnrollResult | None:
        """Enroll `tag` as the current card; None once the deck is done."""
        with self._changed:
            card = self.current
            if card is None:
                return None
            try:
                result = enroll_tag(self.registry, tag, card, force=self.force)
            except RegistryError as error:
                result = EnrollResult("refused", card.id, card.name, tag.uid, message=str(error))
            if result.status == "enrolled":
                self.position += 1
                self.enrolled += 1
            self._changed_locked(result)
            return result

    def skip(self) -> EnrollResult | None:
        """Leave the current card for later (`--missing` finds it again)."""
        with self._changed:
            card = self.current
            if card is None:
                return None
            self.position += 1
            self.skipped += 1
            result = EnrollResult("skipped", card.id, card.name, message=f"{card.name} skipped.")
            self._changed_locked(result)
            return result

    def wait(self, version: int, timeout: float) -> int:
        """Block until something changed after `version` (or `timeout`); the current version."""
        with self._changed:
            self._changed.wait_for(lambda: self.version != version, timeout)
            return self.version

    def progress(self) -> dict[str, Any]:
        with self._changed:
            card = self.current
            return {
                "game": self.data.game,
                "title": self.data.title,
                "missing": self.missing,
                "force": self.force,
                "total": len(self.cards),
                "position": self.position,
                "enrolled": self.enrolled,
                "skipped": self.skipped,
                "current": None if card is None else {"id": card.id, "name": card.name},
                "finished": card is None,
                "last": None if self.last is None else self.last.to_json(),
                "version": self.version,
            }

    def _changed_locked(self, result: EnrollResult) -> None:
        self.last = result
        self.version += 1
        self._changed.notify_all()


class CardDesk:
    """The daemon's side of enrollment, for the tablet: single UIDs, and a guided session during
    which every NFC reader hands its tags to the session instead of the game."""

    def __init__(
        self,
        registry: Registry,
        catalog: dict[str, GameData],
        readers: Sequence[Any] = (),
        announce: Callable[[Cue], None] | None = None,
    ) -> None:
        self.registry = registry
        self.catalog = catalog
        self.readers = list(readers)
        self.announce = announce
        self.session: Enrollment | None = None
        self._lock = threading.Lock()

    def card(self, card_id: str) -> Card:
        game = card_id.split("/", 1)[0] if isinstance(card_id, str) else ""
        data = self.catalog.get(game)
        if data is None or card_id not in data.cards:
            raise EnrollError(f"There is no card {card_id!r}.")
        return data.cards[card_id]

    def enroll(self, uid: str, card_id: str, *, force: bool = False) -> EnrollResult:
        """Register one tag by UID (the control page's "enroll" button next to an unknown tag)."""
        card = self.card(card_id)
        try:
            tag = VirtualTag(uid)
        except ValueError as error:
            raise EnrollError(str(error)) from error
        result = enroll_tag(self.registry, tag, card, force=force)
        self._cue(result)
        return result

    def start(self, game: str, *, missing: bool = False, force: bool = False) -> Enrollment:
        data = self.catalog.get(game)
        if data is None:
            raise EnrollError(f"Unknown game {game!r}: choose one of {', '.join(sorted(self.catalog))}.")
        self.registry.ensure_writable()  # a damaged or read-only registry: say so now, not at each tag
        with self._lock:
            session = Enrollment(data, self.registry, missing=missing, force=force)
            self.session = session
            for reader in self.readers:
                if hasattr(reader, "intercept"):
                    reader.intercept = self._offer
            return session

    def stop(self) -> None:
        """End the session: taps go back to the game (what was enrolled stays enrolled)."""
        with self._lock:
            self.session = None
            self._release()

    def release(self) -> None:
        """Give the readers back to the game, keeping a finished session's progress on show."""
        with self._lock:
            self._release()

    def _release(self) -> None:
        for reader in self.readers:
            if hasattr(reader, "intercept"):
                reader.intercept = None

    def offer(self, tag: TagLike) -> EnrollResult:
        """A tag for the running session (from a reader, or the virtual mat)."""
        result = self._offer(tag)
        if result is None:
            raise EnrollError("No enrollment is running: start one first.")
        return result

    def progress(self) -> dict[str, Any] | None:
        session = self.session
        return None if session is None else session.progress()

    @property
    def running(self) -> bool:
        """A session is walking through a deck: taps must not reach the game."""
        session = self.session
        return session is not None and not session.finished

    @property
    def nfc_readers(self) -> int:
        """The readers a session can take tags from, of every family (the virtual mat has no tags)."""
        # An `auto` reader that has found nothing yet stands for the virtual mat.
        return sum(
            hasattr(reader, "intercept") and reader.status()["kind"] != "virtual" for reader in self.readers
        )

    def health(self) -> dict[str, Any]:
        """The registry's part of /healthz: "ok", or "damaged: <file>: <cause>", "read-only: ..."."""
        return {"registry": self.registry.health()}

    def summary(self) -> dict[str, Any]:
        """Per game: how many cards have a tag, and which do not; every registered tag; the session;
        the registry's state and how many NFC readers can enroll."""
        entries = self.registry.entries()
        have = {entry.card for entry in entries}
        names = {card.id: card.name for data in self.catalog.values() for card in data.cards.values()}
        games = []
        for data in self.catalog.values():
            missing = [{"id": c.id, "name": c.name} for c in data.cards.values() if c.id not in have]
            games.append(
                {
                    "game": data.game,
                    "title": data.title,
                    "total": len(data.cards),
                    "enrolled": len(data.cards) - len(missing),
                    "missing": missing,
                }
            )
        tags = [{**entry.to_json(), "name": names.get(entry.card, entry.card)} for entry in entries]
        return {
            "games": games,
            "tags": tags,
            "session": self.progress(),
            "registry": self.registry.health(),
            "nfc_readers": self.nfc_readers,
        }

    def _offer(self, tag: TagLike) -> EnrollResult | None:
        session = self.session
        if session is None:
            return None
        result = session.offer(tag)
        if result is not None:
            self._cue(result, session)
            if session.finished:
                self.release()  # the deck is done: taps go back to the game
        return result

    def _cue(self, result: EnrollResult, session: Enrollment | None = None) -> None:
        if self.announce is None:
            return
        text = result.message
        if session is not None and result.status == "enrolled":
            nxt = session.current
            text += f" {session.position}/{len(session.cards)}" + (f": tap {nxt.name}" if nxt else ": done")
        name = "card-accepted" if result.status == "enrolled" else "error"
        try:
            self.announce(Cue(name, text=text, data={"enroll": result.to_json()}))
        except Exception:  # feedback must not break enrollment
            log.exception("announcing an enrollment failed")
