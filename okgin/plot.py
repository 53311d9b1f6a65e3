"""``evaluate.py --plot PATH``: a picture of a round robin (or a head to head).

Left, the Bradley-Terry ratings with their 95% intervals (round robins); right, the matrix of
points per hand (row agent minus column agent) as a heatmap, each cell printing the figure and
its 95% CI. PNG or SVG by the file's suffix. matplotlib is an optional extra
(``pip install -e '.[plot]'`` in the checkout); it is imported only here, with the Agg canvas (no display).
"""

from __future__ import annotations

import os

import numpy as np

SUFFIXES = (".png", ".svg")


def check_path(path: str) -> None:
    """Raise ValueError (one line) unless ``path`` ends in .png or .svg."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path} must end in .png or .svg (the picture's format), got "
                         f"{suffix or 'no suffix'}")


def require_matplotlib() -> None:
    """Raise ImportError (one line naming the extra) when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError("drawing needs matplotlib, which the plot extra installs: "
                          "pip install -e '.[plot]' in the checkout (or pip install 'matplotlib>=3.7')") from None


def points_matrix(names: list[str], matches: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value, low, high) k x k matrices of points per hand, row agent minus column agent (NaN on the
    diagonal and for pairs that did not play); the lower triangle mirrors the upper one."""
    k = len(names)
    val, lo, hi = (np.full((k, k), np.nan) for _ in range(3))
    index = {n: i for i, n in enumerate(names)}
    for m in matches:
        i, j = index[m["agent_a"]], index[m["agent_b"]]
        val[i, j], (lo[i, j], hi[i, j]) = m["points_per_hand"], m["points_ci"]
        val[j, i], lo[j, i], hi[j, i] = -m["points_per_hand"], -m["points_ci"][1], -m["points_ci"][0]
    return val, lo, hi


def plot_report(report: dict, path: str) -> None:
    """Draw ``evaluate.main``'s report (round robin or head to head) into ``path`` (.png / .svg)."""
    check_path(path)
    require_matplotlib()
    from matplotlib import colors
    from matplotlib.figure import Figure

    names = list(report["agents"])
    ratings = report.get("ratings")
    if ratings:  # best first, in both panels
        names = [row["agent"] for row in ratings]
    k = len(names)
    val, lo, hi = points_matrix(names, report["matches"])

    heat_w = 2.2 + 1.55 * k  # inches: a cell holds "+60.36" over "[+60.03, +60.69]"
    rate_w = 4.6 if ratings else 0.0
    fig = Figure(figsize=(rate_w + heat_w, 1.9 + 0.85 * k), layout="constrained")
    if ratings:
        ax_r, ax_h = fig.subplots(1, 2, width_ratios=[rate_w, heat_w])
    else:
        ax_r, ax_h = None, fig.subplots(1, 1)

    if ax_r is not None:
        y = np.arange(k)
        r = np.array([row["rating"] for row in ratings])
        ci = np.array([row.get("rating_ci") or (row["rating"], row["rating"]) for row in ratings])
        ax_r.errorbar(r, y, xerr=[r - ci[:, 0], ci[:, 1] - r], fmt="o", color="#1f4e79", ecolor="#1f4e79",
                      capsize=4, lw=1.5)
        anchor = report.get("rating_anchor", "")
        for yy, rr, (cl, ch), row in zip(y, r, ci, ratings):  # the figures too: bars 40 Elo wide are hard to read
            label = "0 (anchor)" if row["agent"] == anchor else f"{rr:.0f} [{cl:.0f}, {ch:.0f}]"
            ax_r.annotate(label, (rr, yy), textcoords="offset points", xytext=(0, 8),
                          ha="center", fontsize=8)
        span = max(float(ci.max() - ci.min()), 1.0)
        ax_r.set_xlim(float(ci.min()) - 0.12 * span, float(ci.max()) + 0.12 * span)
        ax_r.set_yticks(y, names)
        ax_r.set_ylim(k - 0.5, -0.5)
        ax_r.grid(axis="x", alpha=0.3)
        method = "bootstrap over deal pairs" if report.get("rating_ci_method") else "no intervals"
        ax_r.set_xlabel(f"Bradley-Terry rating, Elo scale ({anchor} = 0)")
        ax_r.set_title(f"ratings, 95% CI ({method})", fontsize=10)

    finite = np.abs(val[np.isfinite(val)])
    vmax = float(finite.max()) if finite.size else 1.0
    # a symmetric log colour scale: +-60 against random and +-2 between strong bots both stay visible
    norm = colors.SymLogNorm(linthresh=2.0, linscale=1.0, vmin=-vmax, vmax=vmax, base=10)
    cmap = colors.LinearSegmentedColormap.from_list("okgin", ["#b2182b", "#f7f7f7", "#2166ac"])
    im = ax_h.imshow(np.ma.masked_invalid(val), cmap=cmap, norm=norm, aspect="auto")
    ax_h.set_facecolor("#d9d9d9")
    for i in range(k):
        for j in range(k):
            if not np.isfinite(val[i, j]):
                continue
            dark = abs(norm(val[i, j]) - 0.5) > 0.33
            ax_h.text(j, i, f"{val[i, j]:+.2f}\n[{lo[i, j]:+.2f}, {hi[i, j]:+.2f}]", ha="center", va="center",
                      fontsize=8, color="white" if dark else "black")
    ax_h.set_xticks(range(k), names, rotation=30, ha="right")
    ax_h.set_yticks(range(k), names)
    ax_h.set_title("points per hand, row minus column [95% CI]", fontsize=10)
    fig.colorbar(im, ax=ax_h, shrink=0.8, label="points per hand (symmetric log scale)")
    hands = report.get("hands_per_pair")
    deals = "duplicate deals" if report.get("duplicate", True) else "single deals"
    fig.suptitle(f"okgin evaluation: seed {report.get('seed')}, {hands} hands per pair, {deals}", fontsize=11)
    fig.savefig(path, dpi=130)
