"""A dependency-free SVG chart of the summary: one bar per check, drawn as value / target, so every bar is
judged against the same line (1.0 = exactly on target; left of it = met)."""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

WIDTH, ROW, LEFT, PLOT = 1000, 26, 330, 480
CAP = 4.0  # bars longer than 4x the target are clipped (the number is still printed)


def write_svg(summary: list[dict[str, Any]], path: str, info: dict[str, str]) -> None:
    rows = [s for s in summary if s["value"] is not None and s["target"]]
    height = 70 + ROW * len(rows) + 30
    scale = PLOT / CAP
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        '<text x="10" y="20" font-size="15" font-weight="bold">tensorstage vs issue #6 targets '
        "(bar = measured / target; the line at 1 is the target)</text>",
        f'<text x="10" y="38" fill="#555">{escape(info.get("gpu", info.get("cpu", "")))}; jaxlib {escape(info.get("jaxlib", ""))}, '
        f'jax {escape(info.get("jax", ""))}, Python {escape(info.get("python", ""))}</text>',
    ]
    for i, row in enumerate(rows):
        y = 60 + i * ROW
        value, target = float(row["value"]), float(row["target"])
        relative = value / target if target else 0.0
        width = min(relative, CAP) * scale
        colour = "#3a7d44" if relative <= 1.0 else "#c0392b"
        out.append(f'<text x="{LEFT - 8}" y="{y + 15}" text-anchor="end">{escape(row["check"])}</text>')
        out.append(f'<rect x="{LEFT}" y="{y + 4}" width="{width:.1f}" height="{ROW - 8}" fill="{colour}"/>')
        out.append(f'<text x="{LEFT + width + 6:.1f}" y="{y + 15}">{value:.3g} (target {target:g})</text>')
    line_x = LEFT + scale
    bottom = 60 + ROW * len(rows)
    out.append(f'<line x1="{line_x}" y1="52" x2="{line_x}" y2="{bottom}" stroke="black" stroke-dasharray="4 3"/>')
    for tick in range(int(CAP) + 1):
        x = LEFT + tick * scale
        out.append(f'<text x="{x}" y="{bottom + 16}" text-anchor="middle" fill="#555">{tick}x</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
