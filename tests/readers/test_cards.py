"""The card registry, enrollment rules, the cards API for the tablet, and `companion cards` list /
export / import / forget (no NFC here: see test_cards_nfc.py for enrollment on an emulated tag)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.cli import main
from companion.appliance.daemon import Daemon
from companion.core.config import Config, load_config
from companion.games.catalog import load_catalog
from companion.readers.enrollment import enroll_tag
from companion.readers.known import KnownTags
from companion.readers.registry import (
    Registry,
    RegistryConflict,
    RegistryError,
    check_registry,
    normalize_uid,
    registry_path,
)
from tests.nfc_helpers import AUTH, nfc_config

SPY_TEAM = load_catalog()["spy-team"]
RED_1, RED_2 = SPY_TEAM.cards["spy-team/red-1"], SPY_TEAM.cards["spy-team/red-2"]
UID_A, UID_B = "04a1b2c3d4e5f6", "04a1b2c3d4e5f7"


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    opened = Registry(tmp_path / "cards.db")
    yield opened
    opened.close()


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    running = Daemon(nfc_config(tmp_path, {"device": "virtual"}))
    running.start()
    yield running
    running.close()


def call(daemon: Daemon, method: str, path: str, body: Any = None, auth: bool = True) -> tuple[int, Any]:
    client = daemon.app.test_client()
    response = client.open(path, method=method, json=body, headers=AUTH if auth else {})
    return response.status_code, response.get_json()


# The registry


def test_uids_are_normalized_and_checked() -> None:
    assert normalize_uid("04:A1:B2:C3:D4:E5:F6") == UID_A
    assert normalize_uid("04 a1 b2 c3 d4 e5 f6") == UID_A
    for bad in ("", "04a1b2", "04a1b2c3d4e5f", "zz" * 7, "04" * 11):
        with pytest.raises(ValueError):
            normalize_uid(bad)


def test_register_lookup_conflict_force_forget(registry: Registry) -> None:
    assert registry.lookup(UID_A) is None
    registry.register(UID_A, RED_1.id)
    assert registry.lookup("04:A1:B2:C3:D4:E5:F6") == RED_1.id
    assert registry.lookup("not a uid") is None
    registry.register(UID_A, RED_1.id, ndef=True)  # the same card again: fine, refreshes ndef
    assert registry.entry(UID_A).ndef is True  # type: ignore[union-attr]
    with pytest.raises(RegistryConflict) as conflict:
        registry.register(UID_A, RED_2.id)
    assert conflict.value.card == RED_1.id
    assert registry.lookup(UID_A) == RED_1.id
    registry.register(UID_A, RED_2.id, force=True)
    assert registry.lookup(UID_A) == RED_2.id
    assert registry.forget(UID_A) is True
    assert registry.forget(UID_A) is False
    assert registry.lookup(UID_A) is None


def test_the_registry_survives_a_reopen_and_filters_by_game(tmp_path: Path) -> None:
    first = Registry(tmp_path / "cards.db")
    first.register(UID_A, RED_1.id)
    first.register(UID_B, "spy/green-safe-1")
    first.close()
    again = Registry(tmp_path / "cards.db")
    try:
        assert again.lookup(UID_A) == RED_1.id
        assert [e.card for e in again.entries("spy-team")] == [RED_1.id]
        assert again.enrolled_cards("spy") == {"spy/green-safe-1"}
    finally:
        again.close()


def test_the_registry_lives_beside_the_journal_unless_configured(tmp_path: Path) -> None:
    assert registry_path(Config(db=tmp_path / "j" / "journal.db")) == tmp_path / "j" / "cards.db"
    assert registry_path(Config(cards={"path": str(tmp_path / "box.db")})) == tmp_path / "box.db"


def test_a_read_only_registry_looks_up_but_refuses_to_enroll(tmp_path: Path) -> None:
    path = tmp_path / "cards.db"
    writable = Registry(path)
    writable.register(UID_A, RED_1.id)
    writable.close()
    read_only = Registry(path, read_only=True)
    try:
        assert read_only.lookup(UID_A) == RED_1.id
        with pytest.raises(RegistryError):
            read_only.register(UID_B, RED_2.id)
    finally:
        read_only.close()


def test_export_and_import(registry: Registry, tmp_path: Path) -> None:
    registry.register(UID_A, RED_1.id, ndef=True)
    backup = registry.export()
    assert backup["version"] == 1 and backup["tags"][0]["uid"] == UID_A
    other = Registry(tmp_path / "other.db")
    try:
        other.register(UID_B, RED_1.id)
        backup["tags"] += [
            {"uid": UID_B, "card": RED_2.id},  # UID_B is red-1 there: refused
            {"uid": "nonsense", "card": RED_2.id},
            {"uid": "04000000000001", "card": "spy-team/red-99"},  # no such card
        ]
        known = set(SPY_TEAM.cards)
        report = other.import_(backup, known=known)
        assert report["added"] == [UID_A]
        assert len(report["refused"]) == 3
        assert other.lookup(UID_B) == RED_1.id
        again = other.import_(backup, known=known, force=True)
        assert again["unchanged"] == [UID_A] and again["added"] == [UID_B]
        assert other.lookup(UID_B) == RED_2.id
        with pytest.raises(ValueError):
            other.import_({"tags": []})
    finally:
        other.close()


# The cards API


def test_the_cards_api_needs_the_token(daemon: Daemon) -> None:
    for method, path in [
        ("GET", "/api/cards"),
        ("POST", "/api/cards/enroll"),
        ("POST", "/api/cards/session"),
    ]:
        status, body = call(daemon, method, path, {}, auth=False)
        assert status == 401, (method, path, body)


def test_enroll_an_unknown_tag_from_the_tablet(daemon: Daemon) -> None:
    status, summary = call(daemon, "GET", "/api/cards")
    assert status == 200
    spy_team = next(g for g in summary["games"] if g["game"] == "spy-team")
    assert spy_team["total"] == 48 and spy_team["enrolled"] == 0 and len(spy_team["missing"]) == 48

    status, result = call(
        daemon, "POST", "/api/cards/enroll", {"uid": "04:A1:B2:C3:D4:E5:F6", "card": RED_1.id}
    )
    assert status == 201 and result["status"] == "enrolled" and result["uid"] == UID_A
    assert daemon.registry.lookup(UID_A) == RED_1.id
    # Another card for the same tag: refused, unless forced.
    status, result = call(daemon, "POST", "/api/cards/enroll", {"uid": UID_A, "card": RED_2.id})
    assert status == 409 and result["status"] == "refused" and RED_1.id in result["message"]
    status, result = call(
        daemon, "POST", "/api/cards/enroll", {"uid": UID_A, "card": RED_2.id, "force": True}
    )
    assert status == 201 and daemon.registry.lookup(UID_A) == RED_2.id
    # The table now knows the tag: a tap by UID plays red-2.
    daemon.table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"])
    daemon.table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    daemon.table.act({"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    status, view = call(daemon, "POST", "/api/taps", {"uid": UID_A})
    assert status == 200 and view["played"] == [RED_2.id]

    status, summary = call(daemon, "GET", "/api/cards")
    assert summary["tags"] == [{**daemon.registry.entry(UID_A).to_json(), "name": "Red 2"}]  # type: ignore[union-attr]
    status, _ = call(daemon, "DELETE", f"/api/cards/tags/{UID_A}")
    assert status == 200 and daemon.registry.lookup(UID_A) is None
    assert call(daemon, "DELETE", f"/api/cards/tags/{UID_A}")[0] == 404


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"uid": "xyz", "card": RED_1.id}, 400),
        ({"uid": UID_A}, 400),
        ({"uid": UID_A, "card": "spy-team/red-99"}, 404),
        ({"uid": UID_A, "card": RED_1.id, "force": "yes"}, 400),
    ],
)
def test_enroll_refuses_bad_requests(daemon: Daemon, body: dict[str, Any], status: int) -> None:
    got, answer = call(daemon, "POST", "/api/cards/enroll", body)
    assert got == status and "error" in answer
    assert daemon.registry.entries() == []


def test_a_guided_session_from_the_tablet_with_the_virtual_mat(daemon: Daemon) -> None:
    daemon.registry.register(UID_B, "spy-team/red-3")
    status, body = call(daemon, "POST", "/api/cards/session", {"game": "spy-team", "missing": True})
    assert status == 201
    session = body["session"]
    assert session["total"] == 47 and session["current"] == {"id": RED_1.id, "name": "Red 1"}
    status, body = call(daemon, "POST", "/api/cards/session/tap", {"uid": UID_A})
    assert body["result"]["status"] == "enrolled" and body["session"]["position"] == 1
    assert body["session"]["current"]["name"] == "Red 2"
    # The tag of red-3 offered for red-2: refused, the session stays on red-2.
    status, body = call(daemon, "POST", "/api/cards/session/tap", {"uid": UID_B})
    assert body["result"]["status"] == "refused" and body["session"]["position"] == 1
    status, body = call(daemon, "POST", "/api/cards/session/skip")
    assert body["result"]["status"] == "skipped" and body["session"]["current"]["name"] == "Red 4"
    assert call(daemon, "GET", "/api/cards/session")[1]["session"]["skipped"] == 1
    assert call(daemon, "DELETE", "/api/cards/session")[1] == {"session": None}
    assert call(daemon, "POST", "/api/cards/session/tap", {"uid": "04000000000009"})[0] == 404
    assert call(daemon, "POST", "/api/cards/session", {"game": "chess"})[0] == 404
    assert daemon.registry.lookup(UID_A) == RED_1.id


def test_export_and_import_over_the_api(daemon: Daemon) -> None:
    daemon.registry.register(UID_A, RED_1.id)
    status, backup = call(daemon, "GET", "/api/cards/export")
    assert status == 200 and backup["tags"][0]["card"] == RED_1.id
    daemon.registry.forget(UID_A)
    daemon.known.remember("04a1b2c3d4e5f6", RED_1.id, 0.0)  # a UID its readers verified
    assert daemon.known.card_for("04a1b2c3d4e5f6", 0.1) == RED_1.id
    status, report = call(daemon, "POST", "/api/cards/import", backup)
    assert status == 200 and report["added"] == [UID_A]
    assert daemon.known.card_for("04a1b2c3d4e5f6", 0.2) is None  # the import forgot it
    assert call(daemon, "POST", "/api/cards/import", {"nope": 1})[0] == 400


# The command line


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_cards_list_export_import_forget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "cards.db")
    setup = Registry(db)
    setup.register(UID_A, RED_1.id, ndef=True)
    setup.close()

    code, out = run(capsys, "cards", "--cards-db", db, "list", "--game", "spy-team")
    assert code == 0
    assert UID_A in out and "Red 1" in out and "ndef+uid" in out
    assert "Spy Team: 1/48 cards have a tag; missing: Red 2" in out

    backup = tmp_path / "box.json"
    assert run(capsys, "cards", "--cards-db", db, "export", str(backup))[0] == 0
    assert json.loads(backup.read_text())["tags"][0]["uid"] == UID_A

    code, out = run(capsys, "cards", "--cards-db", db, "forget", UID_A)
    assert code == 0 and "forgot" in out
    service = Registry(db)  # the running service's registry and its readers' known tags
    known = KnownTags(stamp=service.generation)
    known.remember("04a1b2c3d4e5f6", RED_1.id, 0.0)
    code, out = run(capsys, "cards", "--cards-db", db, "import", str(backup))
    assert code == 0 and out.startswith("1 added, 0 unchanged, 0 refused")
    assert known.card_for("04a1b2c3d4e5f6", 0.1) is None  # the command's import forgot it
    service.close()
    check = Registry(db)
    assert check.lookup(UID_A) == RED_1.id
    check.close()

    backup.write_text("not json")
    assert run(capsys, "cards", "--cards-db", db, "import", str(backup))[0] == 2
    assert run(capsys, "cards", "--cards-db", db, "list", "--game", "chess")[0] == 2


# The enrollment rules, on tags that carry a card id (the NFC tests cover real writes)


class WrittenTag:
    """A tag with a card id on it, writable or not; records what was written."""

    def __init__(self, uid: str, card: str | None, writable: bool, takes: bool = True) -> None:
        self.uid, self.card, self._writable, self._takes = uid, card, writable, takes
        self.written: list[str] = []

    @property
    def writable(self) -> bool:
        return self._writable

    def write(self, card: str) -> bool:
        self.written.append(card)
        if self._takes:
            self.card = card
        return self._takes


def test_enrollment_rules_for_tags_that_name_a_card(registry: Registry) -> None:
    # A writable tag that says Red 2, offered for Red 1: refused; forced, it is rewritten.
    tag = WrittenTag(UID_A, RED_2.id, writable=True)
    assert enroll_tag(registry, tag, RED_1).status == "refused" and tag.written == []
    result = enroll_tag(registry, tag, RED_1, force=True)
    assert (result.status, result.wrote, tag.written) == ("enrolled", True, [RED_1.id])
    assert registry.entry(UID_A).ndef is True  # type: ignore[union-attr]
    # Already Red 1 and offered for Red 1 again: nothing written, still enrolled.
    again = enroll_tag(registry, tag, RED_1)
    assert (again.status, again.wrote, tag.written) == ("enrolled", False, [RED_1.id])
    # A read-only tag that names another card can never become this one.
    locked = WrittenTag(UID_B, RED_2.id, writable=False)
    assert enroll_tag(registry, locked, RED_1, force=True).status == "refused"
    assert registry.lookup(UID_B) is None
    # A write that does not take on a tag naming another card: refused, nothing registered.
    stuck = WrittenTag("04000000000003", RED_2.id, writable=True, takes=False)
    assert enroll_tag(registry, stuck, RED_1, force=True).status == "refused"
    assert registry.lookup("04000000000003") is None
    # A blank tag whose write fails is still registered by its UID.
    blank = WrittenTag("04000000000004", None, writable=True, takes=False)
    result = enroll_tag(registry, blank, RED_1)
    assert (result.status, result.wrote) == ("enrolled", False)
    assert registry.entry("04000000000004").ndef is False  # type: ignore[union-attr]


def test_a_blank_tag_whose_write_fails_is_enrolled_with_a_warning(registry: Registry) -> None:
    blank = WrittenTag(UID_A, None, writable=True, takes=False)
    result = enroll_tag(registry, blank, RED_1)
    assert result.status == "enrolled" and result.warning == (
        "the card id could not be written on the tag (the write did not take)"
    )
    assert result.message == (
        "Red 1: UID registered, but the card id could not be written on the tag (the write did not take); "
        "the UID alone is enough to play it."
    )
    assert result.to_json()["warning"] == result.warning
    # A tag that knows why (an NfcTag: too small, a failed write) says why.
    blank = WrittenTag(UID_B, None, writable=True, takes=False)
    blank.write_error = "it holds 16 bytes, the card id needs 21"  # type: ignore[attr-defined]
    assert "(it holds 16 bytes, the card id needs 21)" in enroll_tag(registry, blank, RED_2).message
    # Written, or nothing to write: no warning.
    assert enroll_tag(registry, WrittenTag("04000000000005", None, writable=True), RED_1).warning == ""
    assert enroll_tag(registry, WrittenTag("04000000000006", None, writable=False), RED_1).warning == ""


# The command line finds the installed registry, and reading never creates one


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed config (as /etc/companion/companion.toml) naming the service's registry; the
    command runs from another folder, as `cd /tmp && companion cards list` does."""
    service = tmp_path / "var" / "lib" / "companion"
    config = tmp_path / "etc" / "companion.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[journal]\npath = "{service / "journal.db"}"\n')
    monkeypatch.setattr("companion.core.config.INSTALLED_CONFIG", config)
    monkeypatch.chdir(tmp_path / "etc")
    monkeypatch.delenv("COMPANION_DB", raising=False)
    return service / "cards.db"


