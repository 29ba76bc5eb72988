"""`companion doctor`: one line per check, what to fix, exit 1 on any FAIL; and it changes nothing.

The torn-write, hand-edited, full-disk and read-only cases are in test_crash.py, on real daemons."""

from __future__ import annotations

import socket
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.cli import main
from companion.games import build_engines
from companion.games.catalog import load_catalog
from companion.table.journal import Journal
from companion.table.table import Table
from tests.table.test_crash import PLAYERS, Companion, free_port


@pytest.fixture(autouse=True)
def no_installed_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever this machine has in /etc, the tests say which config they mean."""
    monkeypatch.setattr("companion.core.config.INSTALLED_CONFIG", tmp_path / "not-installed.toml")
    monkeypatch.setattr("companion.appliance.doctor.system.SERVICE_UNIT", tmp_path / "not-installed.service")
    monkeypatch.delenv("COMPANION_TOKEN", raising=False)
    monkeypatch.delenv("COMPANION_DB", raising=False)


def write_config(tmp_path: Path, text: str = "", mode: int = 0o640) -> Path:
    config = tmp_path / "companion.toml"
    config.write_text(text or '[server]\ntoken = "a-long-enough-token"\n[reader]\ndevice = "virtual"\n')
    config.chmod(mode)
    return config


def game_journal(db: Path, inputs: int = 2) -> None:
    table = Table(Journal(db), build_engines(load_catalog()))
    table.start("spy-team", PLAYERS)
    for seat in range(inputs):
        table.act({"type": "mission", "seat": seat, "tile": "3/3", "target": 3})
    table.journal.close()


def run_doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, list[str]]]:
    """Exit status and the lines by check name."""
    status = main(["doctor", *args])
    lines: dict[str, list[str]] = {}
    for line in capsys.readouterr().out.splitlines():
        if line[:4].strip() in ("ok", "warn", "FAIL"):
            name = line[5:].split(":", 1)[0]
            lines.setdefault(name, []).append(line)
    return status, lines


def only(lines: dict[str, list[str]], name: str) -> str:
    assert len(lines.get(name, [])) == 1, lines
    return lines[name][0]


def test_a_healthy_table_passes_with_one_line_per_check(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "journal.db"
    game_journal(db)
    status, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    assert status == 0
    assert only(lines, "config").startswith("ok   config:")
    assert only(lines, "token") == "ok   token: a control token is set"
    journal = only(lines, "journal")
    assert journal.startswith(f"ok   journal: {db}: 3 entries (last 3), spy-team round 1, playing"), journal
    assert "KiB on disk" in journal and "archive" not in journal  # one game: nothing archived yet
    assert only(lines, "port").startswith("ok   port:") and "is free" in lines["port"][0]
    assert only(lines, "reader").startswith("ok   reader: the virtual reader")
    assert only(lines, "disk").startswith("ok   disk:")
    assert only(lines, "pins").split()[0] in ("ok", "warn")  # warn here: no GPIO, mock pins


def test_doctor_changes_nothing(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "journal.db"
    game_journal(db)
    before = db.read_bytes()
    run_doctor(capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port()))
    assert db.read_bytes() == before
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0


def test_no_token_fails_and_says_where_to_set_it(tmp_path: Path, capsys: Any) -> None:
    config = write_config(tmp_path, '[server]\nport = 8000\n[reader]\ndevice = "virtual"\n')
    status, lines = run_doctor(capsys, "--config", str(config), "--db", str(tmp_path / "j.db"), "--port", "1")
    assert status == 1
    assert only(lines, "token").startswith("FAIL token: no control token")
    assert f"set token in [server] of {config}" in lines["token"][0]


def test_a_config_that_is_not_toml_fails(tmp_path: Path, capsys: Any) -> None:
    config = write_config(tmp_path, "[server\nport = 8000\n")
    status, lines = run_doctor(capsys, "--config", str(config), "--db", str(tmp_path / "j.db"))
    assert status == 1
    assert only(lines, "config").startswith(f"FAIL config: the config file {config} is not valid TOML")
    assert "-> fix: edit" in lines["config"][0]


def test_a_config_readable_by_everyone_is_a_warning(tmp_path: Path, capsys: Any) -> None:
    config = write_config(tmp_path, mode=0o644)
    status, lines = run_doctor(
        capsys, "--config", str(config), "--db", str(tmp_path / "j.db"), "--port", str(free_port())
    )
    assert status == 0
    assert any(line.startswith("warn config:") and f"chmod 640 {config}" in line for line in lines["config"])


def test_a_port_taken_by_another_program_fails(tmp_path: Path, capsys: Any) -> None:
    with socket.socket() as other:  # another web server: it answers, but not as a companion
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]

        def answer() -> None:
            connection, _ = other.accept()
            with connection:
                connection.recv(4096)
                connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<h1>hello</h1>")

        threading.Thread(target=answer, daemon=True).start()
        config = write_config(
            tmp_path, '[server]\nhost = "127.0.0.1"\ntoken = "t"\n[reader]\ndevice = "virtual"\n'
        )
        status, lines = run_doctor(
            capsys, "--config", str(config), "--db", str(tmp_path / "j.db"), "--port", str(port)
        )
    assert status == 1
    assert only(lines, "port").startswith(f"FAIL port: 127.0.0.1:{port} is taken by another program")


def test_a_port_held_by_a_running_companion_is_fine_and_its_readers_are_asked(
    tmp_path: Path, capsys: Any
) -> None:
    db = tmp_path / "journal.db"
    with Companion(db).start() as server:
        config = write_config(
            tmp_path, '[server]\nhost = "127.0.0.1"\ntoken = "t"\n[reader]\ndevice = "auto"\n'
        )
        status, lines = run_doctor(
            capsys, "--config", str(config), "--db", str(db), "--port", str(server.port)
        )
    assert status == 0, lines
    assert only(lines, "port") == f"ok   port: a companion is running on port {server.port} (journal ok)"
    # `auto` found nothing, so the virtual reader stands in while the daemon keeps looking: the
    # line names every family it looks for, in order, and what it never probes.
    reader = only(lines, "reader")
    assert reader.startswith(
        "ok   reader: reader auto: none found yet, looking for pcsc (readers pcscd lists); "
        "nfcpy (usb; on a Pi a PN532 on the UART); pn532:i2c1 (a PN532 at 0x24 on /dev/i2c-1): "
        "the virtual reader stands in; never probed: keyboard readers (hid:)"
    )
    assert "boards on SPI (pn532:spi0.0, rc522:spi0.0)" in reader


def test_no_nfc_reader_is_a_warning_for_auto_and_a_failure_for_a_named_one(
    tmp_path: Path, capsys: Any
) -> None:
    auto = write_config(tmp_path, '[server]\ntoken = "t"\n[reader]\ndevice = "auto"\n')
    status, lines = run_doctor(
        capsys, "--config", str(auto), "--db", str(tmp_path / "j.db"), "--port", str(free_port())
    )
    assert status == 0
    [reader] = [line for line in lines["reader"] if "auto looked for" in line]
    assert reader.startswith(
        "warn reader: auto looked for pcsc (readers pcscd lists): none; "
        "nfcpy (usb; on a Pi a PN532 on the UART): none; pn532:i2c1 (a PN532 at 0x24 on /dev/i2c-1): none: "
        "no reader found, so the virtual reader stands in while the daemon keeps looking; "
        "never probed: keyboard readers (hid:)"
    )
    assert "name it in [reader] device" in reader

    named = write_config(tmp_path, '[server]\ntoken = "t"\n[reader]\ndevice = "usb:054c:06c3"\n')
    status, lines = run_doctor(
        capsys, "--config", str(named), "--db", str(tmp_path / "j.db"), "--port", str(free_port())
    )
    assert status == 1
    assert any(line.startswith("FAIL reader: no NFC reader at usb:054c:06c3") for line in lines["reader"])


def test_a_missing_libusb_is_named_not_taken_for_a_missing_reader(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without libusb-1.0 nfcpy finds no USB reader: the fix is a package, not a cable (issue 16, 10)."""
    import usb1

    def no_libusb() -> None:  # what usb1 raises when it cannot load the C library
        raise FileNotFoundError(2, "cannot find a suitable libusb-1.0", ["libusb-1.0.so.0"])

    monkeypatch.setattr(usb1, "getVersion", no_libusb)
    auto = write_config(tmp_path, '[server]\ntoken = "t"\n[reader]\ndevice = "auto"\n')
    status, lines = run_doctor(
        capsys, "--config", str(auto), "--db", str(tmp_path / "j.db"), "--port", str(free_port())
    )
    assert status == 1
    reader = only(lines, "reader")
    assert reader.startswith("FAIL reader: libusb-1.0 is not installed (cannot find a suitable libusb-1.0)")
    assert "apt install libusb-1.0-0" in reader and "plug in" not in reader


