"""The MCP server on the official SDK, over stdio and streamable HTTP."""
