"""The vocabulary every part shares: the config file (`config`), the cue names and how each cue
looks on the pages (`cues`), and where the shipped files are (`resources`).

Imports: nothing of companion.
"""
