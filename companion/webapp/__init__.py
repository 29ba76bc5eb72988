"""The web side (the pages themselves are in `web/`): the Flask application factory (`app`), the API
blueprint (`api`) and the card registry's (`cards_api`), what they talk to (`services`), the event
streams to the scoreboards (`events`), the games and cues the pages learn (`presentation`), past
games (`history`), the phones' connectivity probes and the table's Wi-Fi (`hotspot`), pairing a
control device (`pairing`), static files (`static`) and the HTTP server (`server`).

Not named `web`: the wheel ships the pages as `companion/web`.

Imports: companion.core, companion.games, companion.table, companion.pins, companion.readers,
companion.mqtt, companion.network.
"""
