"""`companion run` with a `tty:` PN532 reader (tests/pn532_emulator.py): a whole Spy Team round
tapped on it, a card held, a malformed tag and a MIFARE Classic card, then a `kill -9` and a restart
without a power cycle (issue 16). The daemon is started in a session of its own, as systemd does."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from tests.nfc_helpers import SseClient
from tests.pn532_emulator import MifareClassic, Ntag, Pn532Emulator, ndef_tlv
from tests.spy_team_play import trick_cards
from tests.table.test_crash import Companion
from tests.waiting import wait_for


class TableWithPn532(Companion):
    """`companion run` reading from the emulated PN532, as the systemd unit starts it."""

    def __init__(self, db: Path, reader: str) -> None:
        super().__init__(db)
        self.config = db.with_name("companion.toml")
        self.config.write_text(f'[reader]\ndevice = "{reader}"\ndebounce = 0.3\nretry = 0.3\n')

    def command(self) -> list[str]:
        return [*super().command(), "--config", str(self.config)]

    def start(self, wait: bool = True) -> TableWithPn532:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                self.command(), env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        if wait:
            self.wait_ready()
        return self

    def post(self, path: str, body: Any) -> None:
        status, answer = self.call("POST", path, body)
        assert status in (200, 201), answer

    def reader(self) -> dict[str, Any]:
        _, health = self.call("GET", "/healthz")
        return dict(health["readers"][0])


def ntag(number: int, text: str | None = None, data: bytes | None = None) -> Ntag:
    return Ntag(f"04{number:012x}", 215, text=text, data=data)


def cues(events: SseClient, name: str) -> list[dict[str, Any]]:
    return [data for _, kind, data in events.events if kind == "cue" and data["cue"] == name]


def test_a_spy_team_round_on_a_serial_pn532_then_kill_9_and_restart(tmp_path: Path) -> None:
    with Pn532Emulator(tmp_path) as board:
        db = tmp_path / "journal.db"
        table = TableWithPn532(db, board.path).start()
        try:
            wait_for(lambda: table.reader()["connected"])
            events = SseClient(table.url)
            players = ["Ann", "Bob", "Cid", "Dee"]
            table.post("/api/games", {"game": "spy-team", "players": players, "options": {"start": 0}})
            table.post("/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
            table.post("/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})

            # A MIFARE Classic card and a tag with a torn NDEF message: the unknown-card cue with
            # their UIDs, and the reader never lost.
            board.put(MifareClassic("c0ffee01"))
            wait_for(lambda: cues(events, "unknown-card"))
            board.put(ntag(99, data=ndef_tlv(b"\xd1\x01\x30T\x02en spy")))
            wait_for(lambda: len(cues(events, "unknown-card")) == 2)
            board.lift()
            assert [c["data"]["uid"] for c in cues(events, "unknown-card")] == ["c0ffee01", f"04{99:012x}"]

            # A whole round (B.I.R.D., aiming for one trick, takes two: sabotaged), card by card; the
            # first card lies on the reader a while and counts once.
            number = 0
            for _ in range(2):
                for card in trick_cards(table.state(), winner=1):
                    number += 1
                    board.put(ntag(number, card))
                    wait_for(lambda n=number: table.reader()["taps"] == 2 + n)  # type: ignore[misc]
                    if number == 1:
                        # Held: the daemon checks it is still there (an InListPassiveTarget by its
                        # UID) again and again; 25 of those, and it is neither read nor played again.
                        reads, checks = table.reader()["reads"], len(board.chip.stats.polls)
                        wait_for(lambda c=checks: len(board.chip.stats.polls) >= c + 25)  # type: ignore[misc]
                        assert len(table.state()["played"]) == 1 and table.reader()["reads"] == reads
                    board.lift()
            wait_for(lambda: cues(events, "mission-sabotaged"))
            [round_1] = table.state()["rounds"]
            assert round_1["outcome"] == "sabotaged" and round_1["winners"] == [0, 2]
            assert len(cues(events, "card-accepted")) == 2 + 8  # two missions, eight cards
            assert cues(events, "reader-lost") == [] and table.reader()["opens"] == 1
            assert board.chip.baud == 115200 and board.chip.power_downs == 0  # never raised, never slept
            events.close()

            # kill -9 mid-game, and a restart on the same chip (no power cycle): the next tap counts
            # within 10 s of the restart.
            table.kill9()
            restarted = time.monotonic()
            table.start()
            assert table.state()["round"] == 2  # the journal kept the round
            table.post("/api/actions", {"type": "mission", "seat": 0, "tile": "2/4", "target": 2})
            table.post("/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
            card = trick_cards(table.state(), winner=0)[0]
            board.put(ntag(50, card))
            wait_for(lambda: table.state()["played"] == [card], timeout=10)
            assert time.monotonic() - restarted < 10
        except AssertionError as error:
            raise AssertionError(f"{error}\nthe daemon's log:\n{table.output()[-3000:]}") from None
        finally:
            if table.process is not None and table.process.poll() is None:
                table.stop()