def test_a_journal_not_there_yet_is_fine(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "state" / "journal.db"
    _, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    assert only(lines, "journal").startswith(f"ok   journal: no journal yet at {db}")


def test_a_journal_the_rules_refuse_fails(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "journal.db"
    Journal(db).append({"type": "tap", "card": "spy-team/red-1"}, "t")  # a card before any game
    status, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    assert status == 1
    assert only(lines, "journal").startswith("FAIL journal: the journal holds an input the rules refuse")


def test_a_file_that_is_not_a_journal_fails(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "journal.db"
    db.write_bytes(b"this is not a database, it only has the name of one" * 100)
    status, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    assert status == 1
    assert only(lines, "journal").startswith("FAIL journal:")
    assert "cannot be read as a journal" in lines["journal"][0] and "backup" in lines["journal"][0]


@pytest.mark.parametrize(("age", "status"), [(timedelta(hours=1), "warn"), (timedelta(days=30), "ok")])
def test_a_recorded_recovery_is_news_for_a_week(
    tmp_path: Path, capsys: Any, age: timedelta, status: str
) -> None:
    db = tmp_path / "journal.db"
    game_journal(db)
    at = (datetime.now(UTC) - age).isoformat(timespec="seconds")
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO recoveries (at, detail) VALUES (?, 'a torn write')", (at,))
    _, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    recovered = [line for line in lines["journal"] if "recovered" in line]
    assert recovered == [
        f"{status:<4} journal: recovered from a torn write 1 time(s), last at {at}: a torn write"
        + (
            " -> fix: nothing was lost; if it happens again, check the power supply and the SD card"
            if status == "warn"
            else ""
        )
    ]


def test_an_empty_journal_file_is_fine_as_the_daemon_starts_on_it(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "journal.db"
    db.touch()  # 0 bytes: a SQLite file without tables, no "entries" yet
    status, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    assert status == 0, lines
    assert only(lines, "journal").startswith(f"ok   journal: {db}: empty journal (no entries yet)")
    assert db.stat().st_size == 0  # doctor wrote nothing
    table = Table(Journal(db), build_engines(load_catalog()))  # and the daemon opens it as doctor says
    assert table.view().get("game") is None and list(table.journal.entries()) == []
    table.journal.close()


def test_another_database_at_the_journal_path_is_a_warning(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "journal.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE cards (uid TEXT, card TEXT)")
    conn.close()
    status, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    assert status == 0
    journal = only(lines, "journal")
    assert journal.startswith(f"warn journal: {db} holds no journal entries, only the tables cards")
    assert "-> fix: check path in [journal]" in journal


def uart_config(tmp_path: Path, pins: str = "") -> Path:
    return write_config(
        tmp_path, f'[server]\ntoken = "t"\n[reader]\ndevice = "tty:AMA0:pn532"\n[pins]\n{pins}'
    )


def test_a_button_on_the_uart_of_a_serial_reader_fails(tmp_path: Path, capsys: Any) -> None:
    config = uart_config(tmp_path, "next_button = 14\n")
    status, lines = run_doctor(
        capsys, "--config", str(config), "--db", str(tmp_path / "j.db"), "--port", str(free_port())
    )
    assert status == 1
    pins = only(lines, "pins")
    assert pins.startswith("FAIL pins: [pins] next_button is on GPIO 14, which the reader on the UART")
    assert "tty:AMA0:pn532" in pins


def test_the_default_pins_leave_the_uart_to_a_serial_reader(tmp_path: Path, capsys: Any) -> None:
    _, lines = run_doctor(
        capsys, "--config", str(uart_config(tmp_path)), "--db", str(tmp_path / "j.db"),
        "--port", str(free_port()),
    )  # fmt: skip
    assert only(lines, "pins").split()[0] in ("ok", "warn")  # warn here: no GPIO, mock pins


def test_a_damaged_card_registry_fails_and_says_how_to_restore_it(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "journal.db"
    game_journal(db)
    (tmp_path / "cards.db").write_bytes(b"garbage, not a database" * 100)
    status, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    assert status == 1
    registry = only(lines, "registry")
    assert registry.startswith("FAIL registry:") and str(tmp_path / "cards.db") in registry, registry
    assert "companion cards import" in registry


def test_the_journal_line_shows_its_size_and_the_archive_of_finished_games(
    tmp_path: Path, capsys: Any
) -> None:
    db = tmp_path / "journal.db"
    game_journal(db)
    game_journal(db, inputs=1)  # a second game: the first one is archived
    _, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    journal = only(lines, "journal")
    assert journal.startswith(f"ok   journal: {db}: 5 entries (last 5), spy-team round 1, playing"), journal
    assert "+ archive" in journal and "(3 entries of finished games)" in journal, journal


def test_a_database_that_is_not_a_journal_fails_in_one_line(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "journal.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE entries (x)")
    status, lines = run_doctor(
        capsys, "--config", str(write_config(tmp_path)), "--db", str(db), "--port", str(free_port())
    )
    assert status == 1
    assert only(lines, "journal").startswith(
        f"FAIL journal: {db}: not a journal this version can use (its entries table"
    )
