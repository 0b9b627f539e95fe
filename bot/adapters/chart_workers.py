"""Chart rendering on its own small thread pool, shared by the adapters.

``asyncio.to_thread`` uses the loop's default executor, which other work (formerly Hugging Face
look-ups) can fill; a chart then waited for minutes behind someone else's slow request. Charts get
their own workers, answers have the service's, and hub look-ups ``catalog.hub``'s.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from bot.reply import ChartSpec

CHART_WORKERS = 2
_pool = ThreadPoolExecutor(CHART_WORKERS, thread_name_prefix="fitbot-charts")


async def render_chart(spec: ChartSpec) -> bytes:
    """The chart as PNG bytes: from the cache at once, else rendered on the chart workers."""
    from bot.render.charts import cached_png, render_png

    cached = cached_png(spec)
    if cached is not None:
        return cached
    return await asyncio.get_running_loop().run_in_executor(_pool, render_png, spec)
