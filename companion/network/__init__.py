"""The table's own Wi-Fi when there is none (docs/operations.md, "Its own Wi-Fi"): the rules that
decide when to raise and drop the access point, a pure state machine with the clock passed in
(`rules`); NetworkManager's D-Bus API, a thin adapter (`nm`); the Wi-Fi QR code's text and the
generated password (`wifi`); and the watcher that runs the rules against NetworkManager (`hotspot`).

Imports: companion.core.
"""
