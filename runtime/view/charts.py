"""Grouped bar charts as inline SVG: one group of bars per category (or template), one bar per model,
each with its interval drawn as a whisker. The numbers are the scoring report's, drawn as given."""

from __future__ import annotations

from html import escape

# One colour per model, in order (a palette readable by most colour-blind readers).
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")
BAR_WIDTH = 14
GROUP_GAP = 18
HEIGHT = 160  # of the plotting area, for values 0..1
LEFT, TOP, BOTTOM = 34, 10, 90  # margins: the axis labels, and the group names written slanting


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def bar_chart(title: str, groups: list[str], series: list[tuple[str, list[dict | None]]], metric: str) -> str:
    """An SVG of `metric` (accuracy or f1, in 0..1) per group, a bar per series (model); each value is a
    group's metrics from the report (with `<metric>_ci`), or None where the model has no such group."""
    group_width = len(series) * BAR_WIDTH + GROUP_GAP
    width = LEFT + max(1, len(groups)) * group_width + 10
    y = lambda value: TOP + HEIGHT * (1 - value)  # noqa: E731 - the one mapping of values to heights
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{TOP + HEIGHT + BOTTOM}" role="img" aria-label="{escape(title)}">',
             f"<title>{escape(title)}</title>"]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{LEFT}" x2="{width - 10}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>'
                     f'<text x="{LEFT - 4}" y="{y(tick) + 4:.1f}" text-anchor="end" class="tick">'
                     f"{int(tick * 100)}</text>")
    for g, group in enumerate(groups):
        x0 = LEFT + g * group_width + GROUP_GAP / 2
        for s, (model, values) in enumerate(series):
            metrics = values[g]
            value = None if metrics is None else metrics.get(metric)
            if value is None:
                continue
            x = x0 + s * BAR_WIDTH
            interval = metrics.get(f"{metric}_ci")
            label = f"{model} · {group}: {100 * value:.1f}" + (
                f" [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]" if interval else "") + f" (n={metrics['n']})"
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{y(value):.1f}" width="{BAR_WIDTH - 2}" '
                         f'height="{HEIGHT * value:.1f}" fill="{colour(s)}"><title>{escape(label)}</title></rect>')
            if interval:
                middle = x + (BAR_WIDTH - 2) / 2
                parts.append(f'<path class="ci" d="M{middle:.1f} {y(interval[0]):.1f}V{y(interval[1]):.1f}'
                             f'M{middle - 3:.1f} {y(interval[0]):.1f}h6M{middle - 3:.1f} {y(interval[1]):.1f}h6"/>')
        centre = x0 + len(series) * BAR_WIDTH / 2
        parts.append(f'<text class="group" transform="translate({centre:.1f},{TOP + HEIGHT + 8}) rotate(35)">'
                     f"{escape(group)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def legend(models: list[str]) -> str:
    """The models with their colours, as HTML."""
    return '<p class="legend">' + " ".join(
        f'<span><svg width="12" height="12"><rect width="12" height="12" fill="{colour(i)}"/></svg> '
        f"{escape(model)}</span>" for i, model in enumerate(models)) + "</p>"
