"""Card enrollment: giving every physical card's tag its identity (see docs/nfc.md).

Enrollment walks a game's deck one card at a time ("tap Red 17"). For each tag tapped it writes the
card id as an NDEF text record when the tag is writable (NTAG21x stickers as sold), and registers the
tag's UID in the card registry in every case, so read-only tags are known too and the registry knows
which cards of a box have a tag. A tag that already belongs to another card (by the registry or by
the card id written on it) is refused unless forced.

The same `Enrollment` runs from the command line (`companion cards enroll`, its own reader) and from
the tablet (`CardDesk`, which borrows the daemon's readers while a session runs).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from companion.catalog import Card, GameData, load_catalog
from companion.config import Config, ConfigError, load_config
from companion.cues import Cue
from companion.doctor import INSTALLED_CONFIG, _config_path
from companion.readers.health import LinkWatch
from companion.registry import Registry, RegistryConflict, RegistryError, normalize_uid, registry_path

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
    wrote = False
    warning = ""
    if tag.card != card.id:
        if tag.writable:
            wrote = tag.write(card.id)
            if not wrote and tag.card is not None:
                return refused(
                    f"This tag says {tag.card} and could not be rewritten; keep it still and retry."
                )
            if not wrote:  # a blank tag that did not take the id: its UID is enough to play it
                why = getattr(tag, "write_error", None) or "the write did not take"
                warning = f"the card id could not be written on the tag ({why})"
        elif tag.card is not None:
            return refused(f"This tag is read-only and says {tag.card}; it cannot become {card.name}.")
    registry.register(tag.uid, card.id, ndef=wrote or tag.card == card.id, force=True)
    if warning:
        message = f"{card.name}: UID registered, but {warning}; the UID alone is enough to play it."
    else:
        message = f"{card.name}: {'card id written, UID registered' if wrote else 'UID registered'}."
    return EnrollResult("enrolled", card.id, card.name, tag.uid, wrote, message, warning)


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
        """The readers a session can take tags from (the virtual mat has no tags)."""
        return sum(hasattr(reader, "intercept") for reader in self.readers)

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


# The command line: `companion cards enroll | list | export | import | forget`


def add_cards_commands(subparsers: Any) -> None:
    """Add `companion cards ...` to the `companion` command's subparsers. `--config` and `--cards-db`
    go before or after the action (`companion cards --cards-db X list`, `... list --cards-db X`)."""
    # SUPPRESS: an option left out after the action must not undo the same option given before it.
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument(
        "--config",
        type=Path,
        default=argparse.SUPPRESS,
        help=f"the TOML config file (default: {INSTALLED_CONFIG} if it exists), for [cards] and the reader",
    )
    where.add_argument(
        "--cards-db",
        type=Path,
        default=argparse.SUPPRESS,
        help="the card registry (default: the config's [cards] path, else cards.db beside the journal)",
    )
    cards = subparsers.add_parser(
        "cards", parents=[where], help="enroll the NFC tags of a box of cards, list and back them up"
    )
    commands = cards.add_subparsers(required=True, metavar="action")

    def action(name: str, text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = commands.add_parser(name, parents=[where], help=text)
        return parser

    enroll = action("enroll", "tap a game's cards one by one to give each tag its card")
    enroll.add_argument("--game", required=True, help="the game whose deck to enroll, e.g. spy-team")
    enroll.add_argument("--device", help="the nfcpy reader path (default: the config's reader, else auto)")
    enroll.add_argument("--missing", action="store_true", help="only the cards that have no tag yet")
    enroll.add_argument("--force", action="store_true", help="take tags that belong to another card")
    enroll.add_argument(
        "--debounce", type=float, default=1.0, help="seconds before the same tag counts again (default 1)"
    )
    enroll.set_defaults(command=cmd_enroll)

    listing = action("list", "the registered tags, and the cards that still have none")
    listing.add_argument("--game", help="only this game")
    listing.set_defaults(command=cmd_list)

    export = action("export", "write the registry as JSON (a backup of the box)")
    export.add_argument("file", nargs="?", type=Path, help="where to write (default: standard output)")
    export.set_defaults(command=cmd_export)

    load = action("import", "load a JSON export")
    load.add_argument("file", type=Path, help="the export ('-' for standard input)")
    load.add_argument("--force", action="store_true", help="replace tags registered to another card")
    load.set_defaults(command=cmd_import)

    forget = action("forget", "remove a tag from the registry")
    forget.add_argument("uid", help="the tag's UID in hex")
    forget.set_defaults(command=cmd_forget)


def _open_registry(args: argparse.Namespace, *, read_only: bool = False) -> tuple[Config, Registry]:
    """The config (the installed one by default, as for `companion doctor`) and its registry.
    `read_only` (list, export) never creates one: a registry not there yet has no tags."""
    config = load_config(_config_path(getattr(args, "config", None)))
    path = Path(getattr(args, "cards_db", None) or registry_path(config)).absolute()
    if not read_only:
        return config, Registry(path)
    if not path.exists():
        print(f"no card registry at {path} yet: no tag is enrolled", file=sys.stderr)
        return config, Registry.empty(path)
    return config, Registry(path, read_only=True)


def _game(catalog: dict[str, GameData], game: str) -> GameData:
    if game not in catalog:
        raise ConfigError(f"unknown game {game!r}: choose one of {', '.join(sorted(catalog))}")
    return catalog[game]


def bar(done: int, total: int, width: int = 24) -> str:
    filled = width if total == 0 else round(width * done / total)
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}"


def cmd_enroll(args: argparse.Namespace) -> int:
    from companion.readers.nfc import NfcReader, ReaderSettings, find_reader

    config, registry = _open_registry(args)
    try:
        data = _game(load_catalog(), args.game)
        session = Enrollment(data, registry, missing=args.missing, force=args.force)
        if session.finished:
            print(f"Every {data.title} card already has a tag.")
            return 0
        device = args.device or next(
            (entry.get("device") for entry in config.readers if entry.get("device") not in (None, "virtual")),
            "auto",
        )
        if device == "auto":
            device = find_reader()
            if device is None:
                raise ConfigError("no NFC reader found (USB, or a PN532 on the Pi's UART): give --device")
        settings = ReaderSettings.parse({"device": device, "debounce": args.debounce})
        reader: NfcReader = settings.reader(watch=_PrintWatch())
        reader.intercept = session.offer
        what = "the cards without a tag" if args.missing else "every card"
        print(f"Enrolling {what} of {data.title} on {device} into {registry.path}.")
        print("Tap each card when asked (Ctrl-C stops).")
        reader.start(lambda **tap: None)
        try:
            _follow(session)
        except KeyboardInterrupt:
            print()
        finally:
            reader.stop()
        print(f"{session.enrolled} enrolled, {len(session.cards) - session.position} left.", end=" ")
        print("Run again with --missing for the rest." if not session.finished else "Done.")
        return 0 if session.finished else 1
    finally:
        registry.close()


def _follow(session: Enrollment) -> None:
    """Print the walk through the deck as it happens, until it is done."""
    version = -1
    while True:
        progress = session.progress()
        if progress["version"] != version:
            version = progress["version"]
            last = progress["last"]
            if last is not None:
                tag = f" (tag {last['uid']})" if last["uid"] else ""
                status = last["status"]
                if status == "enrolled":
                    status = "warn" if last["warning"] else "ok"
                print(f"  {status}: {last['message']}{tag}")
            if progress["finished"]:
                print(bar(progress["position"], progress["total"]), "all done.")
                return
            print(
                bar(progress["position"], progress["total"]), f"tap {progress['current']['name']}", flush=True
            )
        session.wait(version, timeout=0.5)


class _PrintWatch(LinkWatch):
    """For the terminal: says when the reader is lost or back (there is no table to cue)."""

    def lost(self, reader: Any, why: str) -> None:
        print(f"  reader lost: {why} (retrying)", file=sys.stderr, flush=True)

    def back(self, reader: Any) -> None:
        print("  reader back", file=sys.stderr, flush=True)


def cmd_list(args: argparse.Namespace) -> int:
    _, registry = _open_registry(args, read_only=True)
    try:
        catalog = load_catalog()
        games = [_game(catalog, args.game)] if args.game else list(catalog.values())
        entries = registry.entries(args.game)
        names = {card.id: card.name for data in catalog.values() for card in data.cards.values()}
        if entries:
            print(f"Card registry {registry.path}:")
        for entry in entries:
            how = "ndef+uid" if entry.ndef else "uid"
            name = names.get(entry.card, "?")
            print(f"{entry.uid:<20} {entry.card:<28} {name:<20} {how:<8} {entry.enrolled_at}")
        have = {entry.card for entry in entries}
        for data in games:
            missing = [card.name for card in data.cards.values() if card.id not in have]
            total = len(data.cards)
            line = f"{data.title}: {total - len(missing)}/{total} cards have a tag"
            print(line + (f"; missing: {', '.join(missing)}" if missing else ""))
        return 0
    finally:
        registry.close()


def cmd_export(args: argparse.Namespace) -> int:
    _, registry = _open_registry(args, read_only=True)
    try:
        text = json.dumps(registry.export(), indent=2) + "\n"
    finally:
        registry.close()
    if args.file is None:
        sys.stdout.write(text)
    else:
        args.file.write_text(text, encoding="utf-8")
        print(f"wrote {args.file}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    try:
        raw = sys.stdin.read() if str(args.file) == "-" else args.file.read_text(encoding="utf-8")
        data = json.loads(raw)
    except OSError as error:
        raise ConfigError(f"cannot read {args.file}: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise ConfigError(f"{args.file} is not JSON: {error}") from error
    _, registry = _open_registry(args)
    try:
        known = {card for game in load_catalog().values() for card in game.cards}
        try:
            report = registry.import_(data, force=args.force, known=known)
        except ValueError as error:
            raise ConfigError(f"{args.file}: {error}") from error
    finally:
        registry.close()
    counts = {key: len(value) for key, value in report.items()}
    print(f"{counts['added']} added, {counts['unchanged']} unchanged, {counts['refused']} refused")
    for reason in report["refused"]:
        print(f"  refused {reason}", file=sys.stderr)
    return 0 if not report["refused"] else 1


def cmd_forget(args: argparse.Namespace) -> int:
    _, registry = _open_registry(args)
    try:
        try:
            gone = registry.forget(args.uid)
        except ValueError as error:
            raise ConfigError(str(error)) from error
    finally:
        registry.close()
    print(f"forgot {args.uid}" if gone else f"{args.uid} was not registered")
    return 0 if gone else 1


__all__ = ["CardDesk", "EnrollError", "EnrollResult", "Enrollment", "RegistryConflict", "add_cards_commands"]
