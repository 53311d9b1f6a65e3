"""EAAI rules and Neller's Simple player: statistics beside the framework's (see README.md here)."""
