"""Chart rendering on its own small thread pool, shared by the adapters.

``asyncio.to_thread`` uses the loop's default executor, which other work (formerly Hugging Face
look-ups) can fill; a chart then waited for minutes behind someone else's slow request. Charts get
their own workers, answers have the service's, and hub look-ups ``catalog.hub.client``'s.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor

from bot.reply import ChartSpec, Series

CHART_WORKERS = 2
_pool = ThreadPoolExecutor(CHART_WORKERS, thread_name_prefix="fitbot-charts")
# one chart of each kind, drawn when an adapter starts
WARM_UP_CHARTS = (
    ChartSpec(kind="speed_per_gpu", title="-", x_label="-", y_label="-", bars=(("-", 1.0),)),
    ChartSpec(
        kind="memory_vs_context",
        title="-",
        x_label="-",
        y_label="-",
        series=(Series(name="-", points=((4096.0, 1.0), (8192.0, 2.0))),),
        limit=1.5,
        limit_label="-",
    ),
)


def warm_up_charts() -> Future[None]:
    """Draws a chart of each kind on a chart worker now: importing matplotlib and loading its fonts
    take about a second, which the first chart after start-up would otherwise wait for."""
    return _pool.submit(_draw_warm_up)


def _draw_warm_up() -> None:
    from bot.render.charts import render_png

    for spec in WARM_UP_CHARTS:
        render_png(spec)


async def render_chart(spec: ChartSpec) -> bytes:
    """The chart as PNG bytes: from the cache at once, else rendered on the chart workers."""
    from bot.render.charts import cached_png, render_png

    cached = cached_png(spec)
    if cached is not None:
        return cached
    return await asyncio.get_running_loop().run_in_executor(_pool, render_png, spec)
