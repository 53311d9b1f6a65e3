"""Round 8: expert iteration on a search that follows the shipped agent (see README.md here)."""
