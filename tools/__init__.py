"""The tool contract: each tool the product serves, declared once, below both doors.

One module per tool (its arguments, its result, its handler, TOOL); registry.py lists them,
calling.py runs one call whichever door it came through. The MCP gateway and the REST API
only translate their transport to this contract and back.
"""
