"""Home Assistant MQTT discovery: one device per table, its sensors read the table's own topics.

Each entity is announced by a retained config message on
`<discovery_prefix>/<component>/<node_id>/<object_id>/config` (Home Assistant's MQTT discovery);
the sensors take their values from the retained state topic with a template, the event entity from
the cue topic, and the status topic tells Home Assistant whether the table is there. So discovery
adds no topic of its own and shows only what the scoreboard shows. Pure: builds payloads only.
"""

from __future__ import annotations

from typing import Any

from companion import __version__
from companion.core.config import MqttSettings
from companion.core.cues import CUE_NAMES

MAX_SEATS = 5  # the most players any game seats; a seat with nobody reads "unknown"

# Home Assistant templates are Jinja: `value_json` is the message's JSON.
TURN = (
    "{% set seat = value_json.prompt.seat %}"
    "{{ value_json.players[seat].name if seat is not none and seat < value_json.players | length else '' }}"
)
SEAT_SCORE = (
    "{{{{ value_json.players[{seat}].score if value_json.players | length > {seat} else 'unknown' }}}}"
)
SEAT_NAME = (
    "{{{{ {{'player': value_json.players[{seat}].name if value_json.players | length > {seat} else ''}}"
    " | tojson }}}}"
)
ANNOUNCEMENT = "{{ value_json.text[:255] }}"  # a sensor's state holds at most 255 characters
CUE_EVENT = "{{ {'event_type': value_json.cue, 'seat': value_json.seat, 'text': value_json.text} | tojson }}"


def discovery_messages(settings: MqttSettings) -> list[tuple[str, dict[str, Any]]]:
    """(topic, config) of every entity of this table's device, to publish retained."""
    node = f"companion_{settings.table}".replace("-", "_")
    state, cue = f"{settings.topic}/state", f"{settings.topic}/cue"
    common = {
        "availability_topic": f"{settings.topic}/status",
        "payload_available": "online",
        "payload_not_available": "offline",
        "device": {
            "identifiers": [node],
            "name": f"Table Companion {settings.table}",
            "manufacturer": "Table Companion",
            "model": "card table",
            "sw_version": __version__,
        },
    }

    def entity(component: str, key: str, name: str, **config: Any) -> tuple[str, dict[str, Any]]:
        topic = f"{settings.discovery_prefix}/{component}/{node}/{key}/config"
        return topic, {"name": name, "unique_id": f"{node}_{key}", **config, **common}

    messages = [
        entity("sensor", "game", "Game", state_topic=state, value_template="{{ value_json.game or 'none' }}"),
        entity("sensor", "status", "Status", state_topic=state, value_template="{{ value_json.status }}"),
        entity("sensor", "turn", "Whose turn", state_topic=state, value_template=TURN),
        entity("sensor", "announcement", "Last announcement", state_topic=cue, value_template=ANNOUNCEMENT),
    ]
    for seat in range(MAX_SEATS):
        messages.append(
            entity(
                "sensor",
                f"score_{seat + 1}",
                f"Seat {seat + 1} score",
                state_topic=state,
                value_template=SEAT_SCORE.format(seat=seat),
                json_attributes_topic=state,
                json_attributes_template=SEAT_NAME.format(seat=seat),
            )
        )
    messages.append(
        entity(
            "event", "cue", "Cue", state_topic=cue, value_template=CUE_EVENT, event_types=sorted(CUE_NAMES)
        )
    )
    return messages
