"""ChartSpec -> PNG bytes, cached.

matplotlib is imported inside ``draw_png`` (importing it costs about a second) and drives a bare
``Figure`` with the Agg canvas: no pyplot, no global figure state, no display. The output is
deterministic (no "Software" or date metadata), and an LRU cache keyed on the frozen, hashable
``ChartSpec`` makes a repeated chart free. All labels come from the spec, already localized.
"""

from __future__ import annotations

import io
import threading
import warnings
from collections import OrderedDict
from typing import TYPE_CHECKING

from bot.reply import ChartSpec

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.5, 100  # 800 x 450 pixels
CACHE_SIZE = 128
PNG_LEVEL = 3
DEFAULT_TICKS = tuple(1 << n for n in range(12, 18))  # 4K ... 128K tokens
LIMIT_COLOUR = "#E74C3C"
BAR_COLOUR = "#3498DB"


def _text(label: str) -> str:
    """Keeps "$" literal: matplotlib would read "$...$" as mathtext and may raise on it."""
    return label.replace("$", r"\$")


def tokens_label(tokens: int) -> str:
    """4096 -> "4K", 1048576 -> "1M"."""
    if tokens >= 1 << 20 and tokens % (1 << 20) == 0:
        return f"{tokens >> 20}M"
    if tokens >= 1024 and tokens % 1024 == 0:
        return f"{tokens >> 10}K"
    return str(tokens)


def _context_ticks(xs: list[float]) -> list[int]:
    """Powers of two covering the data (at least 4K ... 128K when there is no data)."""
    if not xs:
        return list(DEFAULT_TICKS)
    low = 1 << max(int(min(xs)).bit_length() - 1, 0)
    high = max(xs)
    ticks = []
    tick = low
    while tick <= high * 1.0001:
        ticks.append(tick)
        tick <<= 1
    return ticks or [low]


def _memory_vs_context(ax: Axes, spec: ChartSpec) -> None:
    xs: list[float] = []
    for series in spec.series:
        points = sorted((x, y) for x, y in series.points if x > 0)
        xs += [x for x, _ in points]
        ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=_text(series.name) or " ")
    ax.set_xscale("log", base=2)
    ticks = _context_ticks(xs)
    ax.set_xticks(ticks, [tokens_label(t) for t in ticks])
    ax.minorticks_off()
    if spec.limit is not None:
        ax.axhline(
            spec.limit,
            color=LIMIT_COLOUR,
            linestyle="--",
            linewidth=1.5,
            label=_text(spec.limit_label) or " ",
        )
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if spec.series or spec.limit is not None:
        ax.legend(loc="upper left")


def _speed_per_gpu(ax: Axes, spec: ChartSpec) -> None:
    names = [_text(name) for name, _ in spec.bars]
    values = [max(value, 0.0) for _, value in spec.bars]
    positions = list(range(len(values)))
    bars = ax.barh(positions, values, color=BAR_COLOUR)
    ax.set_yticks(positions, names)
    ax.invert_yaxis()  # first bar on top
    ax.bar_label(bars, labels=[f"{v:.0f}" if v >= 10 else f"{v:.1f}" for v in values], padding=3)
    ax.set_xlim(0, max(values or [1.0]) * 1.15 or 1.0)
    ax.grid(True, axis="x", alpha=0.3)


_rendered: OrderedDict[ChartSpec, bytes] = OrderedDict()
_lock = threading.Lock()  # adapters render in worker threads


def cached_png(spec: ChartSpec) -> bytes | None:
    """The chart if it was rendered already (adapters skip deferring then), else None."""
    with _lock:
        return _rendered.get(spec)


def render_png(spec: ChartSpec) -> bytes:
    """The chart as PNG bytes (800 x 450); equal specs return the same cached object (LRU)."""
    with _lock:
        if spec in _rendered:
            _rendered.move_to_end(spec)
            return _rendered[spec]
    png = draw_png(spec)
    with _lock:
        png = _rendered.setdefault(spec, png)  # a concurrent render of the same spec keeps the first
        while len(_rendered) > CACHE_SIZE:
            _rendered.popitem(last=False)
    return png


def draw_png(spec: ChartSpec) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # zlib level 3, not 6: the PNG 7 % larger, the chart a tenth faster
        laid_out(spec).savefig(
            buf, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs={"compress_level": PNG_LEVEL}
        )
    return buf.getvalue()


def laid_out(spec: ChartSpec) -> Figure:
    """The chart's figure, drawn and laid out, not yet rendered."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    # A missing glyph (emoji in a label) only warns; a chart must not fail over it, and the test suite
    # turns warnings into errors.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if spec.kind == "memory_vs_context":
            _memory_vs_context(ax, spec)
        else:
            _speed_per_gpu(ax, spec)
        ax.set_title(_text(spec.title))
        ax.set_xlabel(_text(spec.x_label))
        ax.set_ylabel(_text(spec.y_label))
        _fit_margins(fig, ax)
    return fig


def _fit_margins(fig: Figure, ax: Axes) -> None:
    """``tight_layout``'s margins from the few texts that decide them: tick labels, axis labels, the title.
    ``tight_layout`` measures every artist of the figure several times over, which doubled a chart's cost."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    px = fig.dpi / 72  # pixels per point

    def extent(texts: list[Text]) -> tuple[float, float]:
        boxes = [text.get_window_extent(renderer) for text in texts if text.get_visible() and text.get_text()]
        return max((b.width for b in boxes), default=0.0), max((b.height for b in boxes), default=0.0)

    pad = 1.08 * 10 * px  # tight_layout's: 1.08 font sizes
    tick = (3.5 + 3.5) * px  # a tick's length and its label's pad
    gap = 4 * px  # an axis label's pad
    ytick_w, _ = extent(ax.get_yticklabels())
    xtick_w, xtick_h = extent(ax.get_xticklabels())
    ylabel_w, _ = extent([ax.yaxis.label])
    _, xlabel_h = extent([ax.xaxis.label])
    _, title_h = extent([ax.title])
    width, height = fig.bbox.width, fig.bbox.height
    fig.subplots_adjust(
        left=(pad + ylabel_w + (gap if ylabel_w else 0) + ytick_w + tick) / width,
        right=1 - (pad + xtick_w / 2) / width,
        bottom=(pad + xlabel_h + (gap if xlabel_h else 0) + xtick_h + tick) / height,
        top=1 - (pad + title_h + 6 * px) / height,
    )
