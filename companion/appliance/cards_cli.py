"""`companion cards enroll | list | export | import | forget`: the card registry from the command line.

`enroll` runs the same `Enrollment` as the tablet (companion.readers.enrollment) on a reader of its
own, so it is meant for a stopped daemon; the others read or change the registry file (see docs/nfc.md).
"""

from __future__ import annotations

import argparse
import atexit
import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

from companion.core.config import INSTALLED_CONFIG, Config, ConfigError, config_path, load_config
from companion.games.catalog import GameData, load_catalog
from companion.readers.enrollment import Enrollment
from companion.readers.health import LinkWatch
from companion.readers.registry import Registry, registry_path


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
    enroll.add_argument(
        "--device",
        help="the reader's device (usb:, tty:, pcsc:, hid:; default: the config's reader, else auto)",
    )
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
    config = load_config(config_path(getattr(args, "config", None)))
    path = Path(getattr(args, "cards_db", None) or registry_path(config)).absolute()
    if not read_only:
        registry = Registry(path)
        give_to_folder_owner(path)
        atexit.register(give_to_folder_owner, path)  # and the -wal/-shm files SQLite made since
        return config, registry
    if not path.exists():
        print(f"no card registry at {path} yet: no tag is enrolled", file=sys.stderr)
        return config, Registry.empty(path)
    return config, Registry(path, read_only=True)


def give_to_folder_owner(path: Path) -> None:
    """Run as root (`sudo companion cards enroll`), hand the registry's files to the owner of their
    folder, the service user: a root-owned cards.db reads fine for the service, and every
    enrollment from the tablet then fails with "attempt to write a readonly database"."""
    if os.geteuid() != 0:
        return
    folder = path.parent.stat()
    if folder.st_uid == 0:
        return
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if name.exists() and name.stat().st_uid == 0:
            os.chown(name, folder.st_uid, folder.st_gid)


def _game(catalog: dict[str, GameData], game: str) -> GameData:
    if game not in catalog:
        raise ConfigError(f"unknown game {game!r}: choose one of {', '.join(sorted(catalog))}")
    return catalog[game]


def bar(done: int, total: int, width: int = 24) -> str:
    filled = width if total == 0 else round(width * done / total)
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}"


def _take_reader(device: str) -> Any:
    """The reader, opened for this enrollment alone, or None to keep trying (not plugged in yet).
    One the service (or any other process) holds is refused: two processes on one PN532 garble
    each other's frames."""
    from companion.readers.frontend import open_frontend

    try:
        return open_frontend(device)
    except OSError as error:
        if error.errno != errno.EBUSY and "busy" not in str(error).lower():
            return None
        raise ConfigError(
            f"the reader {device} is in use by another process, most likely the companion service: "
            "enroll from the tablet (control page, Cards and tags), or stop the service first "
            "(sudo systemctl stop companion)"
        ) from error


def cmd_enroll(args: argparse.Namespace) -> int:
    from companion.readers.families import FAMILY_SCHEMES, family_reader, find_device, scheme
    from companion.readers.nfc import ReaderSettings

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
            device = find_device()
            if device is None:
                raise ConfigError(
                    "no NFC reader found (PC/SC, USB, a PN532 on the Pi's UART or I2C bus 1): give --device"
                )
        reader: Any
        if scheme(str(device)) in FAMILY_SCHEMES:
            reader = family_reader({"device": device, "debounce": args.debounce}, _PrintWatch())
        else:
            settings = ReaderSettings.parse({"device": device, "debounce": args.debounce})
            clf = _take_reader(settings.device)
            reader = settings.reader(watch=_PrintWatch(), clf=clf, found=settings.device)
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
