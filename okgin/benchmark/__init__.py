"""The okgin benchmark: a protocol that fixes rule sets, anchors, seeds and counts (``protocol``), a
frozen rating scale (``scale``) and the one-command report card of an agent (``card``,
``okgin-benchmark AGENT``). docs/benchmark.md describes all three."""