def test_cards_commands_default_to_the_installed_config(
    installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing enrolled yet: list and export say so, and create no database, here or there.
    code = main(["cards", "list", "--game", "spy-team"])
    captured = capsys.readouterr()
    assert code == 0 and "Spy Team: 0/48 cards have a tag" in captured.out
    assert f"no card registry at {installed} yet" in captured.err
    assert main(["cards", "export"]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": 1, "tags": []}
    assert not installed.exists() and not installed.parent.exists()
    assert list((tmp_path / "etc").iterdir()) == [tmp_path / "etc" / "companion.toml"]

    # Writing goes to the service's registry, the one the daemon reads.
    backup = tmp_path / "box.json"
    backup.write_text(json.dumps({"version": 1, "tags": [{"uid": UID_A, "card": RED_1.id}]}))
    assert main(["cards", "import", str(backup)]) == 0
    capsys.readouterr()
    daemon_side = Registry.for_daemon(registry_path(load_config(tmp_path / "etc" / "companion.toml")))
    try:
        assert daemon_side.path == str(installed) and daemon_side.lookup(UID_A) == RED_1.id
    finally:
        daemon_side.close()
    code, out = run(capsys, "cards", "list", "--game", "spy-team")
    assert code == 0 and UID_A in out and str(installed) in out


def test_config_and_cards_db_go_before_or_after_the_action(
    installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    here, there = tmp_path / "here.db", tmp_path / "there.db"
    for path, uid in ((here, UID_A), (there, UID_B)):
        setup = Registry(path)
        setup.register(uid, RED_1.id)
        setup.close()
    assert UID_A in run(capsys, "cards", "--cards-db", str(here), "list")[1]
    assert UID_A in run(capsys, "cards", "list", "--cards-db", str(here))[1]
    # Given in both places, the one after the action wins; left out after it, the one before stays.
    out = run(capsys, "cards", "--cards-db", str(here), "list", "--cards-db", str(there))[1]
    assert UID_B in out and UID_A not in out
    other = tmp_path / "other.toml"
    other.write_text(f'[cards]\npath = "{there}"\n')
    assert UID_B in run(capsys, "cards", "forget", UID_B, "--config", str(other))[1]
    assert Registry(there, read_only=True).lookup(UID_B) is None


# A damaged registry is reported by name and cause


def test_a_damaged_registry_is_reported_in_the_log_healthz_enroll_and_doctor(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cards = tmp_path / "cards.db"
    cards.write_text("garbage\n")
    caplog.set_level("INFO")
    running = Daemon(nfc_config(tmp_path, {"device": "virtual"}))
    try:
        running.start()
        errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
        assert (
            len(errors) == 1 and f"the card registry {cards} is damaged (file is not a database)" in errors[0]
        )
        status, health = call(running, "GET", "/healthz")
        # The game still plays (card ids on the tags, the virtual mat): not "unwell", but said.
        assert status == 200 and health["ok"] is True
        assert health["registry"] == f"damaged: {cards}: file is not a database"
        status, answer = call(running, "POST", "/api/cards/enroll", {"uid": UID_A, "card": RED_1.id})
        assert status == 503 and ":memory:" not in answer["error"]
        assert answer["error"] == (
            f"Enrolling is off: the card registry is damaged: {cards}: file is not a database. "
            "See docs/nfc.md."
        )
        status, answer = call(running, "POST", "/api/cards/session", {"game": "spy-team"})
        assert status == 503 and "damaged" in answer["error"] and running.cards.session is None
        assert call(running, "GET", "/api/cards")[1]["registry"].startswith("damaged: ")
    finally:
        running.close()
    assert cards.read_text() == "garbage\n"  # left as it was, for whoever repairs it
    status, message, fix = check_registry(cards)
    assert status == "FAIL" and str(cards) in message and "damaged" in message and "import" in fix


def test_doctor_check_of_a_registry(tmp_path: Path) -> None:
    path = tmp_path / "cards.db"
    assert check_registry(path)[0] == "ok" and not path.exists()  # none yet: the first enrollment
    good = Registry(path)
    good.register(UID_A, RED_1.id)
    good.close()
    assert check_registry(path) == ("ok", f"{path}: 1 tag enrolled, integrity ok", "")


def test_healthz_says_the_registry_is_ok(daemon: Daemon) -> None:
    status, health = call(daemon, "GET", "/healthz")
    assert status == 200 and health["ok"] is True and health["registry"] == "ok"


# During an enrollment no tap reaches the game


def test_the_virtual_mat_cannot_play_while_a_deck_is_enrolled(daemon: Daemon) -> None:
    assert call(daemon, "GET", "/api/cards")[1]["nfc_readers"] == 0  # the virtual mat only
    daemon.table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"])
    daemon.table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    daemon.table.act({"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    assert call(daemon, "POST", "/api/cards/session", {"game": "spy-team"})[0] == 201
    status, answer = call(daemon, "POST", "/api/taps", {"card": RED_1.id})
    assert status == 409 and "An enrollment of Spy Team is running" in answer["error"]
    assert call(daemon, "POST", "/api/taps", {"uid": UID_A})[0] == 409
    assert call(daemon, "POST", "/api/taps", {"card": RED_1.id}, auth=False)[0] == 401  # the token first
    assert daemon.table.view()["played"] == [] and daemon.cards.progress()["position"] == 0  # type: ignore[index]
    # The UID typed in enrolls (the session tap); then, stopped, the mat plays again.
    assert call(daemon, "POST", "/api/cards/session/tap", {"uid": UID_A})[1]["session"]["position"] == 1
    assert call(daemon, "DELETE", "/api/cards/session")[0] == 200
    status, view = call(daemon, "POST", "/api/taps", {"card": RED_1.id})
    assert status == 200 and view["played"] == [RED_1.id]
