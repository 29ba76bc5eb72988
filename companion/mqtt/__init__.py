"""Beyond one table, over MQTT (docs/mqtt.md): the table listener that publishes to a broker
(`bridge`), the results it must never lose (`outbox`, `results`), Home Assistant's discovery
(`homeassistant`) and the league that gathers many tables' results (`league`) and rates their
players (`ratings`).

Imports: companion.core, companion.games, companion.table.
"""

from companion._moved import forward

__getattr__ = forward(
    __name__, "companion.mqtt.bridge"
)  # `from companion.mqtt import MqttBridge`, before 0.2
