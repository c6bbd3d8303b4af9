"""Plug-in policies for tests/test_plugins.py and the worked example of docs/policies.md."""
