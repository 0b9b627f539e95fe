"""Charts: small deterministic PNGs, cached per spec, for odd labels and empty data too."""

from __future__ import annotations

import struct

import pytest

from bot.render.charts import DPI, HEIGHT_IN, WIDTH_IN, draw_png, laid_out, render_png, tokens_label
from bot.reply import ChartSpec, Series

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def memory_spec(limit: float | None = 23.5, **changes: object) -> ChartSpec:
    base = {
        "kind": "memory_vs_context",
        "title": "Qwen3 32B: memory vs context",
        "x_label": "Context (tokens)",
        "y_label": "GiB",
        "series": (
            Series(name="Q4_K_M", points=((4096, 18.0), (16384, 20.0), (65536, 26.0), (131072, 34.0))),
            Series(name="Q8_0", points=((4096, 33.0), (131072, 49.0))),
        ),
        "limit": limit,
        "limit_label": "RTX 4090 usable",
    }
    base.update(changes)
    return ChartSpec(**base)


def speed_spec(**changes: object) -> ChartSpec:
    base = {
        "kind": "speed_per_gpu",
        "title": "Decode speed",
        "x_label": "tok/s",
        "y_label": "",
        "bars": (("RTX 4090", 38.2), ("RTX 3090", 27.0), ("H100 SXM", 120.0)),
    }
    base.update(changes)
    return ChartSpec(**base)


def png_size(png: bytes) -> tuple[int, int]:
    assert png.startswith(PNG_SIGNATURE) and png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


@pytest.mark.parametrize("spec", [memory_spec(), speed_spec()], ids=["memory", "speed"])
def test_renders_a_small_png(spec):
    png = render_png(spec)
    assert png_size(png) == (int(WIDTH_IN * DPI), int(HEIGHT_IN * DPI))
    assert len(png) < 200_000
    assert b"Software" not in png and b"matplotlib" not in png  # no version or timestamp metadata


def test_equal_specs_return_the_cached_object():
    first = render_png(memory_spec())
    assert render_png(memory_spec()) is first


def test_output_is_deterministic_without_the_cache():
    spec = speed_spec(title="uncached")
    assert draw_png(spec) == draw_png(spec)  # the drawing itself, past the cache


@pytest.mark.parametrize(
    "other",
    [memory_spec(limit=40.0), memory_spec(limit=None), memory_spec(title="Other title"), speed_spec()],
    ids=["limit", "no-limit", "title", "kind"],
)
def test_a_different_spec_gives_different_bytes(other):
    assert render_png(other) != render_png(memory_spec())


@pytest.mark.parametrize(
    "spec",
    [
        memory_spec(series=(), limit=None),
        memory_spec(series=(Series(name="", points=()),)),
        memory_spec(title="Kosten $5 $ pro $h", limit_label="$$ broken $\\frac{", y_label="🟢 GiB"),
        memory_spec(series=(Series(name="big", points=((1024, 1.0), (1 << 20, 400.0))),)),
        speed_spec(bars=()),
        speed_spec(bars=(("same", 1.0), ("same", 2.0), ("$bad$ {x}", 0.0), ("🟢 Apple M3 Max", 7.5))),
    ],
    ids=["empty", "empty-series", "dollars-emoji", "wide-range", "no-bars", "odd-bars"],
)
def test_odd_specs_render_without_warnings(spec):
    assert render_png(spec).startswith(PNG_SIGNATURE)  # filterwarnings=error turns any warning into a failure


@pytest.mark.parametrize(
    ("tokens", "label"), [(4096, "4K"), (131072, "128K"), (1 << 20, "1M"), (1000, "1000"), (3 << 20, "3M")]
)
def test_tokens_label(tokens, label):
    assert tokens_label(tokens) == label


def test_cached_png_tells_whether_a_chart_is_ready():
    from bot.render.charts import cached_png

    spec = speed_spec(title="not drawn yet")
    assert cached_png(spec) is None
    png = render_png(spec)
    assert cached_png(spec) is png


@pytest.mark.parametrize(
    "spec",
    [
        speed_spec(bars=(("Radeon AI PRO R9700 32GB", 41.0), ("RTX 4090", 38.2)), y_label="GPU"),
        memory_spec(title="Mixtral 8x22B Instruct v0.1", y_label="GiB", x_label="Kontext (Tokens)"),
        memory_spec(series=(Series(name="Q8_0", points=((4096, 1800.0), (1048576, 2400.0))),)),
    ],
)
def test_every_label_stays_inside_the_picture(spec):
    fig = laid_out(spec)
    fig.canvas.draw()
    ax = fig.axes[0]
    frame = fig.bbox

    def shown(axis):  # matplotlib keeps labels of ticks outside the view; it does not draw them
        low, high = sorted(axis.get_view_interval())
        return [tick.label1 for tick in axis.get_major_ticks() if low <= tick.get_loc() <= high]

    texts = [*shown(ax.xaxis), *shown(ax.yaxis), ax.xaxis.label, ax.yaxis.label, ax.title]
    assert len(texts) > 5
    for text in texts:
        if text.get_visible() and text.get_text():
            box = text.get_window_extent()
            assert box.x0 >= frame.x0 and box.x1 <= frame.x1, text.get_text()
            assert box.y0 >= frame.y0 and box.y1 <= frame.y1, text.get_text()
