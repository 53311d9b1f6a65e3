"""Round 9: policy improvement from exact rollouts of the real game (see README.md here)."""
