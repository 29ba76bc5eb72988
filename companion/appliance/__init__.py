"""The Pi appliance: wiring everything into one daemon (`daemon`), the `companion` command line
(`cli`, `cards_cli`, `pair_cli`, `hotspot_cli`, `urls`; `loopback`: what those ask the running
daemon), `companion doctor` (`doctor`) and living under systemd (`systemd`).

Imports: every part of companion.
"""
