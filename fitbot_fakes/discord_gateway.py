"""The fake Discord gateway: hello, identify and resume, heartbeats, zlib-stream frames, dispatches."""

from __future__ import annotations

import json
import uuid
import zlib
from typing import Any

from aiohttp import WSMsgType, web

from fitbot_fakes.discord_checks import APP_ID
from fitbot_fakes.discord_payloads import DiscordPayloads
from fitbot_fakes.discord_state import GatewayConn, GatewaySession


class DiscordGateway(DiscordPayloads):
    """The websocket side: sessions per shard, sequence numbers, replay on resume."""

    # ---- gateway

    def _session_for(self, data: dict[str, Any], shard_id: int | None) -> GatewaySession:
        if shard_id is None:
            guild_id = data.get("guild_id")
            shard_id = (int(guild_id) >> 22) % self.shards if guild_id and self.shards > 1 else 0
        candidates = [s for s in self._sessions.values() if (s.shard or [0])[0] == shard_id]
        if not candidates:
            raise RuntimeError(f"no identified gateway session for shard {shard_id}")
        return candidates[-1]

    async def _send(self, conn: GatewayConn, frame: dict[str, Any]) -> None:
        raw = json.dumps(frame)
        if conn.compressor is not None:
            await conn.ws.send_bytes(conn.compressor.compress(raw.encode()) + conn.compressor.flush(zlib.Z_SYNC_FLUSH))
        else:
            await conn.ws.send_str(raw)

    async def _send_dispatch(self, session: GatewaySession, event: str, data: Any) -> None:
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.frames.append(frame)
        if session.conn is not None and not session.conn.ws.closed:
            await self._send(session.conn, frame)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(timeout=1.0, max_msg_size=0)
        await ws.prepare(request)
        use_zlib = self.compress and request.query.get("compress") == "zlib-stream"
        conn = GatewayConn(ws, zlib.compressobj() if use_zlib else None)
        self.gateway_connections.append({"query": dict(request.query), "zlib": use_zlib})
        self._conns.add(conn)
        try:
            await self._send(
                conn,
                {"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}, "s": None, "t": None},
            )
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                self.gateway_frames.append(frame)
                self._changed.set()
                op, d = frame.get("op"), frame.get("d")
                if op == 1:
                    await self._send(conn, {"op": 11, "d": None, "s": None, "t": None})
                elif op == 2:
                    await self._identify(conn, d)
                elif op == 6:
                    await self._resume(conn, d)
        finally:
            self._conns.discard(conn)
            if conn.session is not None and conn.session.conn is conn:
                conn.session.conn = None
        return ws

    async def _identify(self, conn: GatewayConn, d: dict[str, Any]) -> None:
        if d.get("token") != self.token:
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        shard = d.get("shard")
        if self.shards > 1 and not shard:
            await conn.ws.close(code=4011, message=b"Sharding required.")
            return
        session = GatewaySession(uuid.uuid4().hex, shard, d, conn=conn)
        self._sessions[session.session_id] = session
        conn.session = session
        shard_id, count = shard or (0, 1)
        guilds = [g for g in self.guild_ids if (g >> 22) % count == shard_id]
        ready = {
            "v": 10,
            "user": self.bot_user,
            "guilds": [{"id": str(g), "unavailable": True} for g in guilds],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(APP_ID), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "auth": {},
        }
        if shard:
            ready["shard"] = shard
        await self._send_dispatch(session, "READY", ready)
        for g in guilds:
            await self._send_dispatch(session, "GUILD_CREATE", self.guild(g))
        self._changed.set()

    async def _resume(self, conn: GatewayConn, d: dict[str, Any]) -> None:
        session = self._sessions.get(d.get("session_id", ""))
        if session is None or d.get("token") != self.token:
            await self._send(conn, {"op": 9, "d": False, "s": None, "t": None})
            return
        session.conn, conn.session = conn, session
        for frame in session.frames:
            if frame["s"] > (d.get("seq") or 0):
                await self._send(conn, frame)
        await self._send_dispatch(session, "RESUMED", {})
