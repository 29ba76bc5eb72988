"""What every check reports: a `Check`, one line of `companion doctor`, made by `ok`, `warn` or `fail`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Check:
    name: str
    status: str  # "ok", "warn" or "FAIL"
    message: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.status:<4} {self.name}: {self.message}"
        return f"{text} -> fix: {self.fix}" if self.fix and self.status != "ok" else text


def ok(name: str, message: str) -> Check:
    return Check(name, "ok", message)


def warn(name: str, message: str, fix: str) -> Check:
    return Check(name, "warn", message, fix)


def fail(name: str, message: str, fix: str) -> Check:
    return Check(name, "FAIL", message, fix)
