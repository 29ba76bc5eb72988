"""The network tests' fixtures: NetworkManager mocked on a private D-Bus (tests/nm_mock.py)."""

from tests.nm_mock import mock_nm

__all__ = ["mock_nm"]
